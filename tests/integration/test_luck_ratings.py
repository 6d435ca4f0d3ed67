"""Ratings by luck-adjusted places (TEN_RATINGS_BY=luck_adjusted) in the SQL archive, on
PostgreSQL and SQLite: a ranked game is rated once its review is kept, its players placed
by the review's `adjusted_rank`; `python -m service.cli ratings rebuild --by` switches an
archive from one kind of places to the other and gives the numbers of the live updates,
to the last bit. The reviews are the domain's, computed in a thread; the jobs are run until
none is left (facts, no timing)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from functools import cache

import msgspec
import pytest

from domain.bots.review import review
from domain.game.model import AnyEvent
from infra.archive import SqlArchive
from infra.archive.models import rated_games
from infra.memory_store import MemoryGameStore
from infra.queues import MemoryQueue
from service.core.ports import ArchiveJob
from service.games.bot_work import BotWork
from service.history.archiver import Archiver
from service.history.archiving import archival, archive_game, placed, seat_facts
from service.history.ratings import RatedSeat, rated_table, replay
from service.history.reviews import QUEUE, ReviewReaction, Reviews
from service.jobs.worker import Job
from service.reactions.relay import Change
from tests.servers import ROOT
from tests.support.archived_games import (
    DIALECTS,
    Db,
    migrated_database,
    rating_order,
    snapshot,
    stored_ratings,
)
from tests.support.ended_games import Played, dataset, rated_seats

_decoder = msgspec.json.Decoder(AnyEvent)


@cache
def games() -> tuple[Played, ...]:
    """Six rated games of two to four seats, players in common, two of them placed
    otherwise by luck than by their results."""
    return tuple(p for p in dataset() if rated_seats(p))[:6]


@cache
def adjusted(game_id: str) -> tuple[int, ...]:
    """The domain review's luck-adjusted ranks of the game, seat order."""
    p = next(q for q in games() if q.id == game_id)
    found = review(_decoder.decode(e.data) for e in p.stored)
    return tuple(s.adjusted_rank for s in sorted(found.seats, key=lambda s: s.seat))


def by_luck(order: list[str]) -> list[list[RatedSeat]]:
    by_id = {p.id: p for p in games()}
    return [
        rated_table(
            placed(seat_facts(archival(p.record, p.stored, p.player_ids).game), adjusted(p.id))
        )
        for p in (by_id[game_id] for game_id in order)
    ]


def by_results(order: list[str]) -> list[list[RatedSeat]]:
    by_id = {p.id: p for p in games()}
    return [rated_seats(by_id[game_id]) for game_id in order]


def test_the_games_are_placed_otherwise_by_luck() -> None:
    ids = [p.id for p in games()]
    assert by_luck(ids) != by_results(ids)
    assert {len(t) for t in by_luck(ids)} >= {2, 3, 4}


@pytest.fixture(params=DIALECTS)
def empty(request: pytest.FixtureRequest) -> Iterator[Db]:
    with migrated_database(request.param) as db:
        yield db


def rebuild_command(db: Db, *by: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "service.cli", "ratings", "rebuild", "--url", db.url, *by],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def live_by_luck(db: Db, played: list[Played]) -> tuple[list[str], int]:
    """The reactions, the archiver and the review job as the service runs them by
    luck-adjusted places: each game's end (its review queued) and archival, then the jobs run until none is left. The games
    rated once archived, and the reviews computed."""

    async def body(archive: SqlArchive) -> tuple[list[str], int]:
        reviews = Reviews(
            MemoryGameStore(), archive, MemoryQueue(QUEUE), BotWork(None),
            ratings_by="luck_adjusted", max_failures=1, jitter=lambda: 0.5,
        )  # fmt: skip
        archiver = Archiver(MemoryQueue("archive"), archive, ratings_by="luck_adjusted")
        ended = ReviewReaction(
            reviews.queue, clock=reviews.clock
        )  # the relay's reaction to each game's end
        for p in played:
            await ended.react(Change(None, p.record, p.stored, ()))
            payload = msgspec.msgpack.encode(ArchiveJob(record=p.record, events=p.stored))
            await archiver.handle(Job(id=p.id, payload=payload, token=1, failures=0))
        async with archive.engine.connect() as conn:
            rated_at_archival = [r.game_id for r in await conn.execute(rated_games.select())]
        computed = 0
        while done := await reviews.worker.run_once():
            computed += done
        assert await reviews.queue.quarantined(10) == []
        return rated_at_archival, computed

    return db.run(body)


def test_a_ranked_game_is_rated_once_its_review_lands(empty: Db) -> None:
    played = list(games())
    rated_at_archival, computed = live_by_luck(empty, played)
    assert rated_at_archival == []  # archived: not rated until reviewed
    assert computed == len(played)
    order = rating_order(empty)
    assert sorted(order) == sorted(p.id for p in played)  # each rated once
    history = snapshot(empty)["history"]
    # player_id, seq, game_id, ..., rank: each seat placed by its review's adjusted rank
    ranks = {(row[2], row[0]): row[4] for row in history}
    for p in played:
        for seat, pid in enumerate(p.player_ids):
            if (p.id, pid) in ranks:
                assert ranks[p.id, pid] == adjusted(p.id)[seat]
    assert stored_ratings(empty) == replay(by_luck(order))[0]  # exact floats
    assert stored_ratings(empty) != replay(by_results(order))[0]


def test_the_rebuild_equals_the_live_updates_by_luck(empty: Db) -> None:
    live_by_luck(empty, list(games()))
    live = snapshot(empty)
    assert "ok: 6 rated games replayed (by luck_adjusted)" in rebuild_command(
        empty, "--by", "luck_adjusted"
    )
    assert snapshot(empty) == live  # every row, every float, the same seqs


def test_rebuild_by_switches_an_archive_between_the_places(empty: Db) -> None:
    """Rated by results at archival; rebuilt by luck-adjusted places (the reviews computed
    by the command, then kept): the numbers of those places in the same order, as live
    updates by them give; and back."""
    played = list(games())

    async def archive_all(archive: SqlArchive) -> None:
        for p in played:
            await archive_game(archive, p.record, p.stored, p.player_ids)

    empty.run(archive_all)
    by_results_live = snapshot(empty)
    order = rating_order(empty)
    assert stored_ratings(empty) == replay(by_results(order))[0]

    assert "(by luck_adjusted)" in rebuild_command(empty, "--by", "luck_adjusted")
    assert rating_order(empty) == order
    assert stored_ratings(empty) == replay(by_luck(order))[0]

    async def kept(archive: SqlArchive) -> list[bool]:
        return [await archive.get_review(p.id) is not None for p in played]

    assert empty.run(kept) == [True] * len(played)  # as the review job keeps them

    assert "ok: 6 rated games replayed (by results)" in rebuild_command(empty, "--by", "results")
    assert snapshot(empty) == by_results_live
