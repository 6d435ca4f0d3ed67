"""The service as it starts with no configuration: the shared processes of tests/conftest.py.

`redis_server_url` sets only TEN_REDIS_URL; `embedded_server_url` sets nothing at all. Both
must create games, accept actions, score and stream with the documented defaults (a
regression test: `Settings.from_env` once passed msgspec member descriptors as defaults,
which made every request with a body a 500).
"""

from __future__ import annotations

import httpx
import pytest


@pytest.mark.parametrize("fixture", ["redis_server_url", "embedded_server_url"])
def test_zero_configuration_serves_a_game(request: pytest.FixtureRequest, fixture: str) -> None:
    base = request.getfixturevalue(fixture)
    with httpx.Client(base_url=base, timeout=10) as client:
        created = client.post("/v1/games", json={"players": [{"name": "Ann"}], "deck": ["R1"]})
        assert created.status_code == 201, created.text
        game = created.json()
        token = game["seats"][0]["token"]
        acted = client.post(
            f"/v1/games/{game['id']}/actions",
            json={"type": "draw"},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert acted.status_code == 200, acted.text
        scored = client.post("/v1/scores", json={"cards": ["R1", "R2"]})
        assert scored.status_code == 200, scored.text
        big = client.post("/v1/scores", content=b" " * (64 * 1024 + 1))
        assert big.status_code == 413, big.text
        with client.stream("GET", f"/v1/games/{game['id']}/events/stream") as stream:
            assert stream.status_code == 200
            assert "event: card_drawn" in stream.iter_lines()
