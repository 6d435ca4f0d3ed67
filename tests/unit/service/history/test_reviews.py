"""The review use case (`service.history.reviews`) on fakes: the embedded store and queue, an
archive in memory, the bots' work in a thread."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TypeVar

import msgspec
import pytest

from domain.bots.review import LuckAdjusted, review
from domain.game.model import AnyEvent
from infra.memory_store import MemoryGameStore
from infra.queues import MemoryQueue
from infra.quotas import MemoryQuotas
from service.core.errors import ServiceError
from service.games.bot_work import BotWork, bots_busy
from service.games.use_cases import encode_events
from service.history.archiving import archive_game
from service.history.reviews import QUEUE, REVIEW_SECONDS, ReviewOut, Reviews, reviewed
from service.jobs.worker import requeue_all
from tests.support.ended_games import Played, aborted_game, dataset
from tests.support.games import started
from tests.support.memory_archive import MemoryArchive

T = TypeVar("T")
_decoder = msgspec.json.Decoder(AnyEvent)


def run(awaitable: Awaitable[T]) -> T:
    async def main() -> T:
        return await awaitable

    return asyncio.run(main())


def reviews(
    store: MemoryGameStore | None = None,
    archive: MemoryArchive | None = None,
    bots: BotWork | None = None,
    clock: Clock | None = None,
    **options: object,
) -> Reviews:
    return Reviews(
        store or MemoryGameStore(),
        archive or MemoryArchive(),
        MemoryQueue(QUEUE),
        bots or BotWork(None),
        max_failures=3,
        clock=clock or Clock(),
        jitter=lambda: 0.5,
        **options,  # type: ignore[arg-type]
    )


class Clock:
    """A clock the test moves on (unix seconds)."""

    def __init__(self, now: float = 1_760_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class FlakyBots(BotWork):
    """The bots' work (in a thread) refusing every step with `refusal()` until it is set to
    None: a bug, a crashed pool, a pool with no room."""

    def __init__(self, refusal: Callable[[], Exception] | None) -> None:
        super().__init__(None)
        self.refusal = refusal
        self.runs = 0

    async def run(self, search: bool, step: Callable[..., T], *args: object) -> T:
        self.runs += 1
        if self.refusal is not None:
            raise self.refusal()
        return await super().run(search, step, *args)


def expected(played: Played) -> ReviewOut:
    """The domain's review of the game's public log, with its id."""
    found = review(_decoder.decode(e.data) for e in played.stored)
    return ReviewOut(game_id=played.id, **msgspec.structs.asdict(found))


def four_seats() -> Played:
    return next(p for p in dataset() if len(p.record.state.players) == 4)


def test_an_archived_game_is_reviewed_once_in_the_background() -> None:
    played = four_seats()
    archive = MemoryArchive()

    async def body() -> tuple[bytes | None, int, bytes | None, int, bytes | None]:
        await archive_game(archive, played.record, played.stored, played.player_ids)
        use = reviews(archive=archive)
        first = await use.review(played.id)  # queued: None
        again = await use.review(played.id)  # still queued once
        handled = await use.worker.run_once()
        done = await use.review(played.id)
        handled_after = await use.worker.run_once()  # nothing left to do
        return first, handled, done, handled_after, again

    first, handled, done, handled_after, again = run(body())
    assert first is None
    assert again is None
    assert handled == 1
    assert handled_after == 0
    assert done is not None
    assert msgspec.json.decode(done, type=ReviewOut) == expected(played)
    assert archive.reviews == {played.id: done}


def test_the_luck_adjusted_results_are_the_reviews_once_it_is_computed() -> None:
    """`Reviews.luck_adjusted`: None while the review is queued (the call queued it), then
    each seat's luck-adjusted result as the review says it, in seat order."""
    played = four_seats()
    archive = MemoryArchive()

    async def body() -> tuple[object, object]:
        await archive_game(archive, played.record, played.stored, played.player_ids)
        use = reviews(archive=archive)
        waiting = await use.luck_adjusted(played.id)
        await use.worker.run_once()
        return waiting, await use.luck_adjusted(played.id)

    waiting, found = run(body())
    assert waiting is None
    seats = expected(played).seats
    assert found == tuple(
        LuckAdjusted(margin=s.adjusted_margin, score=s.adjusted_score, rank=s.adjusted_rank)
        for s in sorted(seats, key=lambda s: s.seat)
    )
    assert len(found) == 4


def test_a_finished_game_still_in_the_store_is_reviewed_from_its_live_log() -> None:
    played = four_seats()
    store, archive = MemoryGameStore(), MemoryArchive()

    async def body() -> bytes | None:
        await store.create(played.record, played.stored, ttl=3600)
        use = reviews(store, archive)
        assert await use.review(played.id) is None
        await use.worker.run_once()
        return await use.review(played.id)

    done = run(body())
    assert done is not None
    assert msgspec.json.decode(done, type=ReviewOut) == expected(played)
    assert archive.state.games == {}  # the archive holds the review alone
    assert set(archive.reviews) == {played.id}


ADJUSTED = ("adjusted_margin", "adjusted_score", "adjusted_rank")


def kept_before_adjusted(played: Played) -> bytes:
    """The game's review as kept before the luck-adjusted results: its seats without them."""
    found = msgspec.to_builtins(expected(played))
    for seat in found["seats"]:
        for key in ADJUSTED:
            del seat[key]
    return msgspec.json.encode(found)


def reordered_by_luck() -> Played:
    """A game whose luck-adjusted order is not its results' (a rank copied would show)."""
    return next(
        p
        for p in dataset()
        if p.record.state.results is not None
        and [s.adjusted_rank for s in expected(p).seats] != [r.rank for r in p.record.state.results]
    )


@pytest.mark.parametrize("where", ["archive", "store"])
def test_a_review_kept_before_the_luck_adjusted_results_is_answered_with_them(where) -> None:
    """From the game's results (the archive's, or the live store's while the game is there),
    the same as the review computes today; the row stays as kept and nothing is queued."""
    played = reordered_by_luck()
    store, archive = MemoryGameStore(), MemoryArchive()
    old = kept_before_adjusted(played)

    async def body() -> tuple[bytes | None, int]:
        if where == "archive":
            await archive_game(archive, played.record, played.stored, played.player_ids)
        else:
            await store.create(played.record, played.stored, ttl=3600)
        await archive.save_review(played.id, old, datetime.now(UTC))
        use = reviews(store, archive)
        answer = await use.review(played.id)
        return answer, await use.worker.run_once()

    answer, handled = run(body())
    assert answer is not None
    want = expected(played)
    got = msgspec.json.decode(answer, type=ReviewOut)
    assert got == want  # the adjusted fields equal (floats to the bit), every other as kept
    assert [s.adjusted_rank for s in got.seats] != [r.rank for r in played.record.state.results]
    assert archive.reviews == {played.id: old}
    assert handled == 0


def test_a_review_kept_before_the_luck_adjusted_results_of_a_game_no_longer_kept_is_404():
    played = four_seats()
    archive = MemoryArchive()

    async def body() -> None:
        await archive.save_review(played.id, kept_before_adjusted(played), datetime.now(UTC))
        await reviews(archive=archive).review(played.id)

    with pytest.raises(ServiceError) as refused:
        run(body())
    assert refused.value.code == "game_not_found"


def test_only_a_finished_game_is_reviewed() -> None:
    live, events = started()
    stopped = aborted_game(3)
    store, archive = MemoryGameStore(), MemoryArchive()

    async def body() -> dict[str, str]:
        await store.create(live, encode_events(events), ttl=3600)
        await archive_game(archive, stopped.record, stopped.stored, stopped.player_ids)
        use = reviews(store, archive)
        codes = {}
        for game_id in (live.id, stopped.id, "f" * 20, "not an id!"):
            with pytest.raises(ServiceError) as refused:
                await use.review(game_id)
            codes[game_id] = refused.value.code
        assert await use.queue.backlog() == 0  # nothing was queued
        return codes

    assert run(body()) == {
        live.id: "game_not_reviewable",
        stopped.id: "game_not_reviewable",
        "f" * 20: "game_not_found",
        "not an id!": "game_not_found",
    }
    assert archive.reviews == {}


def test_a_log_that_cannot_be_reviewed_is_set_aside_not_retried() -> None:
    played = four_seats()
    archive = MemoryArchive()

    async def body() -> tuple[list, int]:
        await archive_game(archive, played.record, played.stored, played.player_ids)
        kept = archive.state.games[played.id]
        trimmed = kept.events[: len(kept.events) // 2]  # a log cut short: no end
        archive.state.games[played.id] = msgspec.structs.replace(kept, events=trimmed)
        use = reviews(archive=archive)
        assert await use.review(played.id) is None
        await use.worker.run_once()
        return await use.queue.quarantined(10), await use.queue.backlog()

    quarantined, backlog = run(body())
    assert [q.id for q in quarantined] == [played.id]
    assert "finished" in quarantined[0].reason
    assert backlog == 0
    assert archive.reviews == {}


def test_the_pool_function_refuses_what_is_not_a_finished_log() -> None:
    played = four_seats()
    log = [e.data for e in played.stored]
    assert msgspec.json.decode(reviewed(played.id, log), type=ReviewOut) == expected(played)
    with pytest.raises(ValueError, match="finished"):
        reviewed(played.id, log[: len(log) // 2])
    with pytest.raises(ValueError, match="not an event log"):
        reviewed(played.id, [b"{"])


def test_a_review_set_aside_is_refused_for_good_until_requeued_then_computed() -> None:
    """A job failing `max_failures` (3) times in a row is quarantined: the review is then
    `review_failed` (no more 202 to poll on), asked again or not, until it is put back as
    `python -m service.cli jobs requeue reviews <id>` does; then it is computed as usual."""
    played = four_seats()
    archive, clock = MemoryArchive(), Clock()
    bots = FlakyBots(lambda: RuntimeError("the pool broke"))

    async def body() -> tuple[list[str], list[str], bytes | None]:
        await archive_game(archive, played.record, played.stored, played.player_ids)
        use = reviews(archive=archive, bots=bots, clock=clock)
        answers = []
        for _ in range(3):  # 202 (None) while it fails and is retried with a backoff
            answers.append("pending" if await use.review(played.id) is None else "done")
            await use.worker.run_once()
            clock.now += 60  # past the backoff
        for _ in range(2):  # quarantined: refused, and nothing queued again
            with pytest.raises(ServiceError) as refused:
                await use.review(played.id)
            answers.append(refused.value.code)
            assert await use.worker.run_once() == 0
        aside = [q.id for q in await use.queue.quarantined(10)]
        bots.refusal = None  # the cause fixed, the operator puts it back
        assert await requeue_all(use.queue, [played.id], clock()) == 1
        after = ["pending" if await use.review(played.id) is None else "done"]
        assert await use.worker.run_once() == 1
        return answers + after, aside, await use.review(played.id)

    answers, aside, done = run(body())
    assert answers == ["pending"] * 3 + ["review_failed"] * 2 + ["pending"]
    assert aside == [played.id]
    assert bots.runs == 4  # three failures, then the review
    assert done is not None
    assert msgspec.json.decode(done, type=ReviewOut) == expected(played)
    assert archive.reviews == {played.id: done}


def test_a_log_set_aside_as_unreviewable_is_review_failed_too() -> None:
    played = four_seats()
    archive = MemoryArchive()

    async def body() -> str:
        await archive_game(archive, played.record, played.stored, played.player_ids)
        kept = archive.state.games[played.id]
        trimmed = kept.events[: len(kept.events) // 2]
        archive.state.games[played.id] = msgspec.structs.replace(kept, events=trimmed)
        use = reviews(archive=archive)
        assert await use.review(played.id) is None
        await use.worker.run_once()
        with pytest.raises(ServiceError) as refused:
            await use.review(played.id)
        return refused.value.code

    assert run(body()) == "review_failed"


def test_a_full_pool_holds_the_reviews_back_without_blaming_the_job() -> None:
    """The bots' pool full (`bots_busy`, the players' bots first) is no failure of the
    review: tried again and again, it is never set aside, and it is computed once there is
    room."""
    played = four_seats()
    archive, clock, bots = MemoryArchive(), Clock(), FlakyBots(bots_busy)

    async def body() -> tuple[list[int], int, bytes | None]:
        await archive_game(archive, played.record, played.stored, played.player_ids)
        use = reviews(archive=archive, bots=bots, clock=clock)
        assert await use.review(played.id) is None
        failures = []
        for _ in range(6):  # more than max_failures (3)
            with pytest.raises(
                ServiceError, match="bots_busy"
            ):  # the worker waits (service.jobs.worker)
                await use.worker.run_once()
            clock.now += 60
            assert await use.review(played.id) is None  # still 202
            failures += [job.failures for job in await use.queue.claim(clock(), 0.0, 9)]
        aside = len(await use.queue.quarantined(10))
        bots.refusal = None  # room again
        clock.now += 60
        await use.worker.run_once()
        return failures, aside, await use.review(played.id)

    failures, aside, done = run(body())
    assert failures == [0] * 6  # peeked at (a lease of 0 s): never a failure counted
    assert aside == 0
    assert bots.runs == 7
    assert done is not None
    assert archive.reviews == {played.id: done}


def finished_games(count: int) -> list[Played]:
    return [p for p in dataset() if p.record.status == "finished"][:count]


def test_past_the_queue_bound_a_new_review_is_429_too_many_reviews_and_nothing_is_queued():
    """TEN_REVIEW_QUEUE: with that many reviews waiting, a review of another game is refused
    with Retry-After and queues nothing; one waiting already is still answered pending, and
    the next review gets in once one is computed."""
    games = finished_games(3)
    archive = MemoryArchive()

    async def body() -> None:
        for played in games:
            await archive_game(archive, played.record, played.stored, played.player_ids)
        use = reviews(archive=archive, bound=2)
        first, second, third = (p.id for p in games)
        assert await use.review(first) is None
        assert await use.review(second) is None
        with pytest.raises(ServiceError) as refused:
            await use.review(third)
        assert refused.value.code == "too_many_reviews"
        assert (refused.value.retry_after or 0) >= 1
        assert await use.queue.backlog() == 2
        assert not await use.queue.queued(third)
        assert await use.review(first) is None  # waiting already: no new one
        assert await use.worker.run_once() == 2
        assert await use.review(third) is None  # room again
        assert await use.queue.queued(third)

    run(body())


def test_past_a_callers_quota_its_next_review_is_429_and_the_others_are_not_affected():
    """TEN_MAX_PENDING_REVIEWS through the one quota mechanism (service.core.quotas): an owner
    waiting for that many reviews is refused another (nothing queued), another owner and
    the platform (no owner) are not; a review computed frees its place."""
    games = finished_games(4)
    archive = MemoryArchive()

    async def body() -> None:
        for played in games:
            await archive_game(archive, played.record, played.stored, played.player_ids)
        clock = Clock()
        use = reviews(archive=archive, clock=clock, quotas=MemoryQuotas(), per_caller=2)
        first, second, third, fourth = (p.id for p in games)
        assert await use.review(first, "address:one") is None
        assert await use.review(second, "address:one") is None
        assert await use.review(first, "address:one") is None  # asked again: no new one
        with pytest.raises(ServiceError) as refused:
            await use.review(third, "address:one")
        assert refused.value.code == "too_many_pending_reviews"
        assert (refused.value.retry_after or 0) >= 1
        assert not await use.queue.queued(third)
        assert await use.review(third, None) is None  # the platform: no quota
        clock.now += REVIEW_SECONDS  # one's second review is due a review's time later
        assert await use.worker.run_once() == 3  # all three computed
        assert await use.review(fourth, "address:one") is None  # its reviews freed its places
        assert await use.queue.queued(fourth)

    run(body())


def test_a_callers_waiting_reviews_queue_behind_another_callers_first():
    """Fair between callers: an owner's k-th waiting review is due k-1 reviews' time after
    its request, so another owner's first review is computed before the flooder's second."""
    games = finished_games(4)
    archive = MemoryArchive()

    async def body() -> None:
        for played in games:
            await archive_game(archive, played.record, played.stored, played.player_ids)
        clock = Clock()
        use = reviews(archive=archive, clock=clock, quotas=MemoryQuotas(), per_caller=3, batch=1)
        flood, other = [p.id for p in games[:3]], games[3].id
        for game_id in flood:
            assert await use.review(game_id, "address:flood") is None
        assert await use.review(other, "address:other") is None
        done = []
        for _ in range(4):
            await use.worker.run_once()
            done += [g for g in (*flood, other) if g not in done and not await use.queue.queued(g)]
            clock.now += REVIEW_SECONDS
        assert done == [flood[0], other, flood[1], flood[2]]

    run(body())
