"""The relay (service.reactions.relay) with in-memory adapters, a fake clock and no I/O: which
changes call for which reactions (the reaction table), what a reaction that keeps failing does
to the others, and that a game gone has nothing left to relay."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from msgspec.structs import replace

from domain.game.engine import new_game
from infra.memory_store import MemoryGameStore
from infra.queues import MemoryQueue
from service.core.model import GameRecord
from service.core.ports import StoredEvent
from service.games.use_cases import encode_events, hash_token
from service.history.archiver import ArchiveReaction
from service.reactions.relay import (
    DUE_MOVED,
    GAME_CREATED,
    GAME_ENDED,
    GRACE,
    Relay,
    relayed_change,
    saved_change,
)
from tests.support.reactions import every_kind

NOW = 1_800_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> float:
        return self.now


def game(game_id: str = "a" * 20) -> tuple[GameRecord, list[StoredEvent]]:
    state, events = new_game([("ann", None), ("bob", "basic")], "relay-rules")
    record = GameRecord(
        id=game_id,
        state=state,
        token_hashes=(hash_token("t"), None),
        created_at=NOW,
        updated_at=NOW,
    )
    return record, encode_events(events)


class Recorder:
    """A reaction that records what it got; it fails for the games in `failing`."""

    name = "recorder"
    durable = True

    def __init__(self, failing: Sequence[str] = ()) -> None:
        self.failing = set(failing)
        self.got: list[tuple[str, list[int]]] = []

    async def react(self, change) -> None:
        if change.new.id in self.failing:
            raise RuntimeError("the platform's receiver refuses this one")
        self.got.append((change.new.id, [e.seq for e in change.stored]))


def test_a_change_is_of_its_event_types_and_of_the_records_facts():
    record, events = game()
    playing = record
    finished = replace(record, state=replace(record.state, phase="finished"))
    aborted = replace(record, aborted=True)
    abandoned = replace(record, abandoned=True)
    types = {"game_started", "turn_started"}
    assert saved_change(None, playing, events).kinds == {GAME_CREATED, *types}  # dealt
    assert saved_change(playing, playing, events).kinds == types  # a move in play
    assert GAME_ENDED in saved_change(playing, finished, []).kinds
    assert GAME_ENDED in saved_change(None, finished, []).kinds  # dealt and played out at once
    assert saved_change(playing, aborted, []).kinds == {GAME_ENDED}
    assert saved_change(playing, abandoned, []).kinds == {GAME_ENDED}
    assert saved_change(finished, finished, []).kinds == frozenset()  # ended already
    assert saved_change(playing, replace(playing, due=NOW + 60), []).kinds == {DUE_MOVED}
    table = GameRecord(
        id="b" * 20, state=None, token_hashes=(), created_at=NOW, updated_at=NOW, table=None
    )
    assert saved_change(None, table, []).kinds == {GAME_CREATED}
    # relayed by another process: the game before is not known, an ended one ends again
    assert relayed_change(finished, []).kinds == {GAME_ENDED}
    assert relayed_change(playing, events).kinds == types
    assert [type(e).__name__ for e in saved_change(None, playing, events).events] == [
        "GameStarted",
        "TurnStarted",
    ]


def test_the_archive_is_marked_for_a_game_that_ends_and_nothing_else():
    async def body() -> None:
        clock, queue = Clock(), MemoryQueue("relay")
        reaction = ArchiveReaction(MemoryGameStore(), MemoryQueue("archive"))
        relay = Relay(MemoryGameStore(), queue, {GAME_ENDED: [reaction]}, clock=clock)
        record, events = game()
        finished = replace(record, state=replace(record.state, phase="finished"))
        assert await relay.mark(None, record, events) is None  # dealt: nothing to archive
        assert await relay.mark(record, record, events) is None  # a move in play
        mark = await relay.mark(record, finished, [])
        assert mark is not None
        assert mark.token is not None

    asyncio.run(body())


def test_each_event_is_relayed_once_in_order_and_a_game_gone_has_nothing_left():
    async def body() -> None:
        clock, store, queue = Clock(), MemoryGameStore(clock=lambda: 0.0), MemoryQueue("relay")
        recorder = Recorder()
        relay = Relay(store, queue, every_kind(recorder), clock=clock)
        record, events = game()
        token = await relay.mark(None, record, events)
        assert token is not None
        await store.create(record, events, 3600)
        await relay.settle(record.id, token)
        assert recorder.got == [(record.id, [e.seq for e in events])]
        assert await queue.backlog() == 0
        await relay.relay(record.id)  # relayed again (a duplicate mark): nothing new, no call
        assert len(recorder.got) == 1
        await relay.relay("c" * 20)  # no such game: nothing to hand anyone
        assert len(recorder.got) == 1

    asyncio.run(body())


def test_a_reaction_that_keeps_failing_for_one_game_is_quarantined_and_the_others_go_on():
    async def body() -> None:
        clock, store, queue = Clock(), MemoryGameStore(clock=lambda: 0.0), MemoryQueue("relay")
        bad, good = game("d" * 20), game("e" * 20)
        recorder = Recorder(failing=[bad[0].id])
        relay = Relay(store, queue, every_kind(recorder), clock=clock)
        for record, events in (bad, good):
            token = await relay.mark(None, record, events)
            await store.create(record, events, 3600)
            await relay.settle(record.id, token)  # fails for `bad`: its mark stays
        assert [g for g, _ in recorder.got] == [good[0].id]
        assert await queue.backlog() == 1
        worker = relay.worker(clock=clock, max_failures=3, jitter=lambda: 0.5)
        for _ in range(10):
            clock.now += GRACE + 60
            await worker.run_once()
        [aside] = await queue.quarantined(10)
        assert (aside.id, aside.failures) == (bad[0].id, 3)
        assert "refuses this one" in aside.reason
        assert await queue.backlog() == 0

    asyncio.run(body())


def test_a_relay_without_reactions_marks_nothing():
    async def body() -> None:
        queue = MemoryQueue("relay")
        relay = Relay(MemoryGameStore(), queue, every_kind())
        record, events = game()
        assert await relay.mark(None, record, events) is None
        assert await queue.backlog() == 0

    asyncio.run(body())


class Local:
    """A local reaction: records every change it is told of; raises if `failing`."""

    name = "local"
    durable = False

    def __init__(self, failing: bool = False) -> None:
        self.failing = failing
        self.told: list[tuple[GameRecord | None, GameRecord, list[int]]] = []

    def saved(self, change) -> None:
        self.told.append((change.old, change.new, [e.seq for e in change.stored]))
        if self.failing:
            raise RuntimeError("a counter that breaks")


class CountingStore(MemoryGameStore):
    """The embedded store, counting the relay's reads."""

    def __init__(self) -> None:
        super().__init__(clock=lambda: 0.0)
        self.relay_reads = 0

    async def relay_read(self, game_id: str):
        self.relay_reads += 1
        return await super().relay_read(game_id)


def test_a_local_reaction_is_told_of_every_save_and_only_a_durable_one_is_marked():
    async def body() -> None:
        clock, store, queue = Clock(), CountingStore(), MemoryQueue("relay")
        durable = ArchiveReaction(store, MemoryQueue("archive"), clock=clock)
        broken, local = Local(failing=True), Local()
        table = {GAME_ENDED: [durable], **every_kind(broken, local)}
        table[GAME_ENDED] = [durable, broken, local]
        relay = Relay(store, queue, table, clock=clock)
        assert (relay.reactions, relay.local) == ((durable,), (broken, local))
        record, events = game()
        # a game dealt: no durable reaction wants it (nothing marked, nothing read)
        mark = await relay.mark(None, record, events)
        assert mark is not None
        assert mark.token is None
        assert local.told == []  # before the save: nobody is told
        await store.create(record, events, 3600)
        await relay.settle(record.id, mark)
        assert local.told == [(None, record, [e.seq for e in events])]
        assert broken.told == local.told  # it raised: logged, the others told all the same
        assert await queue.backlog() == 0
        assert store.relay_reads == 0
        # the game ends: the durable reaction wants it, so it is marked before the save
        ended = replace(record, aborted=True, updated_at=NOW + 1)
        mark = await relay.mark(record, ended, [])
        assert mark is not None
        assert mark.token is not None
        assert await queue.backlog() == 1
        await store.save(ended, record.stamp, [], 3600, previous=record)
        await relay.settle(ended.id, mark)
        assert local.told[-1] == (record, ended, [])
        assert await queue.backlog() == 0  # relayed and settled
        assert store.relay_reads == 1
        [job] = await durable.queue.claim(clock(), 60, 10)
        assert job.id == record.id  # the archive reaction did react
        # a save that did not happen (marked, never settled) is told to nobody
        await relay.mark(ended, replace(ended, updated_at=NOW + 2), [])
        assert len(local.told) == 2

    asyncio.run(body())


class LogReads(MemoryGameStore):
    """The event log read whole, counted."""

    def __init__(self) -> None:
        super().__init__(clock=lambda: 0.0)
        self.log_reads = 0

    async def events(self, game_id: str, after: int, limit: int) -> list[StoredEvent]:
        self.log_reads += 1
        return await super().events(game_id, after, limit)


@pytest.mark.parametrize("relayed_before", [False, True])
def test_the_archive_job_holds_the_whole_log_read_once(relayed_before: bool):
    """An ended game's archive job holds its whole log: the events the relay hands over when
    none was relayed before (no second read of the log), else the log read whole."""
    import msgspec

    from service.core.ports import ArchiveJob

    async def body() -> None:
        clock, store = Clock(), LogReads()
        archive_queue = MemoryQueue("archive")
        reaction = ArchiveReaction(store, archive_queue, clock=clock)
        table = {**every_kind(Recorder()), GAME_ENDED: [reaction]}
        relay = Relay(store, MemoryQueue("relay"), table, clock=clock)
        record, events = game()
        await store.create(record, events, 3600)
        if relayed_before:  # the start relayed for another reaction (a webhook, say)
            await relay.relay(record.id)
        ended = replace(record, aborted=True, updated_at=NOW + 1)
        mark = await relay.mark(record, ended, [])
        await store.save(ended, record.stamp, [], 3600, previous=record)
        await relay.settle(ended.id, mark)
        [job] = await archive_queue.claim(clock(), 60, 10)
        archived = msgspec.msgpack.decode(job.payload, type=ArchiveJob)
        assert archived.events == events  # every event, from seq 1
        assert store.log_reads == (1 if relayed_before else 0)

    asyncio.run(body())


def test_a_relay_with_local_reactions_only_never_touches_the_queue_or_the_store():
    async def body() -> None:
        store, queue, local = CountingStore(), MemoryQueue("relay"), Local()
        relay = Relay(store, queue, every_kind(local))
        record, events = game()
        finished = replace(record, state=replace(record.state, phase="finished"))
        for old, new in ((None, record), (record, finished)):
            mark = await relay.mark(old, new, events)
            await relay.settle(new.id, mark)
        assert [(old, new) for old, new, _ in local.told] == [(None, record), (record, finished)]
        assert (await queue.backlog(), store.relay_reads) == (0, 0)

    asyncio.run(body())


def test_a_change_made_from_the_engines_events_reads_as_one_decoded_from_the_log() -> None:
    """The saving process hands the reactions the events the engine made (nothing decoded);
    a relay worker decodes them from the log: both read the same types, kinds and events."""
    state, events = new_game([("ann", None), ("bob", "basic")], "typed-change")
    record = GameRecord(
        id="c" * 20, state=state, token_hashes=(hash_token("t"), None), created_at=NOW,
        updated_at=NOW, due=NOW + 60,
    )  # fmt: skip
    stored = encode_events(events)
    typed = saved_change(None, record, stored, events)
    decoded = saved_change(None, record, stored)
    assert typed.types == decoded.types
    assert decoded.types[0] == "game_started"  # the JSON's `type`, decoded
    assert typed.types  # a deal has events
    assert typed.kinds == decoded.kinds
    assert typed.events == decoded.events
