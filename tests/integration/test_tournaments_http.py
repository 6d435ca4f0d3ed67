"""Tournaments over HTTP, in process (the embedded store, a SQLite archive migrated at the
start): a bot tournament of 8 entrants at tables of 4, created with the platform's API key
and played to its end by the director alone; its standings equal a recomputation from the
games' results as the API shows them, every table of a duplicate round played one deal
(the archive's seeds), and the organiser's refusals are problem+json."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from domain.tournament import Entrant, Round, Settings, Table, TableResult, standings
from service.app import create_app
from service.settings import Settings as ServiceSettings

pytestmark = pytest.mark.integration
API_KEY = "platform-key-0123456789abcdef"
PLATFORM = {"X-API-Key": API_KEY}
WAITS = 600  # looks at the tournament (0.05 s apart) before giving up on its end


def app_settings(tmp_path: Path) -> ServiceSettings:
    return ServiceSettings(
        database_url=f"sqlite+aiosqlite:///{tmp_path}/archive.sqlite3",
        migrate_on_start=True,
        log_format="json",
        api_keys=(API_KEY,),
        archive_interval=0.05,
    )


def problem(response: Any, status: int, code: str) -> None:
    assert response.status_code == status, response.text[:500]
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["code"] == code


def wait_for(client: TestClient, path: str, done) -> Any:
    for _ in range(WAITS):
        body = client.get(path).json()
        if done(body):
            return body
        time.sleep(0.05)
    raise AssertionError(f"{path} never got there: {body}")


def recomputed(tournament: dict, rounds: list[dict], games: dict[str, dict]) -> list[dict]:
    """The standings from the games' results as the API shows them (domain rules)."""
    settings = Settings(
        format=tournament["format"], deal_mode=tournament["deal_mode"],
        table_size=tournament["table_size"], rounds=tournament["rounds"],
    )  # fmt: skip
    entrants = [Entrant(id=e["entrant"], bot=e["bot"]) for e in tournament["entrants"]]
    played, results = [], []
    for r in rounds:
        tables = []
        for t in r["tables"]:
            deal = games[t["game_id"]]["seed"]
            tables.append(Table(number=t["table"], seats=tuple(t["seats"]), deal=deal))
            by_seat = sorted(games[t["game_id"]]["results"], key=lambda x: x["seat"])
            results.append(
                TableResult(
                    round=r["round"],
                    table=t["table"],
                    deal=deal,
                    seats=tuple(t["seats"]),
                    ranks=tuple(x["rank"] for x in by_seat),
                    scores=tuple(x["score"] for x in by_seat),
                )
            )
        played.append(Round(number=r["round"], tables=tuple(tables), byes=tuple(r["byes"])))
    return [
        {
            "position": s.position, "entrant": s.entrant, "points": s.points,
            "matchpoints": s.matchpoints, "buchholz": s.buchholz, "score": s.score,
        }
        for s in standings(settings, entrants, played, results)
    ]  # fmt: skip


def test_a_bot_tournament_plays_to_its_end_over_http(tmp_path: Path) -> None:
    app = create_app(app_settings(tmp_path))
    ask = {"name": "Bots cup", "table_size": 4, "places": 8, "rounds": 3, "bot_level": "random"}
    with TestClient(app) as client:
        problem(client.post("/v1/tournaments", json=ask), 401, "authentication_required")
        created = client.post(
            "/v1/tournaments", json=ask, headers={**PLATFORM, "Idempotency-Key": "c1"}
        )
        assert created.status_code == 201, created.text
        tid = created.json()["id"]
        again = client.post(
            "/v1/tournaments", json=ask, headers={**PLATFORM, "Idempotency-Key": "c1"}
        )
        assert again.json()["id"] == tid
        assert again.headers["idempotent-replayed"] == "true"
        assert tid in [t["id"] for t in client.get("/v1/tournaments").json()["tournaments"]]
        problem(
            client.post(f"/v1/tournaments/{tid}/pause", headers=PLATFORM),
            409,
            "tournament_not_running",
        )
        problem(client.post(f"/v1/tournaments/{tid}/start"), 401, "authentication_required")
        started = client.post(f"/v1/tournaments/{tid}/start", headers=PLATFORM)
        assert started.status_code == 200, started.text
        assert len(started.json()["entrants"]) == 8
        final = wait_for(client, f"/v1/tournaments/{tid}", lambda b: b["status"] == "finished")
        problem(
            client.post(f"/v1/tournaments/{tid}/stop", headers=PLATFORM), 409, "tournament_over"
        )
        rounds = client.get(f"/v1/tournaments/{tid}/rounds").json()["rounds"]
        assert [r["round"] for r in rounds] == [1, 2, 3]
        games = {}
        for r in rounds:
            for t in r["tables"]:
                path = f"/v1/archive/games/{t['game_id']}"
                games[t["game_id"]] = wait_for(client, path, lambda b: "seed" in b)
                assert t["result"]["ranks"] == [
                    x["rank"]
                    for x in sorted(games[t["game_id"]]["results"], key=lambda x: x["seat"])
                ]
            seeds = {games[t["game_id"]]["seed"] for t in r["tables"]}
            assert len(r["tables"]) == 2
            assert len(seeds) == 1, "a duplicate round deals one deck to every table"
        assert len({g["seed"] for g in games.values()}) == 3
        shown = client.get(f"/v1/tournaments/{tid}/standings").json()
        assert shown["status"] == "finished"
        assert shown["standings"] == recomputed(final, rounds, games)
        bot = final["entrants"][0]["entrant"]
        table = client.get(f"/v1/tournaments/{tid}/players/{bot}/table").json()
        assert table["game_id"] is None  # finished: no table


def test_refusals_are_problems(tmp_path: Path) -> None:
    with TestClient(create_app(app_settings(tmp_path))) as client:
        problem(client.get("/v1/tournaments/" + "0" * 20), 404, "tournament_not_found")
        problem(client.get("/v1/tournaments/nope/rounds"), 404, "tournament_not_found")
        bad = {"name": "x", "table_size": 4, "places": 3}
        problem(
            client.post("/v1/tournaments", json=bad, headers=PLATFORM), 400, "invalid_tournament"
        )
        ask = {"name": "Invited", "places": 4, "invited": ["ann"]}
        tid = client.post("/v1/tournaments", json=ask, headers=PLATFORM).json()["id"]
        url = f"/v1/tournaments/{tid}/registrations"
        problem(client.post(url, json={"player_id": "bob"}, headers=PLATFORM), 403, "not_invited")
        problem(client.post(url, json={}, headers=PLATFORM), 400, "invalid_tournament")
        ok = client.post(url, json={"player_id": "ann"}, headers=PLATFORM)
        assert ok.json()["registered"] == ["ann"]
        gone = client.post(
            f"/v1/tournaments/{tid}/withdraw", json={"player_id": "ann"}, headers=PLATFORM
        )
        assert gone.json()["registered"] == []
        es = client.get("/v1/tournaments/" + "0" * 20, headers={"Accept-Language": "es"})
        assert es.json()["detail"] == "No hay ningún torneo con este id."
        problem(client.get("/v1/tournaments?cursor=%%%"), 400, "invalid_cursor")
