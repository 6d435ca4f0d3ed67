"""The one boundary over HTTP, on a capability built after games: a tournament's name goes
through the text policy (400 `invalid_text`, nothing created), and a player's tournaments
count in the one quota mechanism (429 `too_many_open_tournaments` with Retry-After, nothing
created; the platform exempt), so no player fills the listing's first page."""

from __future__ import annotations

import time
from pathlib import Path

import jwt
from litestar.testing import TestClient

from service.core.settings import (
    ArchiveSettings,
    IdentitySettings,
    ObservabilitySettings,
    QuotaSettings,
    Settings,
)
from service.entrypoints.api.app import create_app

API_KEY = "platform-key-0123456789abcdef"
SECRET = "s" * 32


def settings(tmp_path: Path) -> Settings:
    return Settings(
        archive=ArchiveSettings(
            database_url=f"sqlite+aiosqlite:///{tmp_path}/archive.sqlite3", migrate_on_start=True
        ),
        identity=IdentitySettings(
            api_keys=(API_KEY,), jwt_secret=SECRET, jwt_issuer="platform", jwt_audience="ten"
        ),
        quotas=QuotaSettings(max_open_tournaments=3),
        observability=ObservabilitySettings(log_format="json"),
    )


def player(sub: str) -> dict[str, str]:
    claims = {"sub": sub, "iss": "platform", "aud": "ten", "exp": int(time.time()) + 3600}
    token = jwt.encode(claims, SECRET, algorithm="HS256")
    return {"Authorization": f"Bearer {token}"}


def test_tournament_names_go_through_the_text_policy(tmp_path: Path) -> None:
    with TestClient(create_app(settings(tmp_path))) as client:
        for name in ("Ann\x00", "\u202eCup", "Cup\nnight", "\x1b[31mCup", " ", "\u200b"):
            made = client.post("/v1/tournaments", json={"name": name}, headers=player("ann"))
            assert made.status_code == 400, (name, made.text)
            assert made.json()["code"] == "invalid_text"
        assert client.get("/v1/tournaments").json()["tournaments"] == []
        kept = client.post("/v1/tournaments", json={"name": " Cu\u0301p "}, headers=player("ann"))
        assert kept.status_code == 201, kept.text
        assert kept.json()["name"] == "C\u00fap"  # NFC, trimmed


def test_a_player_cannot_fill_the_tournament_listing(tmp_path: Path) -> None:
    with TestClient(create_app(settings(tmp_path))) as client:
        ann = player("ann")
        for n in range(3):
            made = client.post("/v1/tournaments", json={"name": f"Cup {n}"}, headers=ann)
            assert made.status_code == 201, made.text
        for n in range(3, 6):
            refused = client.post("/v1/tournaments", json={"name": f"Cup {n}"}, headers=ann)
            assert refused.status_code == 429, refused.text
            assert refused.json()["code"] == "too_many_open_tournaments"
            assert int(refused.headers["retry-after"]) >= 1
        platform = {"X-API-Key": API_KEY}
        for n in range(5):
            made = client.post("/v1/tournaments", json={"name": f"League {n}"}, headers=platform)
            assert made.status_code == 201, made.text
        page = client.get("/v1/tournaments").json()["tournaments"]
        assert sum(t["name"].startswith("Cup") for t in page) == 3


def test_an_anonymous_creator_of_a_game_that_starts_at_once_may_abort_it(tmp_path: Path) -> None:
    """Every seat taken at create: the game starts at once, and its anonymous creator gets
    the host's credential as for an open table (the host may abort a live game)."""
    open_settings = Settings(
        archive=ArchiveSettings(
            database_url=f"sqlite+aiosqlite:///{tmp_path}/archive.sqlite3", migrate_on_start=True
        )
    )
    with TestClient(create_app(open_settings)) as client:
        made = client.post(
            "/v1/games", json={"players": [{"name": "Ann"}, {"name": "Bot", "bot": "basic"}]}
        )
        assert made.status_code == 201, made.text
        game = made.json()
        assert game["status"] == "active"
        seat = {"Authorization": f"Bearer {game['seats'][0]['token']}"}
        refused = client.post(f"/v1/games/{game['id']}/abort", headers=seat)
        assert refused.status_code == 403  # a seat's token is no host's
        host = {"Authorization": f"Bearer {game['host_token']}"}
        aborted = client.post(f"/v1/games/{game['id']}/abort", headers=host)
        assert aborted.status_code == 200, aborted.text
        assert client.get(f"/v1/games/{game['id']}").json()["status"] == "aborted"
