"""The process's event streams (`infra.watchers.Watchers`) on the embedded store, in process:
caps, a slow stream dropped and resumed, a store failure ending every stream with one log
line, games that end without an event, and the SSE bytes themselves. (Streams over HTTP, on
Redis and a Cluster, across replicas and through a Redis restart: tests/e2e,
tests/scaleout/test_watchers*.py, tests/faults/test_watchers*.py.)"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
from collections.abc import AsyncIterator

import pytest

from infra.memory_store import MemoryGameStore
from infra.watchers import OPENING, StreamsRefused, Watchers
from service.core.ports import StoreUnavailable
from tests.support.records import TTL, advance, new_record

WAIT = 5.0


def parse(chunk: bytes) -> list[dict[str, str]]:
    """The SSE blocks of a chunk: each a dict of its fields (comments under ":")."""
    found = []
    for text in chunk.decode().split("\r\n\r\n"):
        if not text:
            continue
        fields: dict[str, str] = {}
        for line in text.split("\r\n"):
            name, _, value = line.partition(":")
            fields[name] = value.removeprefix(" ")
        found.append(fields)
    return found


async def chunk(stream: AsyncIterator[bytes]) -> bytes:
    return await asyncio.wait_for(anext(stream), WAIT)


async def live_stream(watchers: Watchers, game_id: str):
    """A new game and a stream of it, read past its opening and backlog."""
    record, events = new_record(game_id)
    await watchers.store.create(record, events, TTL)
    stream = watchers.stream(record.id, 0, watchers.admit("x"))
    await chunk(stream)
    await chunk(stream)
    return record, events, stream


class Running:
    """Watchers with their reader running, on the embedded store."""

    def __init__(self, store: MemoryGameStore | None = None, **settings) -> None:
        self.store = store or MemoryGameStore()
        self.watchers = Watchers(self.store, **settings)

    async def __aenter__(self) -> Watchers:
        self.reader = asyncio.create_task(self.watchers.run_forever())
        return self.watchers

    async def __aexit__(self, *exc) -> None:
        self.reader.cancel()
        await asyncio.gather(self.reader, return_exceptions=True)


def test_caps_per_process_and_per_client_and_slots_come_back() -> None:
    watchers = Watchers(MemoryGameStore(), max_streams=3, max_per_client=2)
    a1, a2 = watchers.admit("a"), watchers.admit("a")
    with pytest.raises(StreamsRefused) as refused:
        watchers.admit("a")
    assert refused.value.per_client
    b1 = watchers.admit("b")
    with pytest.raises(StreamsRefused) as refused:
        watchers.admit("c")
    assert not refused.value.per_client
    a1.release()
    a1.release()  # once only
    assert watchers.open == 2
    c1 = watchers.admit("c")
    del c1  # a slot whose stream never started comes back when dropped
    gc.collect()
    assert watchers.open == 2
    for slot in (a2, b1):
        slot.release()
    assert watchers.open == 0
    assert Watchers(MemoryGameStore(), max_streams=5, max_per_client=0).admit("a") is not None


def test_a_slow_stream_is_dropped_then_resumes_with_last_event_id_missing_nothing() -> None:
    async def body() -> None:
        async with Running(buffer=4, keepalive=WAIT) as watchers:
            store = watchers.store
            record, events = new_record("slowgame0000000000000")
            await store.create(record, events, TTL)
            stream = watchers.stream(record.id, 0, watchers.admit("x"))
            assert await chunk(stream) == OPENING
            backlog = parse(await chunk(stream))
            assert [int(b["id"]) for b in backlog] == [e.seq for e in events]
            waiting = asyncio.create_task(anext(stream))  # live: waits on the ring
            await asyncio.sleep(0.1)
            nxt, produced = advance(record, 1)
            await store.save(nxt, record.stamp, produced, TTL)
            got = parse(await asyncio.wait_for(waiting, WAIT))
            assert [int(b["id"]) for b in got] == [e.seq for e in produced]
            seen = int(got[-1]["id"])
            record = nxt
            missed = []
            while len(missed) < 6:  # more than the ring holds, while the stream is not read
                nxt, produced = advance(record, 1)
                await store.save(nxt, record.stamp, produced, TTL)
                missed += produced
                record = nxt
            await asyncio.sleep(0.2)
            last = parse(await chunk(stream))
            assert last[0]["event"] == "reconnect"
            assert "id" not in last[0]
            assert json.loads(last[0]["data"])["reason"] == "too_slow"
            with pytest.raises(StopAsyncIteration):
                await chunk(stream)
            assert watchers.open == 0
            resumed = watchers.stream(record.id, seen, watchers.admit("x"))
            assert await chunk(resumed) == OPENING
            again = parse(await chunk(resumed))
            assert [int(b["id"]) for b in again] == [e.seq for e in missed]
            await resumed.aclose()
            assert watchers.open == 0

    asyncio.run(body())


class _FailingNews:
    def __init__(self, inner, store: FailingStore) -> None:
        self.inner, self.store = inner, store

    def watch(self, game_id: str) -> None:
        self.inner.watch(game_id)

    def unwatch(self, game_id: str) -> None:
        self.inner.unwatch(game_id)

    async def next(self, timeout: float) -> set[str]:
        if self.store.failing:
            raise StoreUnavailable("connection refused")
        return await self.inner.next(min(timeout, 0.05))

    async def close(self) -> None:
        await self.inner.close()


class FailingStore(MemoryGameStore):
    """The embedded store, whose log subscription fails once `failing` is set."""

    failing = False

    def log_news(self):
        return _FailingNews(super().log_news(), self)


def test_a_store_failure_ends_every_stream_with_a_reconnect_event_logged_once(caplog) -> None:
    async def body() -> None:
        store = FailingStore()
        async with Running(store, keepalive=WAIT) as watchers:
            record, events = new_record("failgame0000000000000")
            await store.create(record, events, TTL)
            streams = [watchers.stream(record.id, 0, watchers.admit("x")) for _ in range(30)]
            for stream in streams:
                await chunk(stream)  # the opening
                await chunk(stream)  # the backlog
            waits = [asyncio.create_task(anext(stream)) for stream in streams]
            await asyncio.sleep(0.2)
            store.failing = True
            for waiting in waits:
                block = parse(await asyncio.wait_for(waiting, WAIT))[0]
                assert block["event"] == "reconnect"
                assert json.loads(block["data"])["reason"] == "store_unavailable"
                assert 2000 <= int(block["retry"]) <= 6000
            for stream in streams:
                with pytest.raises(StopAsyncIteration):
                    await chunk(stream)
            assert watchers.open == 0

    with caplog.at_level(logging.WARNING, logger="ten.streams"):
        asyncio.run(body())
    lines = [r for r in caplog.records if r.name == "ten.streams"]
    assert len(lines) == 1, [r.getMessage() for r in lines]
    assert "30 stream(s) ended" in lines[0].getMessage()
    assert lines[0].exc_info is None


def test_a_game_ended_without_an_event_ends_its_streams() -> None:
    """An abort saves no event: the quiet-game check finds the game ended."""

    async def body() -> None:
        async with Running(keepalive=0.3) as watchers:
            store = watchers.store
            record, _events, stream = await live_stream(watchers, "stopgame0000000000000")
            await store.save(record.successor(aborted=True), record.stamp, [], TTL)
            rest = [c async for c in stream]  # keep-alives at most, then the end
            assert all(c == b": keep-alive\r\n\r\n" for c in rest), rest
            assert watchers.open == 0

    asyncio.run(asyncio.wait_for(body(), 10))


def test_several_events_go_out_in_one_write_and_the_stream_ends_after_game_finished() -> None:
    async def body() -> None:
        async with Running(keepalive=WAIT, buffer=100_000) as watchers:
            store = watchers.store
            record, events, stream = await live_stream(watchers, "endgame00000000000000")
            waiting = asyncio.create_task(anext(stream))
            await asyncio.sleep(0.1)
            seen = []
            while record.state.phase != "finished":
                nxt, produced = advance(record, 1)
                await store.save(nxt, record.stamp, produced, TTL)
                record = nxt
            while not waiting.done() or not seen or seen[-1]["event"] != "game_finished":
                seen += parse(await asyncio.wait_for(waiting, WAIT))
                if seen[-1]["event"] == "game_finished":
                    break
                waiting = asyncio.create_task(anext(stream))
            log = await store.events(record.id, len(events), 10_000)
            assert [int(b["id"]) for b in seen] == [e.seq for e in log]
            assert [b["data"] for b in seen] == [e.data.decode() for e in log]
            with pytest.raises(StopAsyncIteration):
                await chunk(stream)

    asyncio.run(body())
