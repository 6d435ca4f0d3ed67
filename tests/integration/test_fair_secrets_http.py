"""No read path shows a live game's seed, its deal's seed or its pile, now that every game
commits to its seed and ends by revealing it: in process (the embedded store, a SQLite
archive), every GET route of the API under /v1 is read with a live lobby game's id (dealt
from the seats' entropy) and a live duplicate tournament's id, by anyone, a player, a seat
and the platform; the listings too. The game's event stream, read whole while live, is
tests/e2e/test_secrets.py's (a stream of a live game does not end in process)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import jwt
from litestar.testing import TestClient

from domain.game.fairness import deal_seed
from service.core.settings import ArchiveSettings, IdentitySettings, ObservabilitySettings, Settings
from service.entrypoints.api.app import create_app
from tests.support.secrets import SECRET_FIELDS, field_names

API_KEY = "platform-key-0123456789abcdef"
SECRET = "a-secret-of-the-platform-32-bytes-or-more"
PLATFORM = {"X-API-Key": API_KEY}
TOURNAMENT = {
    "name": "Duplicate cup", "table_size": 2, "places": 4, "rounds": 1,
    "format": "round_robin", "deal_mode": "duplicate", "bot_level": "random",
    "clock": {"type": "deadline", "hours": 24},
}  # fmt: skip


def player(sub: str) -> dict[str, str]:
    claims = {"sub": sub, "iss": "platform", "aud": "ten", "exp": int(time.time()) + 86400}
    return {"Authorization": f"Bearer {jwt.encode(claims, SECRET, algorithm='HS256')}"}


IDENTITY = IdentitySettings(
    api_keys=(API_KEY,), jwt_secret=SECRET, jwt_issuer="platform", jwt_audience="ten"
)


def settings(tmp_path: Path) -> Settings:
    url = f"sqlite+aiosqlite:///{tmp_path}/archive.sqlite3"
    archive = ArchiveSettings(database_url=url, migrate_on_start=True)  # read: it has tables
    return Settings(
        archive=archive, identity=IDENTITY, observability=ObservabilitySettings(log_format="json")
    )


def wait_for(fact: Callable[[], bool]) -> None:
    for _ in range(600):  # looks 0.05 s apart
        if fact():
            return
        time.sleep(0.05)
    raise AssertionError("never happened")


def secrets_of(client: TestClient, game: str) -> list[bytes]:
    """What no answer may hold while `game` is live: its seed, its deal's seed, the order of
    the pile's next cards (as a JSON list, and run together)."""
    record = client.blocking_portal.call(client.app.state.service.store.load, game)
    state = record.state
    assert state is not None
    assert state.phase != "finished"
    assert state.fairness is not None
    pile = list(state.draw_pile[:6])
    return [
        state.seed.encode(),
        deal_seed(state.seed, state.fairness.entropy).encode(),
        json.dumps(pile).encode(),
        json.dumps(pile, separators=(",", ":")).encode(),
        "".join(pile).encode(),
    ]


def paths(game: str, tournament: str) -> list[str]:
    """Every GET route under /v1 but the streams, its parameters filled."""
    values = {"game_id": game, "tournament_id": tournament, "player_id": "ann"}
    found = ["/v1/games?player_id=ann", "/v1/archive/games?player_id=ann"]
    for route in create_app(Settings()).routes:
        if "GET" not in getattr(route, "methods", ()) or not route.path.startswith("/v1"):
            continue
        if route.path.endswith("/stream"):
            continue
        found.append(re.sub(r"\{(\w+):\w+\}", lambda m: values.get(m.group(1), "x"), route.path))
    return found


def test_no_read_path_shows_a_live_games_seed_or_pile(tmp_path: Path) -> None:
    with TestClient(create_app(settings(tmp_path))) as client:
        seats = [{"player_id": "ann"}, {"open": True}, {"bot": "basic"}]
        table = client.post("/v1/games", json={"players": seats}, headers=player("ann")).json()
        game = table["id"]
        ann = client.post(
            f"/v1/games/{game}/seats", json={"entropy": "ann's"}, headers=player("ann")
        )
        assert ann.status_code == 201, ann.text
        joined = client.post(
            f"/v1/games/{game}/seats", json={"entropy": "bob"}, headers=player("bob")
        )
        assert joined.status_code == 201, joined.text
        seat = {"Authorization": f"Bearer {joined.json()['token']}"}
        tid = client.post("/v1/tournaments", json=TOURNAMENT, headers=PLATFORM).json()["id"]
        for pid in ("ann", "bob"):
            url = f"/v1/tournaments/{tid}/registrations"
            assert client.post(url, json={"player_id": pid}, headers=PLATFORM).is_success
        assert client.post(f"/v1/tournaments/{tid}/start", headers=PLATFORM).is_success
        tables = client.get(f"/v1/tournaments/{tid}/rounds", headers=PLATFORM).json()
        duplicates = [t["game_id"] for t in tables["rounds"][0]["tables"] if "ann" in t["seats"]]
        secrets = secrets_of(client, game)
        for other in duplicates:  # a human's table of the deal: live (no clock runs out)
            wait_for(lambda o=other: client.get(f"/v1/games/{o}", headers=PLATFORM).is_success)
            secrets += secrets_of(client, other)
        every = paths(game, tid) + [p for d in duplicates for p in paths(d, tid)[2:]]
        read = 0
        for path in every:
            for who in ({}, player("ann"), seat, PLATFORM):
                answer = client.get(path, headers=who)
                assert answer.status_code < 500, (path, answer.text)
                for secret in secrets:
                    assert secret not in answer.content, (path, secret)
                # a JSON Schema (/v1/schemas/...) names the fields of a record, an ended
                # game's `seed` among them, and holds no value: its values are checked above
                schema = path.startswith("/v1/schemas/")
                for document in [] if schema else documents(answer):
                    names = set(field_names(document))
                    assert not names & SECRET_FIELDS, (path, names & SECRET_FIELDS)
                read += 1
        assert read > 100


def documents(answer: httpx.Response) -> list[Any]:
    """The JSON documents of an answer: one, a line each for NDJSON, none for other types."""
    kind = answer.headers.get("content-type", "").split(";")[0]
    if kind == "application/x-ndjson":
        return [json.loads(line) for line in answer.text.splitlines() if line]
    return [answer.json()] if kind.endswith("json") else []
