"""The contract of `GameStore.log_news` and `GameStore.events_of`, on the embedded store and
real Redis (and, through tests/scaleout/test_cluster_store_contract.py, a 3-node Cluster):
what the process's one stream reader (`infra.watchers`) relies on.

A watched game is reported once its subscription holds, then after every save that added
events to its log (a save without events reports nothing), never after `unwatch`; other
games are never reported. `events_of` reads several logs in one call.
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from msgspec.structs import replace

from infra.memory_store import MemoryGameStore
from infra.redis_store import RedisGameStore
from service.core.ports import StoreUnavailable
from tests.support.records import NOW, TTL, advance, new_record

WAIT = 60.0  # seconds before a report never made fails the test (it takes milliseconds)


async def reports(news, seconds: float = WAIT) -> set[str]:
    """What the subscriber reports within `seconds` (the first report it gives)."""
    return await news.next(seconds)


def test_a_watched_game_is_reported_once_subscribed_then_at_each_save_with_events(backend):
    game_id, other = backend.new_id(), backend.new_id()
    r0, e0 = new_record(game_id)
    o0, oe0 = new_record(other)
    touched = replace(r0, updated_at=NOW + 1)  # a save without events
    r1, e1 = advance(touched, 2)

    async def body(store):
        await store.create(r0, e0, TTL)
        await store.create(o0, oe0, TTL)
        news = store.log_news()
        try:
            news.watch(game_id)
            assert await reports(news) == {game_id}  # subscribed: a read now misses nothing
            await store.save(touched, 0, [], TTL)
            assert await news.next(0.5) == set()
            await store.save(advance(o0, 1)[0], 0, advance(o0, 1)[1], TTL)  # not watched
            assert await news.next(0.5) == set()
            await store.save(r1, 0, e1, TTL)
            assert await reports(news) == {game_id}
            news.unwatch(game_id)
            await asyncio.sleep(0.2)  # the unsubscription on its way
            r2, e2 = advance(r1, 1)
            await store.save(r2, r1.stamp, e2, TTL)
            assert await news.next(0.5) == set()
        finally:
            await news.close()

    backend.run(body)


def test_many_games_on_one_subscriber(backend):
    """Twenty games watched by one subscriber (on a Cluster: spread over the nodes), each
    reported when saved, the reports of several saves gathered in one `next`."""
    ids = [backend.new_id() for _ in range(20)]
    games = {game_id: new_record(game_id) for game_id in ids}

    async def body(store):
        for record, events in games.values():
            await store.create(record, events, TTL)
        news = store.log_news()
        try:
            for game_id in ids:
                news.watch(game_id)
            seen: set[str] = set()
            deadline = time.monotonic() + WAIT
            while seen != set(ids) and time.monotonic() < deadline:
                seen |= await news.next(0.5)
            assert seen == set(ids)
            for record, _ in games.values():
                nxt, events = advance(record, 1)
                await store.save(nxt, record.stamp, events, TTL)
            seen = set()
            deadline = time.monotonic() + WAIT
            while seen != set(ids) and time.monotonic() < deadline:
                seen |= await news.next(0.5)
            assert seen == set(ids)
        finally:
            await news.close()

    backend.run(body)


def test_events_of_reads_several_logs_in_one_call(backend):
    a, b, c = backend.new_id(), backend.new_id(), backend.new_id()
    records = {game_id: new_record(game_id) for game_id in (a, b, c)}

    async def body(store):
        for record, events in records.values():
            await store.create(record, events, TTL)
        ea, eb, ec = (records[g][1] for g in (a, b, c))
        found = await store.events_of({a: 0, b: 1, c: len(ec), "nothing-here": 0}, 100)
        assert found == {a: ea, b: eb[1:]}  # no entry for a log with nothing after
        assert await store.events_of({a: 0}, 1) == {a: ea[:1]}
        assert await store.events_of({}, 10) == {}
        assert await store.events_of({a: 0}, 0) == {}

    backend.run(body)


def test_memory_news_is_told_from_another_thread(memory_backend):
    """The embedded store is one object for the process: a save on another thread (another
    event loop) reports to the subscriber on its own loop."""
    game_id = memory_backend.new_id()
    r0, e0 = new_record(game_id)
    r1, e1 = advance(r0, 1)
    store = MemoryGameStore()
    asyncio.run(store.create(r0, e0, TTL))

    async def watch() -> set[str]:
        news = store.log_news()
        news.watch(game_id)
        assert await news.next(0) == {game_id}
        saver = threading.Thread(target=lambda: asyncio.run(store.save(r1, 0, e1, TTL)))
        saver.start()
        try:
            return await news.next(WAIT)
        finally:
            saver.join()
            await news.close()

    assert asyncio.run(watch()) == {game_id}


def test_redis_news_on_a_closed_port_raises_store_unavailable(redis_backend):
    async def body() -> None:
        store = RedisGameStore("redis://127.0.0.1:1/0")
        news = store.log_news()
        try:
            news.watch("x")
            # refused at once: a wait for news instead would run into the guard (TimeoutError)
            with pytest.raises(StoreUnavailable):
                await asyncio.wait_for(news.next(3600.0), 120.0)
        finally:
            await news.close()
            await store.close()

    asyncio.run(body())
