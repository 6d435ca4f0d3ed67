"""Tournaments over HTTP, in process (the embedded store, a SQLite archive migrated at the
start): a bot tournament of 8 entrants at tables of 4, created with the platform's API key
and played to its end by the director alone; its standings equal a recomputation from the
games' results as the API shows them, every table of a duplicate round played one deal
(the archive's seeds), and the organiser's refusals are problem+json."""

from __future__ import annotations

import contextlib
import itertools
import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from service.core.settings import (
    ArchiveSettings,
    IdentitySettings,
    ObservabilitySettings,
    RedisSettings,
)
from service.core.settings import Settings as ServiceSettings
from service.entrypoints.api.app import create_app
from tests.support.archive import in_process_replicas, pg_database
from tests.support.tournaments import recomputed

API_KEY = "platform-key-0123456789abcdef"
PLATFORM = {"X-API-Key": API_KEY}
WAITS = 600  # looks at the tournament (0.05 s apart) before giving up on its end


def app_settings(
    tmp_path: Path, redis_url: str | None = None, database_url: str | None = None
) -> ServiceSettings:
    return ServiceSettings(
        archive=ArchiveSettings(
            database_url=database_url or f"sqlite+aiosqlite:///{tmp_path}/archive.sqlite3",
            migrate_on_start=True,
            interval=0.05,
        ),
        redis=RedisSettings(url=redis_url),
        observability=ObservabilitySettings(log_format="json"),
        identity=IdentitySettings(api_keys=(API_KEY,)),
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


def streamed(client: TestClient, path: str, **headers: str) -> list[tuple[str, dict]]:
    """The (id, tournament) of each `tournament` event of a stream, read to its end."""
    found, event_id = [], None
    with client.stream("GET", path, headers=headers) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("id: "):
                event_id = line[4:]
            elif line.startswith("data: "):
                found.append((event_id, json.loads(line[6:])))
    return found


def shown_game(game: dict) -> tuple[str, list[tuple[int, int]]]:
    """A game as the archive's API shows it: its seed, (rank, score) per seat."""
    by_seat = sorted(game["results"], key=lambda x: x["seat"])
    return game["seed"], [(x["rank"], x["score"]) for x in by_seat]


def replicas(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest, database_url: str | None = None
):
    """(the client the test drives, the client it reads from): one app on the embedded
    store, or two on one Redis database of the test's own (the archive: SQLite, or the
    database at `database_url`)."""
    return in_process_replicas(
        kind, lambda url: app_settings(tmp_path, url, database_url), request, "ten:tournament*"
    )


@pytest.mark.parametrize("kind", ["memory", "redis"])
def test_a_bot_tournament_plays_to_its_end_over_http(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """On Redis two replicas serve it: the second one is read, and both directors run."""
    ask = {"name": "Bots cup", "table_size": 4, "places": 8, "rounds": 3, "bot_level": "random"}
    with replicas(kind, tmp_path, request) as (client, other):
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
        final = wait_for(other, f"/v1/tournaments/{tid}", lambda b: b["status"] == "finished")
        problem(
            client.post(f"/v1/tournaments/{tid}/stop", headers=PLATFORM), 409, "tournament_over"
        )
        rounds = other.get(f"/v1/tournaments/{tid}/rounds").json()["rounds"]
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
        assert shown["standings"] == recomputed(final, rounds, lambda i: shown_game(games[i]))
        seen = streamed(other, f"/v1/tournaments/{tid}/events/stream")
        # ended: sent once, as it is now (a version after `final` when the director's save
        # that clears the pending `tournament_finished` webhook came between the two reads)
        assert len(seen) == 1
        assert seen[0][1]["status"] == "finished"
        assert seen[0][1]["version"] >= final["version"]
        assert seen[0][0] == str(seen[0][1]["version"])
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
        for field, by in itertools.product(("standings_by", "ranked_by"), ("luck", 1, None)):
            wrong = client.post("/v1/tournaments", json={"name": "x", field: by}, headers=PLATFORM)
            problem(wrong, 400, "invalid_request")
            assert field in wrong.json()["detail"]
        es = client.get("/v1/tournaments/" + "0" * 20, headers={"Accept-Language": "es"})
        assert es.json()["detail"] == "No hay ningún torneo con este id."
        problem(client.get("/v1/tournaments?cursor=%%%"), 400, "invalid_cursor")


def test_the_stream_follows_a_tournament_from_registration_to_its_end(tmp_path: Path) -> None:
    ask = {"name": "Followed", "table_size": 2, "places": 2, "rounds": 2, "bot_level": "random"}
    with TestClient(create_app(app_settings(tmp_path))) as client:
        problem(
            client.get("/v1/tournaments/" + "0" * 20 + "/events/stream"),
            404,
            "tournament_not_found",
        )
        tid = client.post("/v1/tournaments", json=ask, headers=PLATFORM).json()["id"]
        client.post(
            f"/v1/tournaments/{tid}/registrations", json={"player_id": "ann"}, headers=PLATFORM
        )
        client.post(f"/v1/tournaments/{tid}/stop", headers=PLATFORM)
        seen = streamed(client, f"/v1/tournaments/{tid}/events/stream")
        assert [(b["status"], b["registered"]) for _, b in seen] == [("stopped", ["ann"])]
        again = streamed(
            client, f"/v1/tournaments/{tid}/events/stream", **{"Last-Event-ID": seen[0][0]}
        )
        assert again == []  # nothing after the last version seen
        live = client.post("/v1/tournaments", json=ask, headers=PLATFORM).json()["id"]
        client.post(f"/v1/tournaments/{live}/start", headers=PLATFORM)
        seen = streamed(client, f"/v1/tournaments/{live}/events/stream")  # from its start on
        versions = [b["version"] for _, b in seen]
        assert versions == sorted(set(versions))
        assert seen[-1][1]["status"] == "finished"


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text)


@pytest.mark.parametrize("kind", ["memory", "redis"])
def test_a_tournament_starts_itself_at_its_time_and_waits_its_round_interval(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Bad times are refused and create nothing; a tournament created with `starts_at` a
    second ahead starts itself (on either replica) no sooner, and its second round's games
    are dealt no sooner than `round_interval` after the first round's games ended."""
    ask = {"name": "On time", "table_size": 2, "places": 2, "rounds": 2, "bot_level": "random"}
    with replicas(kind, tmp_path, request) as (client, other):
        for bad in (
            {"starts_at": "2001-01-01T00:00:00Z"},  # past
            {"starts_at": (datetime.now(UTC) + timedelta(days=31)).isoformat()},  # too far
        ):
            refused = client.post("/v1/tournaments", json={**ask, **bad}, headers=PLATFORM)
            problem(refused, 400, "invalid_tournament")
            assert "starts_at" in refused.json()["detail"]
        for bad in (
            {"starts_at": "2030-01-01T00:00:00"},  # no offset
            {"round_interval": 3601},
            {"round_interval": -1},
            {"clock": {"type": "bank", "initial_seconds": 0}},
        ):
            refused = client.post("/v1/tournaments", json={**ask, **bad}, headers=PLATFORM)
            assert refused.status_code == 400, refused.text
            assert refused.headers["content-type"].startswith("application/problem+json")
        assert client.get("/v1/tournaments").json()["tournaments"] == []  # nothing made
        soon = datetime.now(UTC) + timedelta(seconds=1)
        body = {**ask, "starts_at": soon.isoformat(), "round_interval": 1}
        created = client.post("/v1/tournaments", json=body, headers=PLATFORM)
        assert created.status_code == 201, created.text
        shown = created.json()
        assert abs(_at(shown["starts_at"]) - soon) < timedelta(milliseconds=1)
        assert (shown["status"], shown["round_interval"], shown["next_round_at"]) == (
            "registering",
            1,
            None,
        )
        assert shown["clock"] == {
            "type": "bank",
            "initial_seconds": 120.0,
            "increment_seconds": 5.0,
            "takeover_after": 3,
        }
        tid = shown["id"]
        final = wait_for(other, f"/v1/tournaments/{tid}", lambda b: b["status"] == "finished")
        assert [e["entrant"] for e in final["entrants"]] == ["bot:1", "bot:2"]
        assert final["next_round_at"] is None
        problem(
            client.post(
                f"/v1/tournaments/{tid}/registrations", json={"player_id": "ann"}, headers=PLATFORM
            ),
            409,
            "tournament_not_registering",
        )
        rounds = other.get(f"/v1/tournaments/{tid}/rounds").json()["rounds"]
        played = [
            [
                wait_for(client, f"/v1/archive/games/{t['game_id']}", lambda b: "seed" in b)
                for t in r["tables"]
            ]
            for r in rounds
        ]
        assert min(_at(g["created_at"]) for g in played[0]) >= soon
        first_ended = max(_at(g["finished_at"]) for g in played[0])
        assert min(_at(g["created_at"]) for g in played[1]) >= first_ended + timedelta(seconds=1)


REVIEW_WAITS = 1200  # looks (0.1 s apart) before giving up on a luck-adjusted tournament's end


def shown_review(review: dict) -> list[tuple[int, float]]:
    """A game's review as the reviews' API shows it: (adjusted rank, adjusted score) per seat."""
    seats = sorted(review["seats"], key=lambda s: s["seat"])
    return [(s["adjusted_rank"], s["adjusted_score"]) for s in seats]


@pytest.mark.parametrize(
    ("setup", "ranked_by"),
    [
        ("memory+sqlite", "points"),
        ("memory+sqlite", "margin"),
        ("memory+sqlite", "strength"),
        ("redis+postgresql", "strength"),
    ],
)
def test_a_luck_adjusted_bot_tournament_ranks_by_its_games_reviews(
    setup: str, ranked_by: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Its standings are the domain's over the reviews' luck-adjusted ranks and scores (each
    round paired once its reviews were in), with the results' own points beside them;
    ranked by margin, by the sums of the luck-adjusted margins first; ranked by strength, by
    the strengths fitted to them (summing to 0), the results' own beside them."""
    ask = {
        "name": "Luck cup", "table_size": 2, "places": 4, "rounds": 2, "bot_level": "random",
        "standings_by": "luck_adjusted", "ranked_by": ranked_by,
    }  # fmt: skip
    kind, _, archive = setup.partition("+")
    with contextlib.ExitStack() as stack:
        url = None if archive == "sqlite" else stack.enter_context(pg_database(migrate=False)).url
        client, other = stack.enter_context(replicas(kind, tmp_path, request, url))
        created = client.post("/v1/tournaments", json=ask, headers=PLATFORM)
        assert created.status_code == 201, created.text
        assert created.json()["standings_by"] == "luck_adjusted"
        assert created.json()["ranked_by"] == ranked_by
        tid = created.json()["id"]
        started = client.post(f"/v1/tournaments/{tid}/start", headers=PLATFORM)
        assert started.status_code == 200, started.text
        for _ in range(REVIEW_WAITS):
            final = other.get(f"/v1/tournaments/{tid}").json()
            if final["status"] == "finished":
                break
            time.sleep(0.1)
        else:
            raise AssertionError(f"the tournament never finished: {final}")
        rounds = other.get(f"/v1/tournaments/{tid}/rounds").json()["rounds"]
        assert [r["round"] for r in rounds] == [1, 2]
        games, reviews = {}, {}
        for r in rounds:
            for t in r["tables"]:
                gid = t["game_id"]
                games[gid] = wait_for(client, f"/v1/archive/games/{gid}", lambda b: "seed" in b)
                review = client.get(f"/v1/games/{gid}/review", headers=PLATFORM)
                assert review.status_code == 200, review.text  # in before the round's end
                reviews[gid] = shown_review(review.json())
                luck = t["result"]["luck_adjusted"]
                assert t["result"]["unadjusted"] is False
                assert list(zip(luck["ranks"], luck["scores"], strict=True)) == reviews[gid]
        shown = other.get(f"/v1/tournaments/{tid}/standings").json()
        assert shown["status"] == "finished"
        expected = recomputed(final, rounds, lambda i: shown_game(games[i]), lambda i: reviews[i])
        assert shown["standings"] == expected
        assert all(row["result_points"] is not None for row in shown["standings"])
        assert sum(row["margin"] for row in shown["standings"]) == pytest.approx(0.0)
        if ranked_by == "margin":
            margins = [row["margin"] for row in shown["standings"]]
            assert margins == sorted(margins, reverse=True)
        strengths = [row["strength"] for row in shown["standings"]]
        if ranked_by == "strength":
            assert strengths == sorted(strengths, reverse=True)
            assert sum(strengths) == pytest.approx(0.0)
            assert all(row["result_strength"] is not None for row in shown["standings"])
        else:
            assert set(strengths) == {None}
