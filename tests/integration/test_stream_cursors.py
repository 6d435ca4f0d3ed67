"""A client's cursor is its own: a stream opened past the end of a game's log changes
nothing another stream of that game receives (`infra.watchers`: the ring every stream of
a game shares starts at the log, never at a client's cursor). In process, on the embedded
store."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable

import pytest

from infra.memory_store import MemoryGameStore
from infra.watchers import OPENING, Watchers
from tests.support.records import TTL, advance, new_record

WAIT = 5.0
FAR = 10**9  # the largest cursor the API takes


def seqs(chunk: bytes) -> list[int]:
    """The ids of the events of a chunk of SSE blocks."""
    found = []
    for text in chunk.decode().split("\r\n\r\n"):
        for line in text.split("\r\n"):
            if line.startswith("id: "):
                found.append(int(line[4:]))
    return found


async def chunk(stream: AsyncIterator[bytes]) -> bytes:
    return await asyncio.wait_for(anext(stream), WAIT)


async def until(fact: Callable[[], bool]) -> None:
    async def poll() -> None:
        while not fact():
            await asyncio.sleep(0)

    await asyncio.wait_for(poll(), WAIT)


@pytest.mark.parametrize("far", [FAR, 10**15])
def test_a_cursor_past_the_log_changes_nothing_another_stream_receives(far: int) -> None:
    async def body() -> None:
        store = MemoryGameStore()
        watchers = Watchers(store, keepalive=WAIT)
        reader = asyncio.create_task(watchers.run_forever())
        try:
            record, events = new_record("farcursor000000000000")
            await store.create(record, events, TTL)
            spectator = watchers.stream(record.id, far, watchers.admit("spectator"))
            assert await chunk(spectator) == OPENING
            nothing = asyncio.create_task(anext(spectator))
            await until(lambda: record.id in watchers._games)  # it made the game's ring
            player = watchers.stream(record.id, 0, watchers.admit("player"))
            assert await chunk(player) == OPENING
            assert seqs(await chunk(player)) == [e.seq for e in events]
            waiting = asyncio.create_task(anext(player))
            await until(lambda: len(watchers._games[record.id].streams) == 2 or waiting.done())
            moved, produced = advance(record, 1)
            await store.save(moved, record.stamp, produced, TTL)
            got = await asyncio.wait_for(waiting, WAIT)
            assert seqs(got) == [e.seq for e in produced], got
            assert not nothing.done(), "nothing comes after a cursor past the log"
            nothing.cancel()
            await player.aclose()
        finally:
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)

    asyncio.run(body())


def test_a_stream_behind_a_ring_made_by_a_far_cursor_is_not_ended() -> None:
    """The defect's second face: the stream that came second read its backlog, found the
    ring past it and ended, as if its game had expired."""

    async def body() -> None:
        store = MemoryGameStore()
        watchers = Watchers(store, keepalive=WAIT)
        reader = asyncio.create_task(watchers.run_forever())
        try:
            record, events = new_record("farcursor000000000001")
            await store.create(record, events, TTL)
            far = watchers.stream(record.id, FAR, watchers.admit("a"))
            assert await chunk(far) == OPENING
            pending = asyncio.create_task(anext(far))
            await until(lambda: record.id in watchers._games)
            late = watchers.stream(record.id, events[-1].seq, watchers.admit("b"))
            assert await chunk(late) == OPENING
            waiting = asyncio.create_task(anext(late))
            await until(lambda: len(watchers._games[record.id].streams) == 2 or waiting.done())
            moved, produced = advance(record, 2)
            await store.save(moved, record.stamp, produced, TTL)
            sent = [b for b in (await asyncio.wait_for(waiting, WAIT)).split(b"\r\n\r\n") if b]
            assert b"reconnect" not in b"".join(sent)
            assert json.loads(sent[0].split(b"data: ", 1)[1])["seq"] == produced[0].seq
            pending.cancel()
            await late.aclose()
        finally:
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)

    asyncio.run(body())
