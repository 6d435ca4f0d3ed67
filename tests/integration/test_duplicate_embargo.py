"""Secrets across games (`service.tournaments.secrecy`): a duplicate round of a tournament over HTTP, in
process (the embedded store; a SQLite archive, and PostgreSQL). Six entrants at tables of two, round robin,
one round: ann and bob (humans, at two tables) and four bots (the third table, played to its
end at once), every table dealt the same pile.

While a human's table of the deal is still being played, every read path of every other
table's game is refused to everyone but the platform (`403 game_embargoed`): its view,
events, stream, odds, review, archived record, events and replay, the archive's listing,
the tournament's rounds (the table left out) and standings (its result not counted). Its
own players still play and follow their live game (view, events, odds). A finished game of
the deal is not archived at all while it is secret (the archive is everyone's, and feeds the
stats, the leaderboard and the ratings): its archive job waits, even for the platform. Once
every table finished, everything is archived and readable."""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jwt
import pytest
from litestar.testing import TestClient

from domain.game.fairness import commitment
from service.core.settings import ArchiveSettings, IdentitySettings, ObservabilitySettings, Settings
from service.entrypoints.api.app import create_app
from service.entrypoints.record_check import check_one
from tests.support.archive import pg_database

API_KEY = "platform-key-0123456789abcdef"
SECRET = "a-secret-of-the-platform-32-bytes-or-more"
ISSUER, AUDIENCE = "https://platform.example", "ten"
PLATFORM = {"X-API-Key": API_KEY}
WAITS = 600  # looks (0.05 s apart) before giving up on a fact
TOURNAMENT = {
    "name": "Duplicate cup",
    "table_size": 2,
    "places": 6,
    "rounds": 1,
    "format": "round_robin",
    "deal_mode": "duplicate",
    "bot_level": "random",
    "clock": {"type": "deadline", "hours": 24},  # nobody times out during the test
}


def player(sub: str) -> dict[str, str]:
    # made at import (the module's constants): valid for the whole run, however long it is
    claims = {"sub": sub, "iss": ISSUER, "aud": AUDIENCE, "exp": int(time.time()) + 30 * 86400}
    return {"Authorization": f"Bearer {jwt.encode(claims, SECRET, algorithm='HS256')}"}


ANN, BOB, CAT = player("ann"), player("bob"), player("cat")  # cat: no entrant
ANYONE: dict[str, str] = {}


def settings(database_url: str) -> Settings:
    return Settings(
        archive=ArchiveSettings(database_url=database_url, migrate_on_start=True, interval=0.05),
        observability=ObservabilitySettings(log_format="json"),
        identity=IdentitySettings(
            api_keys=(API_KEY,), jwt_secret=SECRET, jwt_issuer=ISSUER, jwt_audience=AUDIENCE
        ),
    )


def wait_for(what: str, fact: Callable[[], Any]) -> Any:
    for _ in range(WAITS):
        found = fact()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"never: {what}")


# every read of one game, by path: (name, method, path, whether it is an archived read)
def reads(game: str) -> list[tuple[str, str]]:
    return [
        ("view", f"/v1/games/{game}"),
        ("events", f"/v1/games/{game}/events"),
        ("stream", f"/v1/games/{game}/events/stream"),
        ("odds", f"/v1/games/{game}/odds"),
        ("review", f"/v1/games/{game}/review"),
        ("archived", f"/v1/archive/games/{game}"),
        ("archived events", f"/v1/archive/games/{game}/events"),
        ("replay", f"/v1/archive/games/{game}/replay"),
        ("record", f"/v1/archive/games/{game}/record"),
    ]


def exported(client: TestClient, tid: str) -> dict[str, dict[str, Any]]:
    """The tournament's games in the archive's bulk export (the platform's), by id; each
    record replays."""
    response = client.get(f"/v1/archive/export?tournament_id={tid}", headers=PLATFORM)
    assert response.status_code == 200, response.text
    *records, end = response.content.splitlines()
    assert json.loads(end) == {"type": "end", "count": len(records), "complete": True}
    for line in records:
        assert check_one(line) is None
    return {r["id"]: r for r in map(json.loads, records)}


def shown_tables(client: TestClient, tid: str) -> list[dict[str, Any]]:
    return client.get(f"/v1/tournaments/{tid}/rounds", headers=PLATFORM).json()["rounds"][0][
        "tables"
    ]


def held(client: TestClient) -> int:
    """How many times the archiver looked at a game and left it waiting for its deal."""
    found = re.search(
        r'^ten_jobs_total\{outcome="later",queue="archive"\} (\S+)$',
        client.get("/metrics").text,
        re.MULTILINE,
    )
    return 0 if found is None else int(float(found.group(1)))


def not_archived(client: TestClient, game: str) -> None:
    """Not in the archive, for anyone: not the platform either."""
    for who in (PLATFORM, ANYONE):
        response = client.get(f"/v1/archive/games/{game}", headers=who)
        assert response.status_code == 404, response.text
        assert response.json()["code"] == "archived_game_not_found"
        listed = client.get("/v1/archive/games?limit=200", headers=who).json()["items"]
        assert game not in [g["id"] for g in listed]


def counted_games(client: TestClient, player_id: str) -> int:
    """The player's archived games, ranked or not (their stats)."""
    found = client.get(f"/v1/players/{player_id}/stats?ranked=all").json()
    assert "games" in found, found
    return found["games"]


def embargoed(response: Any, where: str) -> None:
    assert response.status_code == 403, f"{where}: {response.status_code} {response.text[:300]}"
    assert response.headers["content-type"].startswith("application/problem+json"), where
    assert response.json()["code"] == "game_embargoed", where


def status(client: TestClient, path: str, headers: dict[str, str]) -> int:
    """A read's status; a stream is read to its end (a game that ended ends its stream)."""
    if path.endswith("/stream"):
        with client.stream("GET", path, headers=headers) as response:
            if response.status_code == 200:
                assert "game_finished" in response.read().decode()
            return response.status_code
    return client.get(path, headers=headers).status_code


def refused_everywhere(client: TestClient, tid: str, game: str, who: dict[str, str]) -> None:
    """Every read of `game`, and the tournament's and the archive's listings, by `who` (the
    archive's reads find nothing to refuse: a secret game is not archived, 404)."""
    for name, path in reads(game):
        response = client.get(path, headers=who)
        if path.startswith("/v1/archive/"):
            assert response.json()["code"] == "archived_game_not_found", (name, response.text)
            continue
        embargoed(response, f"{name} {path} {who.keys()}")
    listed = client.get("/v1/archive/games?limit=200", headers=who).json()["items"]
    assert game not in [g["id"] for g in listed]
    tables = client.get(f"/v1/tournaments/{tid}/rounds", headers=who).json()["rounds"][0]
    assert game not in [t["game_id"] for t in tables["tables"]]


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_no_table_of_a_duplicate_deal_is_readable_until_the_deal_is_played_everywhere(
    tmp_path: Path, database: str
) -> None:
    with contextlib.ExitStack() as stack:
        if database == "postgresql":
            url = stack.enter_context(pg_database(migrate=False)).url
        else:
            url = f"sqlite+aiosqlite:///{tmp_path}/archive.sqlite3"
        play_a_duplicate_round(stack.enter_context(TestClient(create_app(settings(url)))))


def play_a_duplicate_round(client: TestClient) -> None:
    tid = client.post("/v1/tournaments", json=TOURNAMENT, headers=PLATFORM).json()["id"]
    for pid in ("ann", "bob"):
        url = f"/v1/tournaments/{tid}/registrations"
        assert client.post(url, json={"player_id": pid}, headers=PLATFORM).status_code == 200
    assert client.post(f"/v1/tournaments/{tid}/start", headers=PLATFORM).status_code == 200

    def played_by_bots() -> dict | None:
        rounds = client.get(f"/v1/tournaments/{tid}/rounds", headers=PLATFORM).json()
        tables = rounds["rounds"][0]["tables"] if rounds["rounds"] else []
        return next((t for t in tables if t["result"] is not None), None)

    tables = {}
    bots = wait_for("the bots' table's result", played_by_bots)
    for t in client.get(f"/v1/tournaments/{tid}/rounds", headers=PLATFORM).json()["rounds"][0][
        "tables"
    ]:
        tables["ann" if "ann" in t["seats"] else "bob" if "bob" in t["seats"] else "bots"] = t
    assert len(tables) == 3, tables
    assert tables["bots"] == bots
    ann_game, bob_game, bot_game = (tables[k]["game_id"] for k in ("ann", "bob", "bots"))
    for game in (ann_game, bob_game):
        wait_for(f"{game} dealt", lambda g=game: client.get(f"/v1/games/{g}").status_code != 404)
    # the bots' game ended; the archiver looked at it and left it waiting for the deal
    wait_for("the bots' game held", lambda: held(client) >= 1)
    not_archived(client, bot_game)
    assert exported(client, tid) == {}  # nor exported

    # the bots' finished game, and each human's live game, to everyone but the platform
    for who in (ANYONE, CAT, ANN, BOB):
        refused_everywhere(client, tid, bot_game, who)
    for game, others in ((ann_game, (ANYONE, CAT, BOB)), (bob_game, (ANYONE, CAT, ANN))):
        for who in others:
            refused_everywhere(client, tid, game, who)
    standings = client.get(f"/v1/tournaments/{tid}/standings").json()["standings"]
    assert all(row["points"] == 0 and row["score"] == 0 for row in standings), standings
    told = client.get(f"/v1/tournaments/{tid}/standings", headers=PLATFORM).json()
    assert any(row["points"] > 0 for row in told["standings"])

    # the platform reads everything
    for game in (bot_game, ann_game, bob_game):
        for name, path in reads(game):
            if name in ("review", "archived", "archived events", "replay", "record") or (
                name == "stream" and game != bot_game
            ):
                continue  # not archived yet; a live game's stream never ends
            assert status(client, path, PLATFORM) in (200, 202), (name, path)
    shown = client.get(f"/v1/tournaments/{tid}/rounds", headers=PLATFORM).json()
    assert len(shown["rounds"][0]["tables"]) == 3
    # one deal, one committed seed, no seat's entropy; the bots' ended game shows no seed yet
    fairness = [
        client.get(f"/v1/games/{g}", headers=PLATFORM).json()["fairness"]
        for g in (bot_game, ann_game, bob_game)
    ]
    assert len({f["commitment"] for f in fairness}) == 1
    assert all(f["entropy"] == ["", ""] and "seed" not in f for f in fairness)

    # each human plays and follows their own live game, and sees their own table only
    for who, game in ((ANN, ann_game), (BOB, bob_game)):
        view = client.get(f"/v1/games/{game}", headers=who)
        assert view.status_code == 200, view.text
        assert view.json()["seat"] is not None
        assert client.get(f"/v1/games/{game}/events", headers=who).status_code == 200
        assert client.get(f"/v1/games/{game}/odds", headers=who).status_code == 200
        mine = client.get(f"/v1/tournaments/{tid}/rounds", headers=who).json()
        assert [t["game_id"] for t in mine["rounds"][0]["tables"]] == [game]

    # ann leaves (a bot plays her seat to its end): her game ends, bob's is still played
    resigned = client.post(f"/v1/games/{ann_game}/actions", json={"type": "resign"}, headers=ANN)
    assert resigned.status_code == 200, resigned.text
    wait_for(
        "ann's game ended",
        lambda: client.get(f"/v1/games/{ann_game}", headers=ANN).json()["status"] == "finished",
    )
    wait_for("ann's game held", lambda: held(client) >= 2)
    not_archived(client, ann_game)
    assert exported(client, tid) == {}
    assert counted_games(client, "ann") == 0  # her result counts nowhere yet
    assert client.get(f"/v1/games/{ann_game}", headers=ANN).status_code == 200  # her own
    for who in (ANN, PLATFORM):  # ended, but its seed is bob's pile: not shown yet
        assert "seed" not in client.get(f"/v1/games/{ann_game}", headers=who).json()["fairness"]
    for name, path in reads(ann_game)[4:5]:  # its review: the whole pile
        embargoed(client.get(path, headers=ANN), f"ann's own {name}")
    for who in (ANYONE, CAT, BOB):
        refused_everywhere(client, tid, ann_game, who)
    # bob's game: every other table of the deal has finished, nothing left to spoil
    assert client.get(f"/v1/games/{bob_game}", headers=CAT).status_code == 200

    # bob leaves too: the deal has been played everywhere, every read is anyone's
    resigned = client.post(f"/v1/games/{bob_game}/actions", json={"type": "resign"}, headers=BOB)
    assert resigned.status_code == 200, resigned.text
    wait_for(
        "the tournament's end",
        lambda: client.get(f"/v1/tournaments/{tid}").json()["status"] == "finished",
    )
    for game in (ann_game, bob_game, bot_game):
        path = f"/v1/archive/games/{game}"
        wait_for(f"{game} archived", lambda p=path: client.get(p, headers=PLATFORM).is_success)
        for who in (ANYONE, CAT, ANN, BOB):
            for name, read in reads(game):
                assert status(client, read, who) in (200, 202), (name, read, who.keys())
    listed = client.get("/v1/archive/games?limit=200").json()["items"]
    assert {ann_game, bob_game, bot_game} <= {g["id"] for g in listed}
    for game in (ann_game, bob_game, bot_game):  # the deal played everywhere: seed revealed
        fair = client.get(f"/v1/games/{game}").json()["fairness"]
        assert commitment(fair["seed"]) == fair["commitment"]
    records = exported(client, tid)
    assert set(records) == {ann_game, bob_game, bot_game}
    for t in shown_tables(client, tid):
        assert records[t["game_id"]]["tournament"] == {"id": tid, "round": 1, "table": t["table"]}
        assert records[t["game_id"]]["clock"] == TOURNAMENT["clock"] | {"takeover_after": 3}
        # the archive keeps both: one game's record and its archived view say them too
        path = f"/v1/archive/games/{t['game_id']}"
        one = client.get(f"{path}/record", headers=PLATFORM).json()
        kept = client.get(path, headers=PLATFORM).json()
        for context in ("tournament", "clock"):
            assert one[context] == kept[context] == records[t["game_id"]][context], context
    assert counted_games(client, "ann") == counted_games(client, "bob") == 1
    shown = client.get(f"/v1/tournaments/{tid}/rounds").json()["rounds"][0]["tables"]
    assert len(shown) == 3
    assert all(t["result"] is not None for t in shown)
    standings = client.get(f"/v1/tournaments/{tid}/standings").json()
    assert standings == client.get(f"/v1/tournaments/{tid}/standings", headers=PLATFORM).json()
