"""The deadline poller (service.reactions.deadlines) on the embedded store, with an injected clock and a
`fire` of its own: a stand-in for `GameService.fire_due` that reads the game, and when it is
due makes a "timeout" save (its due moves a turn later), else reports it moved on.

What the poller owes: each due game fired exactly once among several pollers sharing one
store; nothing fired before its due; a claim left by a poller that died (or whose fire
failed) fired by another once its lease lapsed; a game that moved on rescheduled at its
due; a store that cannot be reached is a pause that doubles, never a crash.
"""

from __future__ import annotations

import asyncio
import logging
import threading

import pytest

from domain.game.engine import new_game
from infra.memory_store import MemoryGameStore
from infra.queues import MemoryQueue
from service.core.model import GameRecord
from service.core.ports import DueGame, Fired, StoreUnavailable
from service.reactions.deadlines import MAX_BACKOFF, DeadlinePoller
from service.reactions.relay import DUE_MOVED, Relay
from tests.support.aio import dropping_sleep, run_without_waiting

NOW = 1_760_000_000.5
TURN = 30.0  # a timeout moves the game's due this much later
LEASE = 15.0
POLL = 0.2
TTL = 3600


class Clock:
    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Game:
    """The stand-in for `GameService.fire_due` on one store: what it was called for."""

    def __init__(self, store, clock: Clock) -> None:
        self.store = store
        self.clock = clock
        self.fired: list[str] = []  # every call
        self.timeouts: list[str] = []  # the games it timed out
        self.failing: set[str] = set()  # these raise
        self.unavailable = False  # every call raises StoreUnavailable
        self.in_flight = 0
        self.most_in_flight = 0

    async def fire_due(self, game_id: str) -> Fired:
        self.fired.append(game_id)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(0)  # other pollers run meanwhile
            if self.unavailable:
                raise StoreUnavailable("redis went away")
            if game_id in self.failing:
                raise RuntimeError(f"a bug met in {game_id}")
            return await self._fire(game_id)
        finally:
            self.in_flight -= 1

    async def _fire(self, game_id: str) -> Fired:
        record = await self.store.load(game_id)
        if record is None:
            return Fired("gone", None, None)
        now = self.clock()
        if record.due > now:
            return Fired("moved_on", record.due, record.stamp)
        timed_out = record.successor(due=now + TURN)
        await self.store.save(timed_out, record.stamp, [], TTL, previous=record)
        self.timeouts.append(game_id)
        return Fired("timeout", timed_out.due, timed_out.stamp, late=now - record.due)


def record(game_id: str, due: float) -> GameRecord:
    state, _ = new_game([("ann", None), ("bob", "basic")], f"seed-{game_id}")
    return GameRecord(
        id=game_id,
        state=state,
        token_hashes=(None, None),
        created_at=NOW,
        updated_at=NOW,
        due=due,
    )


def setup(*dues: float, **options) -> tuple[MemoryGameStore, Clock, Game, DeadlinePoller]:
    """A store holding a game `g<i>` due at each of `dues`, a clock, the fire, a poller."""
    store, clock = MemoryGameStore(), Clock()
    for i, due in enumerate(dues):
        asyncio.run(store.create(record(f"g{i}", due), [], TTL))
    game = Game(store, clock)
    return store, clock, game, poller(store, clock, game, **options)


def poller(store, clock: Clock, game: Game, **options) -> DeadlinePoller:
    options = {"poll": POLL, "lease": LEASE, "clock": clock, **options}
    return DeadlinePoller(store, game.fire_due, **options)


def run(coroutine):
    return asyncio.run(coroutine)


# ------------------------------------------------------------------ one poll


def test_nothing_is_fired_before_its_due():
    store, clock, game, deadlines = setup(NOW + 10, NOW + 20)
    clock.now = NOW + 9.999
    assert run(deadlines.run_once(clock.now)) == 0
    assert game.fired == []
    clock.now = NOW + 10
    assert run(deadlines.run_once(clock.now)) == 1
    assert game.timeouts == ["g0"]
    # settled at the game's new due: not due again before it
    assert run(store.due_games(NOW + 10 + TURN, 10)) == [
        DueGame("g1", NOW + 20),
        DueGame("g0", NOW + 10 + TURN),
    ]
    assert run(deadlines.run_once(NOW + 19.9)) == 0
    assert game.timeouts == ["g0"]


def test_each_due_game_is_fired_once_among_several_pollers_sharing_the_store():
    dues = [NOW + i / 10 for i in range(40)]
    store, clock, game, _ = setup(*dues)
    pollers = [poller(store, clock, game, batch=25) for _ in range(5)]
    clock.now = NOW + 5

    async def together() -> list[int]:
        return await asyncio.gather(*(p.run_once(clock.now) for p in pollers))

    fired = run(together())
    fired += run(together())  # the ones past the first batch of 25
    assert sum(fired) == 40
    assert sorted(game.fired) == sorted(f"g{i}" for i in range(40))  # no game twice
    assert run(together()) == [0] * 5  # all rescheduled a turn later
    assert len(game.fired) == 40


def test_a_claim_left_by_a_dead_poller_is_fired_by_another_after_its_lease():
    store, clock, game, deadlines = setup(NOW + 10)
    clock.now = NOW + 10
    assert run(store.claim_due("g0", clock.now, LEASE))  # a replica claims it, then dies
    clock.now = NOW + 10 + LEASE - 0.01
    assert run(deadlines.run_once(clock.now)) == 0
    assert game.fired == []
    clock.now = NOW + 10 + LEASE
    assert run(deadlines.run_once(clock.now)) == 1
    assert game.timeouts == ["g0"]


def test_a_failing_fire_is_retried_after_the_lease_logged_once(caplog):
    _store, clock, game, deadlines = setup(NOW + 10, NOW + 11)
    game.failing.add("g0")

    def poll_at(now: float) -> int:
        clock.now = now
        return run(deadlines.run_once(now))

    with caplog.at_level(logging.DEBUG, logger="ten.deadlines"):
        assert poll_at(NOW + 12) == 1  # the other game is not held up
        assert game.fired == ["g0", "g1"]
        assert game.timeouts == ["g1"]
        assert poll_at(NOW + 13) == 0  # g0 claimed: left to lapse
        for lapse in (1, 2, 3):  # retried after each lease, failing each time
            poll_at(NOW + 12 + lapse * LEASE)
            assert game.fired.count("g0") == 1 + lapse
        errors = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(errors) == 1
        assert "g0" in errors[0].getMessage()
        assert errors[0].exc_info is not None  # its traceback, once
        game.failing.clear()
        poll_at(NOW + 12 + 4 * LEASE)
    assert game.timeouts.count("g0") == 1
    assert any("after failing" in r.getMessage() for r in caplog.records)


def test_a_game_that_moved_on_is_rescheduled_at_its_due():
    """Its entry was earlier than its due (allowed): looked at, not fired, settled."""
    store, clock, game, deadlines = setup(NOW + 10)
    moved = run(store.load("g0")).successor(due=NOW + 50)
    run(store.save(moved, 0, [], TTL, previous=run(store.load("g0"))))
    clock.now = NOW + 10
    assert run(deadlines.run_once(clock.now)) == 1
    assert game.fired == ["g0"]
    assert game.timeouts == []
    assert run(store.due_games(NOW + 10**6, 10)) == [DueGame("g0", NOW + 50)]
    clock.now = NOW + 49
    assert run(deadlines.run_once(clock.now)) == 0  # the claim was released, not due yet
    clock.now = NOW + 50
    assert run(deadlines.run_once(clock.now)) == 1
    assert game.timeouts == ["g0"]


def test_a_game_gone_loses_its_entry():
    expiry = Clock(0.0)  # the embedded store's own (monotonic) clock for expiry
    store, clock = MemoryGameStore(clock=expiry), Clock()
    game = Game(store, clock)
    deadlines = poller(store, clock, game)
    run(store.create(record("stray", NOW + 5), [], 1))  # its game expires, its entry stays
    expiry.now = 2.0
    assert run(store.load("stray")) is None
    clock.now = NOW + 20
    assert run(deadlines.run_once(clock.now)) == 1
    assert game.fired == ["stray"]
    assert run(store.due_games(NOW + 10**6, 10)) == []


def test_fires_run_concurrently_up_to_the_bound():
    _store, _clock, game, deadlines = setup(*[NOW] * 30, concurrency=4)
    assert run(deadlines.run_once(NOW + 1)) == 30
    assert game.most_in_flight == 4


def test_a_whole_batch_calls_for_another_poll_at_once():
    _store, clock, game, deadlines = setup(*[NOW] * 5, batch=3)
    clock.now = NOW + 1
    assert run(deadlines.step()) == 0.0  # 3 of 5 fired: look again now
    assert run(deadlines.step()) == POLL
    assert len(game.timeouts) == 5


def test_outcomes_and_lateness_are_counted():
    from infra.observability.metrics import Metrics

    metrics = Metrics()

    def sample(name: str, **labels: str) -> float:
        return metrics.registry.get_sample_value(name, labels) or 0.0

    store, clock, _game, deadlines = setup(NOW + 10, NOW + 20, metrics=metrics)
    g1 = run(store.load("g1"))
    run(store.save(g1.successor(due=NOW + 90), 0, [], TTL, previous=g1))  # entry kept: earlier
    before = (
        sample("ten_deadlines_total", outcome="timeout"),
        sample("ten_deadlines_total", outcome="moved_on"),
        sample("ten_deadline_lateness_seconds_count"),
        sample("ten_deadline_lateness_seconds_sum"),
    )
    clock.now = NOW + 22.5
    assert run(deadlines.run_once(clock.now)) == 2
    after = (
        sample("ten_deadlines_total", outcome="timeout"),
        sample("ten_deadlines_total", outcome="moved_on"),
        sample("ten_deadline_lateness_seconds_count"),
        sample("ten_deadline_lateness_seconds_sum"),
    )
    assert [a - b for a, b in zip(after, before, strict=True)] == [1, 1, 1, 12.5]


# ------------------------------------------------------------------ an unreachable store


class FlakyStore:
    """The embedded store, unreachable (StoreUnavailable) or broken while told so; counts
    the polls (`due_games` calls)."""

    def __init__(self, inner: MemoryGameStore) -> None:
        self.inner = inner
        self.down: type[Exception] | None = None
        self.polls = 0

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    async def due_games(self, now: float, limit: int) -> list[DueGame]:
        self.polls += 1
        if self.down is not None:
            raise self.down("connection refused")
        return await self.inner.due_games(now, limit)


def test_an_unreachable_store_is_a_pause_that_doubles_never_a_crash(caplog):
    inner, clock, game, _ = setup(NOW + 10)
    store = FlakyStore(inner)
    deadlines = poller(store, clock, game)
    clock.now = NOW + 10
    store.down = StoreUnavailable
    with caplog.at_level(logging.DEBUG, logger="ten.deadlines"):
        pauses = [run(deadlines.step()) for _ in range(7)]
        assert pauses == [0.4, 0.8, 1.6, 3.2, MAX_BACKOFF, MAX_BACKOFF, MAX_BACKOFF]
        warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(warnings) == 1  # when it started, not on every poll
        assert "unavailable" in warnings[0].getMessage()
        assert game.fired == []
        store.down = None
        assert run(deadlines.step()) == POLL
        assert game.timeouts == ["g0"]
        assert any("again" in r.getMessage() for r in caplog.records if r.levelno == logging.INFO)
        store.down = ValueError  # not a connection error: a bug, logged, paused, survived
        assert run(deadlines.step()) == 0.4
    assert caplog.records[-1].exc_info is not None


def test_a_fire_that_finds_the_store_unavailable_pauses_and_leaves_the_claim_to_lapse():
    _store, clock, game, deadlines = setup(NOW + 10)
    clock.now = NOW + 10
    game.unavailable = True
    assert run(deadlines.step()) == 0.4
    game.unavailable = False
    clock.now = NOW + 11
    assert run(deadlines.step()) == POLL
    assert game.timeouts == []  # still claimed
    clock.now = NOW + 10 + LEASE
    assert run(deadlines.step()) == POLL
    assert game.timeouts == ["g0"]


# ------------------------------------------------------------------ the task


def test_wake_makes_the_running_poller_look_at_once():
    """With a poll of an hour, only `wake` (from the loop or another thread) brings the
    poller back before then; a wake for a due already passed too."""
    inner, clock, game, _ = setup(NOW + 10, NOW + 11, NOW + 12)
    store = FlakyStore(inner)
    deadlines = poller(store, clock, game, poll=3600.0)
    clock.now = NOW + 5

    async def until_fired(count: int) -> None:
        while len(game.timeouts) < count:
            await asyncio.sleep(0.001)

    async def body() -> None:
        task = asyncio.create_task(deadlines.run_forever())
        try:
            while store.polls < 1:  # the first poll finds nothing due
                await asyncio.sleep(0)
            deadlines.wake(NOW + 10**5)  # after its rest ends anyway: not disturbed
            for _ in range(5):
                await asyncio.sleep(0)
            assert store.polls == 1
            assert game.fired == []
            clock.now = NOW + 10
            deadlines.wake()
            await asyncio.wait_for(until_fired(1), 5)
            clock.now = NOW + 11
            thread = threading.Thread(target=deadlines.wake)
            thread.start()
            thread.join()
            await asyncio.wait_for(until_fired(2), 5)
            clock.now = NOW + 12
            deadlines.wake(NOW + 12)
            await asyncio.wait_for(until_fired(3), 5)
            assert not task.done()
            assert store.polls == 4  # the first and one per wake: never the hour's poll
        finally:
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    run(body())
    assert game.timeouts == ["g0", "g1", "g2"]


def test_a_save_that_sets_a_due_wakes_the_running_poller_through_the_relay():
    """The poller is a local reaction of the relay (`DeadlinePoller.saved`): a save whose due
    is new (a game made with one, or its due moved) wakes it by then; a save that leaves the
    due as it was does not disturb it."""
    inner, clock, game, _ = setup()
    store = FlakyStore(inner)
    deadlines = poller(store, clock, game, poll=3600.0)
    relay = Relay(inner, MemoryQueue("relay"), {DUE_MOVED: [deadlines]})

    async def save(old: GameRecord | None, new: GameRecord) -> None:
        mark = await relay.mark(old, new, [])
        if old is None:
            await inner.create(new, [], TTL)
        else:
            await inner.save(new, old.stamp, [], TTL, previous=old)
        await relay.settle(new.id, mark)

    async def until_fired(count: int) -> None:
        while len(game.timeouts) < count:
            await asyncio.sleep(0.001)

    async def settle_down(polls: int) -> None:
        for _ in range(20):
            await asyncio.sleep(0)
        assert store.polls == polls

    async def body() -> None:
        task = asyncio.create_task(deadlines.run_forever())
        try:
            while store.polls < 1:  # the first poll finds nothing: it rests for an hour
                await asyncio.sleep(0)
            clock.now = NOW + 10
            await save(None, record("g0", NOW + 10))  # a game made due now: woken
            await asyncio.wait_for(until_fired(1), 5)
            assert store.polls == 2
            timed_out = await inner.load("g0")
            assert timed_out.due == NOW + 10 + TURN
            await save(timed_out, timed_out.successor())  # its due as it was: not woken
            await settle_down(2)
            clock.now = NOW + 20
            moved = await inner.load("g0")
            await save(moved, moved.successor(due=NOW + 20))  # moved earlier, due now: woken
            await asyncio.wait_for(until_fired(2), 5)
            assert store.polls == 3
        finally:
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    run(body())
    assert game.timeouts == ["g0", "g0"]


def test_run_forever_survives_a_store_that_is_down():
    """The task keeps running through failures (paused) and fires once the store is back."""
    inner, clock, game, _ = setup(NOW)
    store = FlakyStore(inner)
    store.down = StoreUnavailable
    deadlines = poller(store, clock, game, poll=0.001)

    async def body() -> None:
        task = asyncio.create_task(deadlines.run_forever())
        try:
            while store.polls < 4:  # failed polls, pauses of 2, 4, 8 ms between
                await asyncio.sleep(0.001)
            assert not task.done()
            store.down = None
            while not game.timeouts:
                await asyncio.sleep(0.001)
        finally:
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    run(asyncio.wait_for(body(), 10))
    assert game.timeouts == ["g0"]


class DroppingStore(FlakyStore):
    """A poll that, cancelled while it waits on the store, answers anyway (`dropping_sleep`)."""

    def __init__(self, inner: MemoryGameStore) -> None:
        super().__init__(inner)
        self.dropped = 0

    async def due_games(self, now: float, limit: int) -> list[DueGame]:
        self.dropped += await dropping_sleep(0.02)
        return await super().due_games(now, limit)


def test_a_poller_whose_cancellation_the_store_dropped_still_stops():
    store, clock, game, _ = setup(NOW + 100)
    dropping = DroppingStore(store)

    async def body() -> None:
        task = asyncio.create_task(poller(dropping, clock, game, poll=0.01).run_forever())
        await asyncio.sleep(0.005)  # inside its first poll
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=120.0)  # only a task that never stops waits so
        assert dropping.dropped == 1
        assert task in done, "the cancelled poller did not stop"
        assert task.cancelled()

    run_without_waiting(body())  # a poller that does not stop fails the test, not hangs it
