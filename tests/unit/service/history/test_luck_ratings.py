"""Ratings by luck-adjusted places (TEN_RATINGS_BY=luck_adjusted) on fakes: an archive in
memory (tests/support/memory_archive.py), the embedded queue, the bots' work in a thread.
The archival rates nothing; a game is rated once, when both it and its review are kept, by
its review's `adjusted_rank`; the rebuild by either places gives the numbers of the live
updates by those places, in the order they were rated, to the last bit."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TypeVar

import msgspec
import pytest

from domain.bots.review import review
from domain.game.model import AnyEvent
from infra.memory_store import MemoryGameStore
from infra.queues import MemoryQueue
from service.core.ports import ArchiveJob
from service.core.settings import Settings
from service.games.bot_work import BotWork
from service.history.archive import GameRating
from service.history.archiver import Archiver
from service.history.archiving import (
    archival,
    archive_game,
    placed,
    rate_reviewed,
    rebuild_ratings,
    seat_facts,
)
from service.history.ratings import RatedSeat, rated_table, replay
from service.history.reviews import QUEUE, ReviewOut, ReviewReaction, Reviews, adjusted_ranks
from service.jobs.worker import Job
from service.reactions.relay import Change
from tests.support.ended_games import Played, aborted_game, clocked, dataset, rated_seats
from tests.support.memory_archive import MemoryArchive

T = TypeVar("T")
_decoder = msgspec.json.Decoder(AnyEvent)


def run(awaitable: Awaitable[T]) -> T:
    async def main() -> T:
        return await awaitable

    return asyncio.run(main())


def everything() -> list[Played]:
    return [*dataset(), *clocked(), *(aborted_game(i) for i in (3, 7))]


def rated() -> list[Played]:
    return [p for p in everything() if rated_seats(p)]


def upside_down(p: Played) -> list[int]:
    """Made-up luck-adjusted ranks (seat order): the results' ranks reversed, so that a
    rating by the results' ranks would show."""
    ranks = {r.seat: r.rank for r in p.record.state.results}
    worst = max(ranks.values())
    return [worst + 1 - ranks[seat] for seat in range(len(p.player_ids))]


def archive_all(archive: MemoryArchive, played: list[Played], by: str) -> None:
    async def body() -> None:
        for p in played:
            await archive_game(archive, p.record, p.stored, p.player_ids, by=by)  # type: ignore[arg-type]

    run(body())


def review_all(archive: MemoryArchive, played: list[Played]) -> list[bool]:
    """Each game's (made-up) review landing, in the order given."""

    async def body() -> list[bool]:
        return [await rate_reviewed(archive, p.id, upside_down(p)) for p in played]

    return run(body())


def by_luck(played: list[Played]) -> list[list[RatedSeat]]:
    """The tables rated by the made-up adjusted ranks, in the order given."""
    return [
        rated_table(
            placed(seat_facts(archival(p.record, p.stored, p.player_ids).game), upside_down(p))
        )
        for p in played
    ]


def outcomes_of(rated_games: list[GameRating]) -> list[tuple[str, list]]:
    return [(g.game_id, list(g.outcomes)) for g in rated_games]


# ---------------------------------------------------------------- live updates


def test_by_luck_adjusted_places_the_archival_rates_nothing() -> None:
    archive = MemoryArchive()
    archive_all(archive, everything(), "luck_adjusted")
    assert len(archive.state.games) == len(everything())
    assert archive.state.rated == []
    assert archive.state.ratings == {}


def test_a_reviewed_game_is_rated_once_by_its_adjusted_ranks() -> None:
    p = next(q for q in rated() if len(rated_seats(q)) >= 3)
    archive = MemoryArchive()
    assert review_all(archive, [p]) == [False]  # not archived yet: its archival asks again
    archive_all(archive, [p], "luck_adjusted")
    assert review_all(archive, [p, p]) == [True, False]  # once
    (game,) = archive.state.rated
    ranks = upside_down(p)
    seat_of = {pid: seat for seat, pid in enumerate(p.player_ids)}
    assert [o.rank for o in game.outcomes] == [ranks[seat_of[o.player_id]] for o in game.outcomes]
    assert [o.rank for o in game.outcomes] != [s.rank for s in rated_seats(p)]
    assert archive.state.ratings == replay(by_luck([p]))[0]


def test_a_game_rated_by_its_results_before_a_switch_is_not_rated_again() -> None:
    p = rated()[0]
    archive = MemoryArchive()
    archive_all(archive, [p], "results")
    before = archive.state.copy()
    assert review_all(archive, [p]) == [False]
    assert archive.state.rated == before.rated
    assert archive.state.ratings == before.ratings


def test_an_unrated_game_is_not_rated_by_its_review() -> None:
    p = next(q for q in everything() if q.record.state.results and not rated_seats(q))
    archive = MemoryArchive()
    archive_all(archive, [p], "luck_adjusted")
    assert review_all(archive, [p]) == [False]
    assert archive.state.rated == []


# ---------------------------------------------------------------- the rebuild


def test_the_rebuild_by_luck_adjusted_places_equals_the_live_updates() -> None:
    """Reviews land in another order than the games were archived: the rating order is the
    order they were rated, and the rebuild replays it."""
    archive = MemoryArchive()
    archive_all(archive, everything(), "luck_adjusted")
    landing = rated()
    random.Random(7).shuffle(landing)
    assert all(review_all(archive, landing))
    live = archive.state.copy()
    assert [g.game_id for g in live.rated] == [p.id for p in landing]
    assert live.ratings == replay(by_luck(landing))[0]
    adjusted = {p.id: upside_down(p) for p in rated()}
    assert run(rebuild_ratings(archive, adjusted)) == len(rated())
    assert outcomes_of(archive.state.rated) == outcomes_of(live.rated)
    assert archive.state.ratings == live.ratings


def test_the_rebuild_switches_an_archive_both_ways() -> None:
    """An archive rated by results, rebuilt by luck-adjusted places: the numbers of an
    archive rated live by them in the same order; and back to the results' numbers."""
    by_results = MemoryArchive()
    archive_all(by_results, everything(), "results")
    first = by_results.state.copy()
    by_luck_live = MemoryArchive()
    archive_all(by_luck_live, everything(), "luck_adjusted")
    review_all(by_luck_live, rated())  # reviewed in the order archived, as rated by results

    adjusted = {p.id: upside_down(p) for p in rated()}
    assert run(rebuild_ratings(by_results, adjusted)) == len(rated())
    assert outcomes_of(by_results.state.rated) == outcomes_of(by_luck_live.state.rated)
    assert by_results.state.ratings == by_luck_live.state.ratings
    assert by_results.state.ratings != first.ratings

    assert run(rebuild_ratings(by_results)) == len(rated())
    assert outcomes_of(by_results.state.rated) == outcomes_of(first.rated)
    assert by_results.state.ratings == first.ratings


def test_the_luck_adjusted_rebuild_leaves_a_game_without_a_review_unrated() -> None:
    archive = MemoryArchive()
    archive_all(archive, everything(), "results")
    *reviewed, left = rated()
    adjusted = {p.id: upside_down(p) for p in reviewed}
    assert run(rebuild_ratings(archive, adjusted)) == len(reviewed)
    assert [g.game_id for g in archive.state.rated] == [p.id for p in reviewed]
    assert left.id not in {g.game_id for g in archive.state.rated}


# ---------------------------------------------------------------- with the reviews' job


class CountingBots(BotWork):
    """The bots' work in a thread, counting the reviews computed."""

    def __init__(self) -> None:
        super().__init__(None)
        self.runs = 0

    async def run(self, search: bool, step: Callable[..., T], *args: object) -> T:
        self.runs += 1
        return await super().run(search, step, *args)


def real_ranks(p: Played) -> list[int]:
    """The domain review's luck-adjusted ranks of the game, seat order."""
    found = review(_decoder.decode(e.data) for e in p.stored)
    return [s.adjusted_rank for s in sorted(found.seats, key=lambda s: s.seat)]


def reordered_rated() -> Played:
    """A rated game whose luck-adjusted order is not its results' (a rank copied would show)."""
    return next(
        p
        for p in rated()
        if len(rated_seats(p)) >= 2
        and not p.record.tournament
        and real_ranks(p) != [r.rank for r in p.record.state.results]
    )


def the_job(p: Played) -> Job:
    payload = msgspec.msgpack.encode(ArchiveJob(record=p.record, events=p.stored))
    return Job(id=p.id, payload=payload, token=1, failures=0)


def luck_service(store: MemoryGameStore, archive: MemoryArchive) -> tuple[Archiver, Reviews]:
    reviews = Reviews(
        store, archive, MemoryQueue(QUEUE), CountingBots(), ratings_by="luck_adjusted",
        max_failures=3, clock=lambda: 1_760_000_000.0, jitter=lambda: 0.5,
    )  # fmt: skip
    archiver = Archiver(MemoryQueue("archive"), archive, ratings_by="luck_adjusted")
    return archiver, reviews


def ended(reviews: Reviews, p: Played) -> Awaitable[None]:
    """The relay's reaction to the game's end (through the outbox), as the service wires it."""
    return ReviewReaction(reviews.queue, clock=reviews.clock).react(
        Change(None, p.record, p.stored, ())
    )


def test_the_games_end_queues_its_review_and_the_job_rates_the_game_by_it() -> None:
    p = reordered_rated()
    archive = MemoryArchive()
    archiver, reviews = luck_service(MemoryGameStore(), archive)

    async def body() -> tuple[int, int]:
        await ended(reviews, p)
        await ended(reviews, p)  # the relay again (at least once): one review queued
        await archiver.handle(the_job(p))
        assert archive.state.rated == []  # archived, not rated: its review is queued
        assert await reviews.queue.queued(p.id)
        handled = await reviews.worker.run_once()
        await archiver.handle(the_job(p))  # archived again (a retry): nothing more
        return handled, await reviews.worker.run_once()

    assert run(body()) == (1, 0)
    (game,) = archive.state.rated
    game_kept = run(archive.get_game(p.id))
    assert game_kept is not None
    want = rated_table(placed(seat_facts(game_kept), real_ranks(p)))
    assert [(o.player_id, o.rank) for o in game.outcomes] == [(s.player_id, s.rank) for s in want]
    assert archive.state.ratings == replay([want])[0]
    assert set(archive.reviews) == {p.id}


def test_a_game_no_rating_could_count_queues_no_review_at_its_end() -> None:
    """Aborted, or with fewer than two player ids: the reaction queues nothing."""
    p = reordered_rated()
    ids = p.record.player_ids
    one_id = msgspec.structs.replace(p.record, player_ids=(ids[0],) + (None,) * (len(ids) - 1))
    stopped = aborted_game(0)
    _, reviews = luck_service(MemoryGameStore(), MemoryArchive())

    async def body() -> list[bool]:
        queued = []
        for record, stored in (
            (one_id, p.stored),
            (stopped.record, stopped.stored),
            (p.record, p.stored),
        ):
            await ReviewReaction(reviews.queue, clock=reviews.clock).react(
                Change(None, record, stored, ())
            )
            queued.append(await reviews.queue.queued(record.id))
        return queued

    assert stopped.record.status == "aborted"
    assert len([i for i in stopped.record.player_ids if i]) >= 2
    assert run(body()) == [False, False, True]


def test_a_review_kept_before_the_archival_rates_the_game_at_archival() -> None:
    """Reviewed while still in the live store (not archived: nothing to rate), then
    archived: the archiver finds the review and rates the game, nothing queued."""
    p = reordered_rated()
    store, archive = MemoryGameStore(), MemoryArchive()
    archiver, reviews = luck_service(store, archive)

    async def body() -> int:
        await store.create(p.record, p.stored, ttl=3600)
        assert await reviews.review(p.id) is None
        assert await reviews.worker.run_once() == 1
        assert archive.state.rated == []  # reviewed, not archived yet
        await archiver.handle(the_job(p))
        return await reviews.worker.run_once()

    assert run(body()) == 0
    assert [g.game_id for g in archive.state.rated] == [p.id]
    assert reviews.bots.runs == 1  # type: ignore[attr-defined]


def test_the_rebuilds_ranks_compute_the_missing_reviews_once() -> None:
    """`adjusted_ranks`: a rated game's review computed and kept when missing, a kept one
    read; games not rated are not reviewed."""
    reviewed_before, missing = [p for p in rated() if not p.record.tournament][:2]
    unrated = next(q for q in everything() if q.record.state.results and not rated_seats(q))
    archive = MemoryArchive()
    archive_all(archive, [reviewed_before, missing, unrated], "results")
    bots = CountingBots()

    async def body() -> tuple[dict[str, list[int]], list[str]]:
        await rate_reviewed(archive, "none", [])  # nothing archived of that id: nothing
        early = review(_decoder.decode(e.data) for e in reviewed_before.stored)
        kept = ReviewOut(game_id=reviewed_before.id, **msgspec.structs.asdict(early))
        await archive.save_review(reviewed_before.id, msgspec.json.encode(kept), datetime.now(UTC))
        return await adjusted_ranks(archive, bots, page=1)

    ranks, failed = run(body())
    assert failed == []
    assert ranks == {p.id: real_ranks(p) for p in (reviewed_before, missing)}
    assert bots.runs == 1
    assert set(archive.reviews) == {reviewed_before.id, missing.id}


# ---------------------------------------------------------------- the setting


def test_the_setting_names_the_places() -> None:
    assert Settings.from_env({}).archive.ratings_by == "results"
    env = {"TEN_RATINGS_BY": "luck_adjusted"}
    assert Settings.from_env(env).archive.ratings_by == "luck_adjusted"
    with pytest.raises(ValueError, match="TEN_RATINGS_BY must be one of results, luck_adjusted"):
        Settings.from_env({"TEN_RATINGS_BY": "luck"})
