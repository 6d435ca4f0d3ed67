"""The SQL archive (infra/archive) on real PostgreSQL and SQLite: every test runs on both.

Test data are whole bot games (`play_game`) with known player ids in their seats; in every
other game the platform vouched for the ids (`verified`) and those seats count as humans,
so some games are ranked and some are not (too few humans, a custom deck). Every expected
figure and ranking is computed here from the simulated games themselves (the ranking rule
restated, not `service.core.ranking` called), not read back from the archive. Each dialect gets a throwaway database (PostgreSQL: `CREATE DATABASE`, dropped
afterwards; SQLite: a temporary file), migrated with Alembic like production.
"""

from __future__ import annotations

import asyncio
import base64
import random
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from fractions import Fraction
from typing import Any

import msgspec
import pytest
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from domain.game.cards import deck_for
from domain.game.model import (
    AnyEvent,
    Busted,
    CardDrawn,
    GameStarted,
    SeatReclaimed,
    SeatTakenOver,
)
from domain.game.replay import replay
from domain.game.views import public_view
from infra.archive import InvalidCursor, SqlArchive, make_engine
from infra.archive.models import events as events_table
from infra.archive.models import games, results, seats
from service.core.model import GameRecord
from service.core.ports import StoredEvent, StoreUnavailable
from service.history.archiving import archival, archive_game
from tests.support.archived_games import DIALECTS, Db, migrated_database
from tests.support.ended_games import (
    BASE,
    GAMES,
    PLAYERS,
    Played,
    aborted_game,
    clocked,
    dataset,
    make_game,
    scenario_games,
)

# ---------------------------------------------------------------- test data


def newest_first(played: list[Played]) -> list[str]:
    return [p.id for p in sorted(played, key=lambda p: (p.finished_at, p.id), reverse=True)]


def busts_of(p: Played, seat: int) -> int:
    return sum(1 for e in p.sim.events if isinstance(e, Busted) and e.seat == seat)


def perfect_colors(result: Any, bonus: int) -> int:
    return sum(1 for c in result.colors.values() if c.points == 9 + bonus)


# ---------------------------------------------------------------- databases


@pytest.fixture(scope="module", params=DIALECTS)
def filled(request: pytest.FixtureRequest) -> Iterator[Db]:
    """One database per dialect holding the whole data set (read-only for the tests)."""
    with migrated_database(request.param) as db:

        async def fill(archive: SqlArchive) -> list[bool]:
            return [
                await archive_game(archive, p.record, p.stored, p.player_ids) for p in dataset()
            ]

        assert db.run(fill) == [True] * GAMES
        yield db


@pytest.fixture(params=DIALECTS)
def empty(request: pytest.FixtureRequest) -> Iterator[Db]:
    """A fresh, migrated, empty database per test."""
    with migrated_database(request.param) as db:
        yield db


# ---------------------------------------------------------------- round trips


def test_get_game_round_trip(filled: Db) -> None:
    async def body(archive: SqlArchive) -> list[Any]:
        return [await archive.get_game(p.id) for p in dataset()]

    for p, got in zip(dataset(), filled.run(body), strict=True):
        state = p.sim.state
        assert got is not None
        assert got.id == p.id
        assert got.status == "finished"
        assert got.player_count == len(state.players)
        assert got.rules == msgspec.to_builtins(state.rules)
        assert got.seed == state.seed
        assert got.version == state.version
        assert got.event_count == len(p.sim.events)
        assert got.finished_at == p.finished_at
        assert got.finished_at.tzinfo is not None
        assert got.created_at == datetime.fromtimestamp(p.record.created_at, UTC)

        drawn = [e.card for e in p.sim.events if isinstance(e, CardDrawn)]
        start = p.sim.events[0]
        assert isinstance(start, GameStarted)
        assert list(got.deck) == drawn
        assert len(got.deck) == start.draw_pile_size
        assert sorted(got.deck) == sorted(deck_for(len(state.players)))

        assert [(s.seat, s.name, s.bot, s.player_id) for s in got.seats] == [
            (pl.seat, pl.name, pl.bot, p.player_ids[pl.seat]) for pl in p.record.state.players
        ]
        assert (got.ranked, got.unranked_reasons) == (p.ranked, p.reasons)
        assert got.unranked_reason == (p.reasons[0] if p.reasons else None)
        assert [(s.ranked, s.unranked_reason) for s in got.seats] == p.seat_ranking()
        assert state.results is not None
        for want, have in zip(state.results, got.results, strict=True):
            assert msgspec.to_builtins(have) == {
                **msgspec.to_builtins(want),
                "perfect_colors": perfect_colors(want, state.rules.perfect_bonus),
                "busts": busts_of(p, want.seat),
            }
            assert list(have.colors) == list(want.colors)  # the rules' colour order
        # the SQL archive gives back exactly what the core decided to keep
        assert got == archival(p.record, p.stored, p.player_ids).game


def test_the_data_set_exercises_the_figures() -> None:
    """Busts and perfect colours occur (else their counts would test nothing); games are
    ranked and unranked, for each reason, and players have both."""
    played = dataset()
    assert 10 <= sum(p.ranked for p in played) <= GAMES - 10
    assert {r for p in played for r in p.reasons} == {"custom_deck", "too_few_humans"}
    ranked_players = {pid for p in played if p.ranked for pid in p.player_ids if pid}
    assert ranked_players == set(PLAYERS)
    assert sum(busts_of(p, s) for p in played for s in range(len(p.player_ids))) > 50
    assert sum(perfect_colors(r, 1) for p in played for r in p.sim.state.results or ()) > 3
    assert Counter(len(p.player_ids) for p in played) == dict.fromkeys(range(1, 6), GAMES // 5)


def test_events_round_trip(filled: Db) -> None:
    async def body(archive: SqlArchive) -> list[list[StoredEvent]]:
        return [await archive.events(p.id) for p in dataset()]

    for p, got in zip(dataset(), filled.run(body), strict=True):
        assert got == p.stored  # same seqs, same bytes, in order

    p = dataset()[7]

    async def paged(archive: SqlArchive) -> list[StoredEvent]:
        pages, after = [], 0
        while page := await archive.events(p.id, after=after, limit=50):
            pages.extend(page)
            after = page[-1].seq
        return pages

    assert filled.run(paged) == p.stored


def test_unknown_game(filled: Db) -> None:
    async def body(archive: SqlArchive) -> tuple[Any, Any]:
        return await archive.get_game("0" * 20), await archive.events("0" * 20)

    assert filled.run(body) == (None, [])


def test_replay_of_the_archived_log_is_the_final_public_state(filled: Db) -> None:
    decoder = msgspec.json.Decoder(AnyEvent)

    async def body(archive: SqlArchive) -> list[list[StoredEvent]]:
        return [await archive.events(p.id) for p in dataset()]

    for p, stored in zip(dataset(), filled.run(body), strict=True):
        views = list(replay(decoder.decode(e.data) for e in stored))
        assert len(views) == p.sim.state.version + 1  # one public state per version
        assert views[-1] == public_view(p.sim.state)


# ---------------------------------------------------------------- listing


def walk(db: Db, limit: int, **filters: Any) -> list[list[str]]:
    """Every page of a listing, following the cursors."""

    async def body(archive: SqlArchive) -> list[list[str]]:
        pages, cursor = [], None
        while True:
            items, cursor = await archive.list_games(cursor=cursor, limit=limit, **filters)
            pages.append([item.id for item in items])
            if cursor is None:
                return pages
            assert len(items) == limit
            assert len(pages) <= GAMES

    return db.run(body)


@pytest.mark.parametrize("limit", [1, 7, 60, 500])
def test_list_walks_every_game_newest_first(filled: Db, limit: int) -> None:
    pages = walk(filled, limit)
    ids = [game_id for page in pages for game_id in page]
    assert ids == newest_first(list(dataset()))  # order right, no duplicates, no gaps
    assert len(pages) == -(-GAMES // limit)
    assert all(pages)


def test_list_items(filled: Db) -> None:
    by_id = {p.id: p for p in dataset()}

    async def body(archive: SqlArchive) -> Any:
        return await archive.list_games(limit=10, status="finished")

    items, _ = filled.run(body)
    for item in items:
        p = by_id[item.id]
        assert item.status == "finished"
        assert item.finished_at == p.finished_at
        assert item.player_count == len(p.player_ids)
        assert p.sim.state.results is not None
        assert [(s.seat, s.player_id, s.score, s.rank, s.winner) for s in item.seats] == [
            (r.seat, p.player_ids[r.seat], r.score, r.rank, r.winner) for r in p.sim.state.results
        ]


@pytest.mark.parametrize("player_id", [*PLAYERS, "nobody"])
def test_list_by_player(filled: Db, player_id: str) -> None:
    expected = newest_first([p for p in dataset() if player_id in p.player_ids])
    pages = walk(filled, 4, player_id=player_id)
    assert [game_id for page in pages for game_id in page] == expected


WINDOWS = [
    (BASE, BASE + timedelta(hours=5)),  # inclusive start, exclusive end (3 games per hour)
    (BASE + timedelta(hours=3, minutes=30), BASE + timedelta(hours=11)),
    (BASE + timedelta(hours=19), None),
    (None, BASE + timedelta(hours=2)),
    (BASE + timedelta(days=30), None),  # after every game
    (BASE + timedelta(hours=4), BASE + timedelta(hours=4)),  # empty range
]


@pytest.mark.parametrize(("since", "until"), WINDOWS)
@pytest.mark.parametrize("player_id", [None, "ann"])
def test_list_date_range(
    filled: Db, since: datetime | None, until: datetime | None, player_id: str | None
) -> None:
    expected = newest_first(
        [
            p
            for p in dataset()
            if (since is None or p.finished_at >= since)
            and (until is None or p.finished_at < until)
            and (player_id is None or player_id in p.player_ids)
        ]
    )
    pages = walk(filled, 2, since=since, until=until, player_id=player_id)
    assert [game_id for page in pages for game_id in page] == expected


def test_cursor_is_stable_while_games_arrive(empty: Db) -> None:
    """Keyset pages: a game archived between two pages neither shifts nor repeats them."""
    played = list(dataset()[:12])
    late = make_game(99, random.Random(99), BASE + timedelta(days=1))  # newest of all

    async def body(archive: SqlArchive) -> list[str]:
        for p in played:
            await archive_game(archive, p.record, p.stored, p.player_ids)
        first, cursor = await archive.list_games(limit=5)
        await archive_game(archive, late.record, late.stored, late.player_ids)
        rest: list[str] = []
        while cursor is not None:
            page, cursor = await archive.list_games(limit=5, cursor=cursor)
            rest.extend(item.id for item in page)
        return [item.id for item in first] + rest

    assert empty.run(body) == newest_first(played)


@pytest.mark.parametrize(
    "arguments",
    [
        {"status": "active"},
        {"limit": 0},
        {"limit": 501},
        {"since": datetime(2025, 1, 1)},  # naive: no time zone
        {"cursor": "not-a-cursor"},
        {"cursor": base64.urlsafe_b64encode(b'[2,1,"a"]').decode()},  # another version
    ],
    ids=["status", "limit0", "limit501", "naive", "garbage-cursor", "foreign-cursor"],
)
def test_list_rejects_bad_arguments(filled: Db, arguments: dict[str, Any]) -> None:
    async def body(archive: SqlArchive) -> Any:
        return await archive.list_games(**arguments)

    with pytest.raises(ValueError, match=r"."):
        filled.run(body)
    if "cursor" in arguments:
        with pytest.raises(InvalidCursor):
            filled.run(body)


# ---------------------------------------------------------------- figures


def expected_stats(
    ranked_only: bool, played: tuple[Played, ...] | None = None
) -> dict[str, dict[str, Any]]:
    """Per player id, over `played` (the data set by default): the results of finished
    games; `ranked_only`: of ranked games, the seats that count."""
    stats: dict[str, dict[str, Any]] = {}
    for p in dataset() if played is None else played:
        if (ranked_only and not p.ranked) or p.sim.state.phase != "finished":
            continue
        assert p.sim.state.results is not None
        for r in p.sim.state.results:
            pid = p.player_ids[r.seat]
            if pid is None or (ranked_only and r.seat in p.excluded):
                continue
            s = stats.setdefault(
                pid, {"games": 0, "wins": 0, "scores": [], "busts": 0, "perfect": 0}
            )
            s["games"] += 1
            s["wins"] += r.winner
            s["scores"].append(r.score)
            s["busts"] += busts_of(p, r.seat)
            s["perfect"] += perfect_colors(r, p.sim.state.rules.perfect_bonus)
    return stats


@pytest.mark.parametrize("ranked_only", [True, False], ids=["ranked", "all"])
def test_player_stats(filled: Db, ranked_only: bool) -> None:
    expected = expected_stats(ranked_only)
    assert set(expected) == set(PLAYERS)

    async def body(archive: SqlArchive) -> list[Any]:
        if ranked_only:  # the default
            return [await archive.player_stats(pid) for pid in (*PLAYERS, "nobody")]
        return [await archive.player_stats(pid, ranked_only=False) for pid in (*PLAYERS, "nobody")]

    *known, nobody = filled.run(body)
    for got in known:
        want = expected[got.player_id]
        assert got.ranked_only is ranked_only
        assert got.games == want["games"]
        assert got.wins == want["wins"]
        assert got.mean_score == pytest.approx(Fraction(sum(want["scores"]), want["games"]))
        assert got.best_score == max(want["scores"])
        assert got.busts == want["busts"]
        assert got.bust_rate == pytest.approx(want["busts"] / want["games"])
        assert got.perfect_colors == want["perfect"]
    assert (nobody.games, nobody.wins, nobody.busts, nobody.perfect_colors) == (0, 0, 0, 0)
    assert (nobody.mean_score, nobody.best_score, nobody.bust_rate) == (None, None, None)


def expected_leaderboard(
    by: str, min_games: int, ranked_only: bool, played: tuple[Played, ...] | None = None
) -> list[tuple[str, int, int, Fraction]]:
    rows = [
        (pid, s["games"], s["wins"], Fraction(sum(s["scores"]), s["games"]))
        for pid, s in expected_stats(ranked_only, played).items()
        if s["games"] >= min_games
    ]
    if by == "wins":
        rows.sort(key=lambda r: (-r[2], -r[3], r[0].encode()))
    else:
        rows.sort(key=lambda r: (-r[3], -r[1], r[0].encode()))
    return rows


@pytest.mark.parametrize("by", ["wins", "mean_score"])
@pytest.mark.parametrize("threshold", ["all", "median"])
@pytest.mark.parametrize("ranked_only", [True, False], ids=["ranked", "all-games"])
def test_leaderboard(filled: Db, by: Any, threshold: str, ranked_only: bool) -> None:
    counts = sorted(s["games"] for s in expected_stats(ranked_only).values())
    min_games = 1 if threshold == "all" else counts[len(counts) // 2]
    expected = expected_leaderboard(by, min_games, ranked_only)
    assert 0 < len(expected) <= len(PLAYERS)
    assert threshold == "all" or len(expected) < len(PLAYERS)

    async def body(archive: SqlArchive) -> tuple[list[Any], list[Any]]:
        whole = await archive.leaderboard(by, ranked_only=ranked_only, min_games=min_games)
        paged = []
        for offset in range(0, len(PLAYERS) + 2, 2):
            paged += await archive.leaderboard(
                by,
                ranked_only=ranked_only,
                min_games=min_games,
                offset=offset,
                limit=2,
            )
        return whole, paged

    whole, paged = filled.run(body)
    assert paged == whole
    assert [(r.player_id, r.games, r.wins) for r in whole] == [r[:3] for r in expected]
    assert [r.mean_score for r in whole] == pytest.approx([float(r[3]) for r in expected])
    assert [r.position for r in whole] == list(range(1, len(expected) + 1))


def test_leaderboard_ties_are_broken_by_player_id(empty: Db) -> None:
    """One 3-seat game archived three times with the players rotated: every player has the
    same games, wins and scores, so only the player id (byte order) can decide."""
    p = dataset()[2]
    assert len(p.player_ids) == 3
    names = ["p", "Q", "r"]

    async def body(archive: SqlArchive) -> tuple[list[Any], list[Any], list[Any]]:
        for turn in range(3):
            record = msgspec.structs.replace(p.record, id=f"{p.id[:-1]}{turn}")
            rotated = names[turn:] + names[:turn]
            assert await archive_game(archive, record, p.stored, rotated)
        stats = [await archive.player_stats(name, ranked_only=False) for name in names]
        return (
            await archive.leaderboard("wins", ranked_only=False),
            await archive.leaderboard("mean_score", ranked_only=False),
            stats,
        )

    by_wins, by_mean, stats = empty.run(body)
    assert [r.player_id for r in by_wins] == [r.player_id for r in by_mean] == ["Q", "p", "r"]
    assert len({(s.games, s.wins, s.mean_score, s.busts) for s in stats}) == 1


def test_leaderboard_rejects_bad_arguments(filled: Db) -> None:
    for by, kwargs in [("elo", {}), ("wins", {"min_games": 0}), ("wins", {"offset": -1})]:

        async def body(archive: SqlArchive, by: Any = by, kwargs: Any = kwargs) -> Any:
            return await archive.leaderboard(by, **kwargs)

        with pytest.raises(ValueError, match=r"."):
            filled.run(body)


# ---------------------------------------------------------------- writing


def test_concurrent_archiving_stores_one_copy(empty: Db) -> None:
    """Ten callers finish the same game at once (replicas, retries): one wins; and three
    games archived concurrently, ten times each, give three inserts."""
    one = dataset()[4]  # 5 seats
    three = dataset()[10:13]

    async def body(archive: SqlArchive) -> tuple[list[bool], list[bool], bool]:
        same = await asyncio.gather(
            *[archive_game(archive, one.record, one.stored, one.player_ids) for _ in range(10)]
        )
        jobs = [p for _ in range(10) for p in three]
        mixed = await asyncio.gather(
            *[archive_game(archive, p.record, p.stored, p.player_ids) for p in jobs]
        )
        again = await archive_game(archive, one.record, one.stored, one.player_ids)
        return list(same), list(mixed), again

    same, mixed, again = empty.run(body)
    assert sorted(same) == [False] * 9 + [True]
    assert sorted(mixed) == [False] * 27 + [True] * 3
    assert again is False
    played = [one, *three]
    assert empty.count(games) == 4
    assert empty.count(seats) == empty.count(results) == sum(len(p.player_ids) for p in played)
    assert empty.count(events_table) == sum(len(p.stored) for p in played)

    async def read(archive: SqlArchive) -> list[StoredEvent]:
        return await archive.events(one.id)

    assert empty.run(read) == one.stored


def test_archive_rejects_what_is_not_a_whole_finished_game(empty: Db) -> None:
    p = dataset()[3]
    cut = msgspec.structs.replace(
        p.record, state=msgspec.structs.replace(p.record.state, phase="buy")
    )
    bad: list[tuple[GameRecord, list[StoredEvent], tuple[str | None, ...]]] = [
        (cut, p.stored, p.player_ids),  # not finished
        (p.record, p.stored[:-1], p.player_ids),  # log without its end
        (p.record, p.stored[1:], p.player_ids),  # log without its start
        (p.record, [*p.stored[:5], *p.stored[6:]], p.player_ids),  # a gap
        (p.record, p.stored, p.player_ids[:-1]),  # a seat without its player id slot
        (p.record, p.stored, ("ann",) * len(p.player_ids)),  # one player in two seats
    ]

    async def body(archive: SqlArchive) -> None:
        for record, stored, player_ids in bad:
            with pytest.raises(ValueError, match=r"."):
                await archive_game(archive, record, stored, player_ids)

    empty.run(body)
    assert empty.count(games) == empty.count(seats) == empty.count(events_table) == 0


def test_archive_is_one_transaction(empty: Db, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure after the game, seat and result rows were written (the database refuses
    the last event row) leaves nothing behind; the game can be archived afterwards."""
    from infra.archive import unit

    p = dataset()[2]
    rows_of = unit.archive_rows

    def broken_rows(*args: Any) -> Any:
        rows = rows_of(*args)
        rows.events[-1]["type"] = None  # NOT NULL
        return rows

    async def body(archive: SqlArchive) -> bool:
        return await archive_game(archive, p.record, p.stored, p.player_ids)

    monkeypatch.setattr(unit, "archive_rows", broken_rows)
    with pytest.raises(IntegrityError):
        empty.run(body)
    for table in (games, seats, results, events_table):
        assert empty.count(table) == 0
    monkeypatch.setattr(unit, "archive_rows", rows_of)
    assert empty.run(body) is True
    assert empty.count(games) == 1
    assert empty.count(events_table) == len(p.stored)


def test_ping_and_an_unreachable_database(filled: Db) -> None:
    filled.run(lambda archive: archive.ping())
    down = (
        "postgresql://postgres@127.0.0.1:9/test"
        if filled.kind == "postgresql"
        else "sqlite+aiosqlite:////nonexistent-dir/archive.sqlite3"
    )

    async def body() -> None:
        archive = SqlArchive(make_engine(down))
        try:
            await archive.ping()
        finally:
            await archive.close()

    with pytest.raises(StoreUnavailable):
        filled.runner.run(body())


def test_sqlite_connections() -> None:
    """SQLite: foreign keys enforced, write-ahead log (readers do not block the writer)."""

    async def body(archive: SqlArchive) -> tuple[Any, Any]:
        async with archive.engine.connect() as conn:
            keys = (await conn.exec_driver_sql("PRAGMA foreign_keys")).scalar()
            journal = (await conn.exec_driver_sql("PRAGMA journal_mode")).scalar()
            return keys, journal

    with migrated_database("sqlite") as db:
        assert db.run(body) == (1, "wal")
        # the unit of work's own engine on the file (`sqlite_twin`) is configured the same
        assert db.archive._writer is not None
        with db.archive._writer.connect() as conn:
            keys = conn.exec_driver_sql("PRAGMA foreign_keys").scalar()
            journal = conn.exec_driver_sql("PRAGMA journal_mode").scalar()
            timeout = conn.exec_driver_sql("PRAGMA busy_timeout").scalar()
        assert (keys, journal, timeout) == (1, "wal", 30_000)


def test_a_unit_step_whose_caller_is_cancelled_ends_before_the_next_step() -> None:
    """On a SQLite file each step of a unit runs in a worker thread: a step cancelled by its
    caller (a request given up, a worker stopping) still runs to its end before the unit's
    next step (its rollback and close) touches the connection."""
    from infra.archive.unit import OnThread

    order: list[str] = []

    def slow(conn: list[str]) -> None:
        time.sleep(0.2)
        conn.append("the step's end")

    async def body() -> None:
        steps = OnThread(order)
        step = asyncio.ensure_future(steps(slow))
        await asyncio.sleep(0.05)
        step.cancel()
        with pytest.raises(asyncio.CancelledError):
            await step
        await steps(lambda conn: conn.append("the unit's end"))

    asyncio.run(body())
    assert order == ["the step's end", "the unit's end"]


def test_event_types_are_indexed(filled: Db) -> None:
    """The `type` column mirrors each event's tag (queryable without parsing JSON)."""
    p = dataset()[0]

    async def body(archive: SqlArchive) -> list[tuple[int, str]]:
        async with archive.engine.connect() as conn:
            rows = await conn.execute(
                select(events_table.c.seq, events_table.c.type)
                .where(events_table.c.game_id == p.id)
                .order_by(events_table.c.seq)
            )
            return [(r.seq, r.type) for r in rows]

    got = filled.run(body)
    assert got == [(e.seq, type(e).__struct_config__.tag) for e in p.sim.events]
    assert Counter(t for _, t in got)["game_finished"] == 1


# ---------------------------------------------------------------- ranking, aborted games


@pytest.mark.parametrize("ranked", [True, False, None])
@pytest.mark.parametrize("player_id", [None, "bob"])
def test_list_by_ranked(filled: Db, ranked: bool | None, player_id: str | None) -> None:
    expected = newest_first(
        [
            p
            for p in dataset()
            if (ranked is None or p.ranked is ranked)
            and (player_id is None or player_id in p.player_ids)
        ]
    )
    assert expected
    pages = walk(filled, 3, ranked=ranked, player_id=player_id)
    assert [game_id for page in pages for game_id in page] == expected

    async def body(archive: SqlArchive) -> Any:
        return await archive.list_games(ranked=ranked, player_id=player_id, limit=500)

    by_id = {p.id: p for p in dataset()}
    for item in filled.run(body)[0]:
        p = by_id[item.id]
        assert (item.ranked, item.unranked_reasons, item.status) == (
            p.ranked,
            p.reasons,
            "finished",
        )
        assert item.unranked_reason == (p.reasons[0] if p.reasons else None)


def test_an_aborted_game_is_archived_unranked_without_results(empty: Db) -> None:
    done = next(p for p in dataset() if p.ranked)
    stopped = aborted_game(1)

    async def body(archive: SqlArchive) -> tuple[Any, ...]:
        assert await archive_game(archive, done.record, done.stored, done.player_ids)
        assert await archive_game(archive, stopped.record, stopped.stored, stopped.player_ids)
        assert not await archive_game(archive, stopped.record, stopped.stored, stopped.player_ids)
        return (
            await archive.get_game(stopped.id),
            await archive.events(stopped.id),
            await archive.list_games(),
            await archive.list_games(status="aborted"),
            await archive.list_games(status="finished"),
            await archive.player_stats("ann", ranked_only=False),
        )

    got, stored, (listed, _), (aborted, _), (finished, _), stats = empty.run(body)
    assert got is not None
    assert (got.status, got.ranked, got.unranked_reason) == ("aborted", False, "aborted")
    assert got.unranked_reasons == ("aborted",)
    assert got.results == ()
    assert got.version == stopped.record.state.version
    assert got.event_count == len(stopped.stored) == stopped.record.state.last_seq
    start = stopped.sim.events[0]
    assert isinstance(start, GameStarted)
    assert len(got.deck) == start.draw_pile_size  # drawn so far, then the pile left
    assert list(got.deck) == [e.card for e in stopped.sim.events if isinstance(e, CardDrawn)]
    assert [(s.player_id, s.bot, s.ranked, s.unranked_reason) for s in got.seats] == [
        ("ann", None, False, None),
        ("bob", None, False, None),
        (None, "basic", False, None),
    ]
    assert stored == stopped.stored
    assert [item.id for item in listed] == [stopped.id, done.id]  # newest first
    [summary] = aborted
    assert summary.id == stopped.id
    assert [(s.score, s.rank, s.winner) for s in summary.seats] == [(None, None, None)] * 3
    assert [item.id for item in finished] == [done.id]
    # no results: the aborted game is in no figure, ranked or not
    assert stats.games == (1 if "ann" in done.player_ids else 0)
    assert empty.count(results) == len(done.player_ids)


def test_archive_refuses_an_inconsistent_aborted_game(empty: Db) -> None:
    stopped = aborted_game(2)
    done = dataset()[0]
    finished_but_aborted = msgspec.structs.replace(done.record, aborted=True)
    live = msgspec.structs.replace(stopped.record, aborted=False)
    never_started = msgspec.structs.replace(stopped.record, state=None)

    async def body(archive: SqlArchive) -> None:
        for record, stored, ids in [
            (finished_but_aborted, done.stored, done.player_ids),  # it finished
            (live, stopped.stored, stopped.player_ids),  # still going: not ended
            (never_started, [], stopped.player_ids),
            (stopped.record, stopped.stored[:-1], stopped.player_ids),  # log cut short
            (stopped.record, stopped.stored[1:], stopped.player_ids),  # log without its start
        ]:
            with pytest.raises(ValueError, match=r"."):
                await archive_game(archive, record, stored, ids)

    empty.run(body)
    assert empty.count(games) == empty.count(seats) == empty.count(events_table) == 0


def test_player_ids_given_apart_from_the_record_are_unverified(empty: Db) -> None:
    """The archive ranks on the ids the record verified: others given with it are not."""
    p = next(p for p in dataset() if p.ranked)
    swapped = tuple(reversed(p.player_ids))
    assert swapped != p.player_ids

    async def body(archive: SqlArchive) -> Any:
        await archive_game(archive, p.record, p.stored, swapped)
        return await archive.get_game(p.id)

    got = empty.run(body)
    assert got is not None
    assert not got.ranked
    assert got.unranked_reason == "unverified_identity"


# ---------------------------------------------------------------- clocks: abandoned games,
# seats taken over, resigned


def resigned_seats(p: Played) -> set[int]:
    return {e.seat for e in p.sim.events if isinstance(e, SeatTakenOver) and e.reason == "resigned"}


@pytest.fixture(scope="module", params=DIALECTS)
def clocked_db(request: pytest.FixtureRequest) -> Iterator[Db]:
    """One database per dialect holding the clocked games (read-only for the tests)."""
    with migrated_database(request.param) as db:

        async def fill(archive: SqlArchive) -> list[bool]:
            return [
                await archive_game(archive, p.record, p.stored, p.player_ids) for p in clocked()
            ]

        assert db.run(fill) == [True] * len(clocked())
        yield db


def test_the_clocked_games_show_what_they_are_for() -> None:
    """Each scenario did what it says (checked on the logs), so the tests below test it:
    per scenario, (ranked, the seats that do not count, the seats that resigned)."""
    expected = {
        "timeout": (True, {1}, set()),
        "the only other human left": (True, {2}, set()),  # ann, the human left, counts
        "resign": (True, set(), {2}),
        "timeout then resign": (True, set(), {1}),
        "reclaim": (True, {0}, set()),
        "everyone timed out": (True, {0, 1}, set()),
        "abandoned": (False, {1}, set()),
        "unverified": (False, {1}, set()),
    }
    for name, (ranked, excluded, resigned) in expected.items():
        for p in scenario_games(name):
            assert (p.ranked, p.excluded, resigned_seats(p)) == (ranked, excluded, resigned)
    for p in scenario_games("timeout then resign"):
        takeovers = [(e.seat, e.reason) for e in p.sim.events if isinstance(e, SeatTakenOver)]
        assert takeovers == [(1, "timeouts"), (1, "resigned")]
    for p in scenario_games("reclaim"):
        assert [e.seat for e in p.sim.events if isinstance(e, SeatReclaimed)] == [0]
        assert p.sim.state.players[0].stand_in is None  # the player played on
    for p in scenario_games("abandoned"):
        assert p.reasons == ("abandoned",)
        assert p.sim.state.results is None
    # the figures differ between ranked play and every finished game
    assert expected_stats(True, clocked()) != expected_stats(False, clocked())


def test_clocked_games_round_trip(clocked_db: Db) -> None:
    async def body(archive: SqlArchive) -> list[Any]:
        return [await archive.get_game(p.id) for p in clocked()]

    for p, got in zip(clocked(), clocked_db.run(body), strict=True):
        assert got is not None
        abandoned = p.record.abandoned
        assert got.status == ("abandoned" if abandoned else "finished")
        assert (got.ranked, got.unranked_reasons) == (p.ranked, p.reasons)
        assert got.unranked_reason == (p.reasons[0] if p.reasons else None)
        assert [(s.player_id, s.ranked, s.unranked_reason) for s in got.seats] == [
            (pid, *seat) for pid, seat in zip(p.player_ids, p.seat_ranking(), strict=True)
        ]
        assert got.version == p.sim.state.version
        assert got.event_count == len(p.stored)
        assert got == archival(p.record, p.stored, p.player_ids).game  # as the core decided
        if abandoned:
            assert got.results == ()
            continue
        state = p.sim.state
        assert state.results is not None
        assert [msgspec.to_builtins(r) for r in got.results] == [
            {
                **msgspec.to_builtins(want),
                "perfect_colors": perfect_colors(want, state.rules.perfect_bonus),
                "busts": busts_of(p, want.seat),
            }
            for want in state.results
        ]
        # a resigned seat never wins and ranks below every seat that did not resign
        quit_ = resigned_seats(p)
        assert {r.seat for r in got.results if r.resigned} == quit_
        for r in got.results:
            if r.seat in quit_:
                assert not r.winner
                assert all(r.rank > o.rank for o in got.results if o.seat not in quit_)


def test_clocked_games_listed_with_their_seats(clocked_db: Db) -> None:
    async def body(archive: SqlArchive) -> tuple[Any, ...]:
        return (
            (await archive.list_games(limit=500))[0],
            (await archive.list_games(status="abandoned"))[0],
            (await archive.list_games(status="finished", limit=500))[0],
            (await archive.list_games(status="aborted"))[0],
            (await archive.list_games(status="abandoned", ranked=True))[0],
            (await archive.list_games(status="abandoned", player_id="bob"))[0],
        )

    every, abandoned, finished, aborted, ranked_abandoned, bobs = clocked_db.run(body)
    by_id = {p.id: p for p in clocked()}
    assert [item.id for item in every] == newest_first(list(clocked()))
    for item in every:
        p = by_id[item.id]
        assert item.status == ("abandoned" if p.record.abandoned else "finished")
        assert [(s.ranked, s.unranked_reason) for s in item.seats] == p.seat_ranking()
        if p.record.abandoned:
            assert [(s.score, s.rank, s.winner) for s in item.seats] == [(None,) * 3] * len(
                p.player_ids
            )
    expected = newest_first(scenario_games("abandoned"))
    assert [item.id for item in abandoned] == expected
    assert [item.id for item in finished] == newest_first(
        [p for p in clocked() if not p.record.abandoned]
    )
    assert aborted == ranked_abandoned == []
    assert [item.id for item in bobs] == newest_first(
        [p for p in scenario_games("abandoned") if "bob" in p.player_ids]
    )


@pytest.mark.parametrize("ranked_only", [True, False], ids=["ranked", "all"])
def test_clocked_player_stats(clocked_db: Db, ranked_only: bool) -> None:
    """Ranked figures count the seats that count: not bob's seats taken over."""
    expected = expected_stats(ranked_only, clocked())
    players = sorted({pid for p in clocked() for pid in p.player_ids if pid})

    async def body(archive: SqlArchive) -> list[Any]:
        return [await archive.player_stats(pid, ranked_only=ranked_only) for pid in players]

    for got in clocked_db.run(body):
        want = expected.get(got.player_id)
        if want is None:  # every seat of theirs was taken over (or in no finished game)
            assert ranked_only
            assert (got.games, got.wins, got.mean_score) == (0, 0, None)
            continue
        assert (got.games, got.wins, got.busts, got.perfect_colors) == (
            want["games"],
            want["wins"],
            want["busts"],
            want["perfect"],
        )
        assert got.mean_score == pytest.approx(Fraction(sum(want["scores"]), want["games"]))
        assert got.best_score == max(want["scores"])


@pytest.mark.parametrize("by", ["wins", "mean_score"])
@pytest.mark.parametrize("ranked_only", [True, False], ids=["ranked", "all-games"])
def test_clocked_leaderboard(clocked_db: Db, by: Any, ranked_only: bool) -> None:
    expected = expected_leaderboard(by, 1, ranked_only, clocked())

    async def body(archive: SqlArchive) -> list[Any]:
        return await archive.leaderboard(by, ranked_only=ranked_only)

    whole = clocked_db.run(body)
    assert [(r.player_id, r.games, r.wins) for r in whole] == [r[:3] for r in expected]
    assert [r.mean_score for r in whole] == pytest.approx([float(r[3]) for r in expected])


def test_clocked_logs_replay_to_the_last_public_state(clocked_db: Db) -> None:
    """Timeouts, takeovers, reclaims and resignations are in the archived log: the replay
    of each game ends on its last public state (an abandoned game's too)."""

    async def body(archive: SqlArchive) -> list[list[StoredEvent]]:
        return [await archive.events(p.id) for p in clocked()]

    decoder = msgspec.json.Decoder(AnyEvent)
    for p, stored in zip(clocked(), clocked_db.run(body), strict=True):
        assert stored == p.stored
        views = list(replay(decoder.decode(e.data) for e in stored))
        assert views[-1] == public_view(p.sim.state)


def test_archive_refuses_an_inconsistent_abandoned_game(empty: Db) -> None:
    [idle, _] = scenario_games("abandoned")
    done = scenario_games("timeout")[0]
    finished_but_abandoned = msgspec.structs.replace(done.record, abandoned=True)
    live = msgspec.structs.replace(idle.record, abandoned=False)

    async def body(archive: SqlArchive) -> None:
        for record, stored in [
            (finished_but_abandoned, done.stored),  # it finished
            (live, idle.stored),  # still going: not ended
            (idle.record, idle.stored[:-1]),  # log cut short
            (idle.record, [*idle.stored, *done.stored[-1:]]),  # a game_finished after all
        ]:
            with pytest.raises(ValueError, match=r"."):
                await archive_game(archive, record, stored, idle.player_ids)

    empty.run(body)
    assert empty.count(games) == empty.count(seats) == empty.count(events_table) == 0


# ---------------------------------------------------------------- a poisoned game


def test_a_game_the_database_refuses_is_quarantined_and_the_games_behind_it_are_archived(
    empty: Db,
) -> None:
    """A player's name with U+0000: PostgreSQL refuses the text for good (SQLite stores it).
    The archiver (service.history.archiver on the leased queue) sets the refused game aside with the
    database's reason, at once, and archives the games queued after it; put back once the
    cause is fixed, it is tried again. Never retried forever, never blocking the queue."""
    from infra.queues import MemoryQueue
    from service.core.ports import ArchiveJob
    from service.history.archiver import Archiver

    first, behind, last = dataset()[:3]
    state = first.record.state
    poisoned_players = (
        msgspec.structs.replace(state.players[0], name="Ann\x00"),
        *state.players[1:],
    )
    poisoned = msgspec.structs.replace(
        first.record, state=msgspec.structs.replace(state, players=poisoned_players)
    )
    queue = MemoryQueue("archive")
    now = [1_000.0]
    empty.unreplayable.add(first.id)  # its seat's name is not its log's

    async def body(archive: SqlArchive) -> list[tuple[str, str]]:
        archiver = Archiver(queue, archive, clock=lambda: now[0], jitter=lambda: 0.5)
        for record, p in ((poisoned, first), (behind.record, behind), (last.record, last)):
            job = ArchiveJob(record=record, events=p.stored)
            await queue.put(record.id, msgspec.msgpack.encode(job), now[0])
        assert await archiver.run_once() == 3
        aside = [(q.id, q.reason) for q in await queue.quarantined(10)]
        stored = [await archive.get_game(p.id) is not None for p in (first, behind, last)]
        return aside, stored

    aside, stored = empty.run(body)
    if empty.kind == "postgresql":
        assert [game_id for game_id, _ in aside] == [first.id]
        assert "refused" in aside[0][1]
        assert stored == [False, True, True]
    else:
        assert aside == []
        assert stored == [True, True, True]
    assert empty.count(games) == (2 if empty.kind == "postgresql" else 3)
