"""Ratings in the SQL archive on real PostgreSQL and SQLite: every test runs on both.

The games are test_archive's (bot games with verified or unverified player ids, ranked or
not, and the clocked ones: timeouts, seats taken over, resigned, abandoned). Which seats
are rated is restated here from the games themselves (ranked, counting, human with a player
id, two or more), and every expected number comes from replaying those tables with the
rule (`service.history.ratings.replay`) in the order the archive rated them: exact floats.
"""

from __future__ import annotations

import asyncio
import itertools
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from functools import cache
from typing import Any

import httpx
import msgspec
import pytest

from domain.game.model import GameFinished
from domain.game.results import final_results
from infra.archive import SqlArchive, downgrade, make_engine, upgrade
from infra.archive.models import ratings
from service.games.use_cases import encode_events
from service.history.archiving import archive_game, rebuild_ratings
from service.history.ratings import PRIOR, Rating, predict, replay
from tests.servers import ROOT, ServiceProcess
from tests.support.archived_games import (
    DIALECTS,
    Db,
    migrated_database,
    rating_order,
    snapshot,
    stored_ratings,
)
from tests.support.ended_games import (
    PLAYERS,
    Played,
    aborted_game,
    clocked,
    dataset,
    rated_seats,
    scenario_games,
)


def shared(results: tuple[Any, ...], places: int) -> tuple[Any, ...]:
    """The results with the first `places` places tied: they all score the winner's score
    and share the win (the bots rarely tie; the archive takes the results as they come)."""
    top = sorted(results, key=lambda r: r.rank)[:places]
    best = top[0]
    return tuple(
        msgspec.structs.replace(r, rank=1, score=best.score, winner=True) if r in top else r
        for r in results
    )


@cache
def full_tables() -> tuple[Played, ...]:
    """test_archive's five-seat games again, every seat a verified human this time (its
    data set has no rated game of five), some with their first places tied: new ids, a day
    later."""
    made = []
    for k, p in enumerate(q for q in dataset() if len(q.player_ids) == 5):
        state = p.record.state
        assert state is not None
        assert state.results is not None
        ids = tuple(PLAYERS[(k + seat) % len(PLAYERS)] for seat in range(5))
        humans = tuple(msgspec.structs.replace(pl, bot=None) for pl in state.players)
        results = shared(state.results, k % 4) if k % 4 > 1 else state.results
        events = [
            msgspec.structs.replace(e, results=results) if isinstance(e, GameFinished) else e
            for e in p.sim.events
        ]
        record = msgspec.structs.replace(
            p.record,
            id=f"f{k:019x}",
            state=msgspec.structs.replace(state, players=humans, results=results),
            player_ids=ids,
            verified=(True,) * 5,
            custom_deck=False,
            created_at=p.record.created_at + 86400,
            updated_at=p.record.updated_at + 86400,
        )
        sim = msgspec.structs.replace(p.sim, state=record.state, events=events)
        stored = encode_events(events)
        made.append(Played(sim=sim, record=record, stored=stored, player_ids=ids, reasons=()))
    return tuple(made)


def tied() -> set[str]:
    """The games whose first places `full_tables` tied: results no scoring gives, so their
    records do not replay (tests/support/replayed.py)."""
    return {
        p.id
        for p in full_tables()
        if p.record.state.results != final_results(p.record.state.players, p.record.state.rules)
    }


def everything() -> list[Played]:
    return [*dataset(), *clocked(), *full_tables()]


def rated() -> list[Played]:
    return [p for p in everything() if rated_seats(p)]


def unrated() -> list[Played]:
    return [p for p in everything() if not rated_seats(p)]


def test_the_games_exercise_the_ratings() -> None:
    """Rated games of every size with ties and shared players; ranked games left unrated
    (a seat taken over leaves one human); unranked ones of every kind."""
    games = rated()
    sizes = Counter(len(rated_seats(p)) for p in games)
    assert set(sizes) == {2, 3, 4, 5}
    assert any(len({s.rank for s in rated_seats(p)}) < len(rated_seats(p)) for p in games)
    assert any(p.ranked for p in unrated())  # ranked, but fewer than two rated seats
    assert {r for p in unrated() for r in p.reasons} >= {
        "custom_deck",
        "too_few_humans",
        "abandoned",
        "unverified_identity",
    }
    assert any(len(p.player_ids) == 1 for p in unrated())  # solo games
    assert any(p.excluded and rated_seats(p) for p in games)  # taken over, others rated


def archive_all(db: Db, played: list[Played], archive: SqlArchive | None = None) -> list[bool]:
    async def body(default: SqlArchive) -> list[bool]:
        use = archive or default
        return [await archive_game(use, p.record, p.stored, p.player_ids) for p in played]

    return db.run(body)


def expected(order: list[str]) -> dict[str, Rating]:
    by_id = {p.id: p for p in everything()}
    current, _ = replay(rated_seats(by_id[game_id]) for game_id in order)
    return current


def rebuild(db: Db) -> int:
    async def body(archive: SqlArchive) -> int:
        return await rebuild_ratings(archive)

    return db.run(body)


def check_history_chains(db: Db) -> None:
    """Each player's history: one row per rated game of theirs, each starting where the one
    before ended, the last one the current rating."""
    rows = snapshot(db)
    chains: dict[str, list[Any]] = {}
    for row in rows["history"]:
        chains.setdefault(row[0], []).append(row)
    current = stored_ratings(db)
    assert set(chains) == set(current)
    for pid, chain in chains.items():
        # player_id, seq, game_id, finished_at, rank, rated_seats, mu_before, sigma_before,
        # mu, sigma, ordinal, games
        assert [row[11] for row in chain] == list(range(1, len(chain) + 1))
        for before, after in itertools.pairwise(chain):
            assert (after[6], after[7]) == (before[8], before[9])
        assert (chain[-1][8], chain[-1][9], chain[-1][10]) == (
            current[pid].mu,
            current[pid].sigma,
            current[pid].ordinal,
        )


@pytest.fixture(params=DIALECTS)
def empty(request: pytest.FixtureRequest) -> Iterator[Db]:
    with migrated_database(request.param) as db:
        db.unreplayable.update(tied())
        yield db


def test_each_rated_game_updates_its_players_in_archive_order(empty: Db) -> None:
    assert archive_all(empty, everything()) == [True] * len(everything())
    order = rating_order(empty)
    assert order == [p.id for p in rated()]  # archived one after the other
    assert stored_ratings(empty) == expected(order)  # exact floats
    check_history_chains(empty)
    history = snapshot(empty)["history"]
    assert len(history) == sum(len(rated_seats(p)) for p in rated())


def test_rebuild_equals_incremental(empty: Db) -> None:
    archive_all(empty, everything())
    incremental = snapshot(empty)
    assert rebuild(empty) == len(rated())
    assert snapshot(empty) == incremental  # every row, every float, the same seqs
    assert rebuild(empty) == len(rated())
    assert snapshot(empty) == incremental
    # a game rated after a rebuild comes after the rebuilt ones
    extra = aborted_game(3)  # unrated; then nothing changes either
    archive_all(empty, [extra])
    assert snapshot(empty) == incremental


def test_the_rebuild_command(empty: Db) -> None:
    archive_all(empty, everything())
    incremental = snapshot(empty)

    async def wipe(archive: SqlArchive) -> None:
        async with archive.engine.begin() as conn:
            await conn.execute(ratings.update().values(mu=0.0, sigma=1.0, ordinal=-3.0))

    empty.run(wipe)
    assert snapshot(empty) != incremental
    done = subprocess.run(
        [sys.executable, "-m", "service.cli", "ratings", "rebuild", "--url", empty.url],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert f"ok: {len(rated())} rated games" in done.stdout
    assert snapshot(empty) == incremental


def test_unrated_games_change_nothing(empty: Db) -> None:
    """Unranked games (custom deck, too few humans, solo, unverified, aborted, abandoned)
    and ranked games left with one rated seat rate nobody; a game archived again changes
    nothing."""
    first = rated()[: len(rated()) // 2]
    archive_all(empty, first)
    before = snapshot(empty)
    stopped = [aborted_game(i) for i in (3, 7, 9)]
    assert archive_all(empty, [*unrated(), *stopped]) == [True] * (len(unrated()) + 3)
    assert snapshot(empty) == before
    assert archive_all(empty, first) == [False] * len(first)
    assert snapshot(empty) == before
    assert [p.id for p in scenario_games("the only other human left")] == [
        p.id for p in unrated() if p in scenario_games("the only other human left")
    ]


def test_a_game_is_rated_once_when_two_replicas_race(empty: Db) -> None:
    """Two archives on their own engines (two replicas) each archive every game three times,
    all at once: every game archived and rated exactly once, and the ratings are those of
    replaying the games in the order they were rated."""
    other = SqlArchive(make_engine(empty.url))
    games = rated()

    async def race(archive: SqlArchive) -> list[bool]:
        jobs = [(a, p) for p in games for a in (archive, other, archive, other, archive, other)]
        return await asyncio.gather(
            *(archive_game(a, p.record, p.stored, p.player_ids) for a, p in jobs)
        )

    try:
        won = empty.run(race)
    finally:
        empty.run(lambda _: other.close())
    assert Counter(won) == {True: len(games), False: 5 * len(games)}
    rows = snapshot(empty)
    assert sorted(rating_order(empty)) == sorted(p.id for p in games)
    assert len(rows["history"]) == sum(len(rated_seats(p)) for p in games)
    assert stored_ratings(empty) == expected(rating_order(empty))
    check_history_chains(empty)
    assert rebuild(empty) == len(games)
    assert snapshot(empty) == rows


def test_concurrent_games_with_common_players_lose_no_update(empty: Db) -> None:
    """Every game (six players share them all) archived at once by two replicas: each
    player's rating went through every game of theirs, one after the other (no update
    lost), and equals the replay in rating order."""
    other = SqlArchive(make_engine(empty.url))

    async def race(archive: SqlArchive) -> list[bool]:
        jobs = [(archive if i % 2 else other, p) for i, p in enumerate(everything())]
        return await asyncio.gather(
            *(archive_game(a, p.record, p.stored, p.player_ids) for a, p in jobs)
        )

    try:
        assert empty.run(race) == [True] * len(everything())
    finally:
        empty.run(lambda _: other.close())
    games_of = Counter(s.player_id for p in rated() for s in rated_seats(p))
    current = stored_ratings(empty)
    assert {pid: r.games for pid, r in current.items()} == dict(games_of)
    assert current == expected(rating_order(empty))
    check_history_chains(empty)
    rows = snapshot(empty)
    rebuild(empty)
    assert snapshot(empty) == rows


def test_games_archived_before_the_ratings_are_rated_by_the_rebuild(empty: Db) -> None:
    """Down to revision 0003 (the rating tables dropped) and up again: the archive holds
    ranked games nobody rated; the rebuild rates them by their end (then id)."""
    archive_all(empty, everything())
    downgrade(empty.url, "0003_abandoned")
    upgrade(empty.url)
    assert snapshot(empty) == {"ratings": [], "history": [], "rated_games": []}
    assert rebuild(empty) == len(rated())
    by_end = [p.id for p in sorted(rated(), key=lambda p: (p.finished_at, p.id))]
    assert rating_order(empty) == by_end
    assert stored_ratings(empty) == expected(by_end)
    check_history_chains(empty)
    # a game rated afterwards comes after them
    later = rated()[0]

    async def forget(archive: SqlArchive) -> None:
        from infra.archive.models import games as games_table

        async with archive.engine.begin() as conn:
            await conn.execute(games_table.delete().where(games_table.c.id == later.id))

    empty.run(forget)
    rebuild(empty)
    assert archive_all(empty, [later]) == [True]
    assert rating_order(empty)[-1] == later.id
    assert stored_ratings(empty) == expected(rating_order(empty))


def test_reads(empty: Db) -> None:
    archive_all(empty, everything())
    current = stored_ratings(empty)
    ann = current["ann"]

    async def body(archive: SqlArchive) -> tuple[Any, ...]:
        known = await archive.ratings(["ann", "nobody", "bob"])
        stats = await archive.player_stats("ann")
        nobody = await archive.player_stats("nobody")
        history = await archive.rating_history("ann", limit=500)
        page = await archive.rating_history("ann", before=history[1].seq, limit=2)
        board = await archive.leaderboard("rating", min_games=1, limit=500)
        return known, stats, nobody, history, page, board

    known, stats, nobody, history, page, board = empty.run(body)
    assert known == {"ann": ann, "bob": current["bob"]}
    assert stats.rating == ann
    assert (nobody.rating.mu, nobody.rating.games) == (25.0, 0)
    assert [h.seq for h in history] == sorted((h.seq for h in history), reverse=True)
    assert len(history) == ann.games
    assert (history[0].mu, history[0].sigma, history[0].games) == (ann.mu, ann.sigma, ann.games)
    assert page == history[2:4]
    assert [r.player_id for r in board] == sorted(
        current, key=lambda pid: (-current[pid].ordinal, pid.encode())
    )
    assert [r.rating for r in board] == [current[r.player_id] for r in board]
    assert [r.position for r in board] == list(range(1, len(board) + 1))


# ---------------------------------------------------------------- over HTTP


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, Db]]:
    """A service process (embedded store) over a SQLite archive holding every game."""
    with migrated_database("sqlite") as db:
        db.unreplayable.update(tied())
        archive_all(db, everything())
        log = tmp_path_factory.mktemp("ratings") / "server.log"
        server = ServiceProcess({"TEN_DATABASE_URL": db.url}, stdout=log)
        try:
            with httpx.Client(base_url=server.base, timeout=10) as client:
                yield client, db
        finally:
            server.stop()


def rating_json(r: Rating) -> dict[str, Any]:
    return {"mu": r.mu, "sigma": r.sigma, "ordinal": r.ordinal, "games": r.games}


def test_leaderboard_by_rating_over_http(served: tuple[httpx.Client, Db]) -> None:
    client, db = served
    current = stored_ratings(db)
    best = sorted(current, key=lambda pid: (-current[pid].ordinal, pid.encode()))
    for params in ({"by": "rating"}, {"by": "rating", "ranked": "all"}):
        body = client.get("/v1/leaderboard", params={**params, "limit": 200}).json()
        assert (body["by"], body["ranked_only"]) == ("rating", True)
        assert [(r["position"], r["player_id"]) for r in body["rows"]] == list(
            enumerate(best, start=1)
        )
        assert [r["rating"] for r in body["rows"]] == [rating_json(current[p]) for p in best]
    enough = 1 + sorted(r.games for r in current.values())[len(current) // 2]
    body = client.get("/v1/leaderboard", params={"by": "rating", "min_games": enough}).json()
    assert [r["player_id"] for r in body["rows"]] == [p for p in best if current[p].games >= enough]
    page = client.get("/v1/leaderboard", params={"by": "rating", "offset": 2, "limit": 2}).json()
    assert [(r["position"], r["player_id"]) for r in page["rows"]] == [(3, best[2]), (4, best[3])]
    # the other orders carry no rating
    wins = client.get("/v1/leaderboard").json()
    assert {r["rating"] for r in wins["rows"]} == {None}


def test_stats_and_history_over_http(served: tuple[httpx.Client, Db]) -> None:
    client, db = served
    current = stored_ratings(db)
    for pid, r in current.items():
        assert client.get(f"/v1/players/{pid}/stats").json()["rating"] == rating_json(r)
        assert client.get(f"/v1/players/{pid}/stats?ranked=all").json()["rating"] == rating_json(r)
        items, before = [], None
        while True:
            params = {"limit": 3, **({"before": before} if before else {})}
            body = client.get(f"/v1/players/{pid}/ratings", params=params).json()
            items += body["items"]
            if (before := body["next_before"]) is None:
                break
        assert [i["games"] for i in items] == list(range(r.games, 0, -1))
        assert (items[0]["mu"], items[0]["sigma"], items[0]["ordinal"]) == (
            r.mu,
            r.sigma,
            r.ordinal,
        )
    prior = {"mu": 25.0, "sigma": 25 / 3, "ordinal": 25 - 3 * (25 / 3), "games": 0}
    assert client.get("/v1/players/nobody/stats").json()["rating"] == prior
    assert client.get("/v1/players/nobody/ratings").json() == {
        "player_id": "nobody",
        "items": [],
        "next_before": None,
    }


def test_predict_over_http(served: tuple[httpx.Client, Db]) -> None:
    client, db = served
    current = stored_ratings(db)
    table = ["ann", "newcomer", "Zed"]
    got = client.get("/v1/ratings/predict", params={"player_id": table})
    assert got.status_code == 200, got.text
    body = got.json()
    chances = predict([current["ann"], PRIOR, current["Zed"]])
    assert [s["player_id"] for s in body["seats"]] == table
    assert [s["win"] for s in body["seats"]] == chances.win
    assert body["draw"] == chances.draw
    assert body["seats"][1]["rating"] == rating_json(PRIOR)
    assert sum(s["win"] for s in body["seats"]) == pytest.approx(1)


@pytest.mark.parametrize(
    ("ids", "code"),
    [
        (["ann", "ann"], "duplicate_player_id"),
        (["ann"], "invalid_request"),
        (["a", "b", "c", "d", "e", "f"], "invalid_request"),
        (["ann", "no spaces"], "invalid_request"),
        (["ann", ""], "invalid_request"),
        ([], "invalid_request"),
    ],
)
def test_predict_refuses_a_bad_table(
    served: tuple[httpx.Client, Db], ids: list[str], code: str
) -> None:
    client, _ = served
    got = client.get("/v1/ratings/predict", params={"player_id": ids})
    assert got.status_code == 400, got.text
    assert got.headers["content-type"].startswith("application/problem+json")
    assert got.json()["code"] == code
