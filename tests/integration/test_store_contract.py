"""The GameStore contract, run against both adapters: the embedded store and real Redis.

Records are real game states (`domain.game.engine.new_game` then bot moves through `apply`) and
events are encoded as the service encodes them (`service.games.use_cases.encode_events`). Async bodies
run under `asyncio.run`, each store built and closed inside its own loop.
"""

from __future__ import annotations

import asyncio
import threading

import msgspec
import pytest
from msgspec.structs import replace
from redis.crc import key_slot

from domain.game.engine import new_game
from infra.memory_store import MemoryGameStore
from infra.redis_store import RedisGameStore
from service.core.errors import ServiceError
from service.core.model import GameRecord
from service.core.ports import (
    GameExists,
    IdempotentResponse,
    StoredEvent,
    StoreUnavailable,
    VersionConflict,
)
from service.games.use_cases import encode_events
from tests.support.records import NOW, TTL, advance, new_record

HANG = 120.0  # seconds: only a call left hanging reaches it (a failure, not a hang)


def answer(version: int, text: str = "first") -> IdempotentResponse:
    record, events = new_record(f"answer{version:015d}", seed=f"{text} é")
    record = replace(record, state=replace(record.state, version=version))
    return IdempotentResponse(fingerprint=f"0:{text}", seat=0, record=record, events=events)


# ------------------------------------------------------------------ create / load


def test_create_then_load_returns_an_equal_record(backend):
    game_id = backend.new_id()
    record, events = new_record(game_id)

    async def body(store):
        await store.create(record, events, TTL)
        loaded = await store.load(game_id)
        assert loaded == record
        assert loaded.version == 0
        assert loaded.state.players[0].name == "Zoë ✓"
        assert await store.events(game_id, 0, 100) == events

    backend.run(body)


def test_create_twice_with_the_same_id_conflicts_and_keeps_the_first(backend):
    game_id = backend.new_id()
    first, first_events = new_record(game_id)
    other, _ = new_record(game_id, seed="another-seed")
    other, other_events = advance(replace(other, created_at=NOW + 9), 2)

    async def body(store):
        await store.create(first, first_events, TTL)
        with pytest.raises(VersionConflict):
            await store.create(other, other_events, TTL)
        assert await store.load(game_id) == first
        assert await store.events(game_id, 0, 100) == first_events

    backend.run(body)


def test_an_unknown_game_is_absent(backend):
    game_id = backend.new_id()

    async def body(store):
        assert await store.load(game_id) is None
        assert await store.events(game_id, 0, 100) == []
        assert await store.idempotent_response(game_id, "key") is None

    backend.run(body)


# ------------------------------------------------------------------ save


def test_save_at_the_right_version_replaces_the_record_and_appends_events(backend):
    game_id = backend.new_id()
    r0, e0 = new_record(game_id)
    r1, e1 = advance(r0, 3)
    r2, e2 = advance(r1, 2)

    async def body(store):
        await store.create(r0, e0, TTL)
        await store.save(r1, 0, e1, TTL)
        assert await store.load(game_id) == r1
        assert await store.events(game_id, 0, 1000) == e0 + e1
        await store.save(r2, 3, e2, TTL)
        loaded = await store.load(game_id)
        assert loaded == r2
        assert loaded.version == 5
        assert await store.events(game_id, 0, 1000) == e0 + e1 + e2

    backend.run(body)


def test_a_stale_save_raises_and_changes_nothing(backend):
    game_id = backend.new_id()
    r0, e0 = new_record(game_id)
    r1, e1 = advance(r0, 1)
    late, late_events = advance(replace(r0, updated_at=NOW + 50), 2)  # chosen on version 0
    ahead, ahead_events = advance(r1, 1)

    async def body(store):
        await store.create(r0, e0, TTL)
        await store.save(r1, 0, e1, TTL, ("key-1", answer(1)))
        with pytest.raises(VersionConflict):
            await store.save(late, 0, late_events, TTL, ("key-1", answer(2, "late")))
        with pytest.raises(VersionConflict):
            await store.save(late, 0, late_events, TTL, ("key-2", answer(2, "late")))
        with pytest.raises(VersionConflict):  # a version the game never had
            await store.save(ahead, 7, ahead_events, TTL, ("key-3", answer(2, "ahead")))
        assert await store.load(game_id) == r1
        assert await store.events(game_id, 0, 1000) == e0 + e1
        assert await store.idempotent_response(game_id, "key-1") == answer(1)
        assert await store.idempotent_response(game_id, "key-2") is None
        assert await store.idempotent_response(game_id, "key-3") is None

    backend.run(body)


def test_a_refused_save_hands_back_the_stored_game(backend):
    """So that the caller can retry on it without reading it again."""
    game_id = backend.new_id()
    r0, e0 = new_record(game_id)
    r1, e1 = advance(r0, 1)
    late, late_events = advance(replace(r0, updated_at=NOW + 50), 1)

    async def body(store):
        with pytest.raises(VersionConflict) as missing:
            await store.save(r1, 0, e1, TTL)
        assert missing.value.current is None  # no such game
        await store.create(r0, e0, TTL)
        await store.save(r1, 0, e1, TTL)
        with pytest.raises(VersionConflict) as stale:
            await store.save(late, 0, late_events, TTL)
        assert stale.value.current == r1

    backend.run(body)


def test_events_of_any_bytes_and_number_are_stored_apart(backend):
    """One save's events travel packed (Redis: two script arguments): each comes back as it
    went in, whatever bytes it holds (spaces, digits, newlines, none) and however many."""
    game_id = backend.new_id()
    r0, e0 = new_record(game_id)
    r1, _ = advance(r0, 1)
    odd = [b"1 2 3", b"", b"\n\x00 \xff{}", "é ✓".encode(), b"9" * 5000, b"8" * 70_000]
    odd += [b"x"] * 300
    first = e0[-1].seq + 1
    events = [StoredEvent(first + i, data) for i, data in enumerate(odd)]

    async def body(store):
        await store.create(r0, e0, TTL)
        await store.save(r1, 0, events, TTL)
        assert await store.events(game_id, e0[-1].seq, 1000) == events
        assert await store.load(game_id) == r1

    backend.run(body)


def test_a_log_of_more_than_65535_events_reads_whole(backend):
    """A log is read whole however long it is (Redis: the reply's array holds its length in
    one, two or four bytes)."""
    game_id = backend.new_id()
    r0, e0 = new_record(game_id)
    r1, _ = advance(r0, 1)
    first = e0[-1].seq + 1
    events = [StoredEvent(first + i, b"%d" % i) for i in range(65_540)]

    async def body(store):
        await store.create(r0, e0, TTL)
        await store.save(r1, 0, events, TTL)
        assert await store.events(game_id, e0[-1].seq, 100_000) == events
        assert await store.events(game_id, e0[-1].seq, 15) == events[:15]
        assert await store.events(game_id, e0[-1].seq, 16) == events[:16]
        assert await store.events(game_id, e0[-1].seq + 65_530, 100) == events[65_530:]

    backend.run(body)


def test_a_save_to_a_game_that_does_not_exist_conflicts(backend):
    game_id = backend.new_id()
    r0, _ = new_record(game_id)
    r1, e1 = advance(r0, 1)

    async def body(store):
        with pytest.raises(VersionConflict):
            await store.save(r1, 0, e1, TTL, ("key-1", answer(1)))
        assert await store.load(game_id) is None
        assert await store.events(game_id, 0, 100) == []
        assert await store.idempotent_response(game_id, "key-1") is None

    backend.run(body)


# ------------------------------------------------------------------ events


def test_events_are_paged_in_order_after_exclusive_with_a_limit(backend):
    game_id = backend.new_id()
    r0, e0 = new_record(game_id)
    r1, e1 = advance(r0, 6)
    log = e0 + e1
    n = len(log)

    async def body(store):
        await store.create(r0, e0, TTL)
        await store.save(r1, 0, e1, TTL)
        assert [event.seq for event in log] == list(range(1, n + 1))
        assert n >= 8
        assert await store.events(game_id, 0, 1000) == log
        assert await store.events(game_id, 0, 1) == log[:1]
        assert await store.events(game_id, 1, 1) == [log[1]]
        assert await store.events(game_id, 3, 2) == log[3:5]
        assert await store.events(game_id, 2, n) == log[2:]
        assert await store.events(game_id, n - 1, 10) == [log[-1]]
        assert await store.events(game_id, n, 10) == []
        assert await store.events(game_id, n + 50, 10) == []
        assert await store.events(game_id, 0, 0) == []
        got = await store.events(game_id, 0, 1000)
        assert [event.seq for event in got] == list(range(1, n + 1))
        assert [event.data for event in got] == [event.data for event in log]
        assert all(type(event.data) is bytes for event in got)
        assert "Zoë ✓".encode() in got[0].data
        assert msgspec.json.decode(got[0].data)["type"] == "game_started"

    backend.run(body)


def test_event_bytes_are_kept_exactly(backend):
    game_id = backend.new_id()
    r0, e0 = new_record(game_id)
    r1, _ = advance(r0, 1)
    odd = [
        StoredEvent(3, b'{"type":"x","s":"\\u00e9 \xc3\xa9 \\n","n":1.50}  '),
        StoredEvent(4, bytes(range(256))),  # not even UTF-8
        StoredEvent(5, b""),
    ]

    async def body(store):
        await store.create(r0, e0, TTL)
        await store.save(r1, 0, odd, TTL)
        assert await store.events(game_id, 2, 10) == odd

    backend.run(body)


# ------------------------------------------------------------------ idempotent responses


def test_idempotent_responses_are_stored_with_the_save(backend):
    game_id = backend.new_id()
    other_game = backend.new_id()
    r0, e0 = new_record(game_id)
    r1, e1 = advance(r0, 1)
    r2, e2 = advance(r1, 1)
    r3, e3 = advance(r2, 1)

    async def body(store):
        await store.create(r0, e0, TTL)
        assert await store.idempotent_response(game_id, "key-1") is None
        await store.save(r1, 0, e1, TTL, ("key-1", answer(1)))
        assert await store.idempotent_response(game_id, "key-1") == answer(1)
        assert await store.idempotent_response(game_id, "key-2") is None
        assert await store.idempotent_response(other_game, "key-1") is None
        await store.save(r2, 1, e2, TTL)  # no key: the earlier answer stays
        await store.save(r3, 2, e3, TTL, ("", answer(3, "empty key")))
        assert await store.idempotent_response(game_id, "key-1") == answer(1)
        assert await store.idempotent_response(game_id, "") == answer(3, "empty key")
        assert await store.load(game_id) == r3

    backend.run(body)


def created(record: GameRecord, text: str = "create") -> IdempotentResponse:
    """A create's outcome: no seat, the credentials its answer handed out."""
    return IdempotentResponse(
        fingerprint=f"c1:create:{text}", seat=None, record=record, events=[],
        tokens=[(0, f"{record.id}.0.secret")], host_token=f"{record.id}.host.x",
        invite_code="inv",
    )  # fmt: skip


def test_a_create_stores_its_outcome_and_a_copy_of_it_is_handed_that_outcome(backend):
    """No overwrite: a create of a taken id (a copy of an idempotent create: its id is
    derived from the key) raises GameExists with what the game remembers under the entry's
    key the copy names, and changes nothing."""
    game_id = backend.new_id()
    first, first_events = new_record(game_id)
    copy, copy_events = advance(replace(first, created_at=NOW + 9), 1)
    outcome = created(first)

    async def body(store):
        await store.create(first, first_events, TTL, ("create:k1", outcome))
        assert await store.idempotent_response(game_id, "create:k1") == outcome
        with pytest.raises(GameExists) as same:
            await store.create(copy, copy_events, TTL, ("create:k1", created(copy, "copy")))
        assert same.value.remembered == outcome
        with pytest.raises(GameExists) as other:  # another entry's key: nothing remembered
            await store.create(copy, copy_events, TTL, ("create:k2", created(copy, "copy")))
        assert other.value.remembered is None
        with pytest.raises(GameExists) as unkeyed:
            await store.create(copy, copy_events, TTL)
        assert unkeyed.value.remembered is None
        assert isinstance(unkeyed.value, VersionConflict)  # as every refused create
        assert await store.load(game_id) == first
        assert await store.events(game_id, 0, 100) == first_events
        assert await store.idempotent_response(game_id, "create:k1") == outcome
        assert await store.idempotent_response(game_id, "create:k2") is None

    backend.run(body)


def test_a_created_outcome_lives_with_its_game(backend):
    """Later saves keep it (and their own entries beside it); it expires with the game, and
    a create of that id afterwards starts afresh."""
    game_id = backend.new_id()
    r0, e0 = new_record(game_id)
    r1, e1 = advance(r0, 1)
    outcome = created(r0)

    async def body(store):
        await store.create(r0, e0, 1, ("create:k", outcome))
        await store.save(r1, 0, e1, 1, ("key-1", answer(1)))
        assert await store.idempotent_response(game_id, "create:k") == outcome
        assert await store.idempotent_response(game_id, "key-1") == answer(1)
        await asyncio.sleep(1.3)
        assert await store.idempotent_response(game_id, "create:k") is None
        again = created(r0, "again")
        await store.create(r0, e0, TTL, ("create:k", again))
        assert await store.idempotent_response(game_id, "create:k") == again
        assert await store.idempotent_response(game_id, "key-1") is None

    backend.run(body)


def test_concurrent_copies_of_one_create_make_one_game_and_share_its_outcome(backend):
    game_id = backend.new_id()
    copies = []
    for i in range(20):
        record, events = new_record(game_id, seed=f"copy-{i}")
        copies.append((record, events, created(record, f"copy-{i}")))

    async def body(store):
        async def one(record, events, outcome):
            try:
                await store.create(record, events, TTL, ("create:k", outcome))
            except GameExists as taken:
                return taken.remembered
            return "created"

        found = await asyncio.gather(*(one(*copy) for copy in copies))
        assert found.count("created") == 1
        winner = copies[found.index("created")]
        assert all(f == winner[2] for f in found if f != "created")
        assert await store.load(game_id) == winner[0]
        assert await store.events(game_id, 0, 1000) == winner[1]

    backend.run(body)


# ------------------------------------------------------------------ concurrency


def test_concurrent_saves_at_the_same_version_have_exactly_one_winner(backend):
    game_id = backend.new_id()
    r0, e0 = new_record(game_id)
    r1, e1 = advance(r0, 2)
    n = 50
    contenders = [replace(r1, updated_at=NOW + 100 + i) for i in range(n)]

    async def body(store):
        await store.create(r0, e0, TTL)
        results = await asyncio.gather(
            *(
                store.save(record, 0, e1, TTL, (f"key-{i}", answer(2, f"c{i}")))
                for i, record in enumerate(contenders)
            ),
            return_exceptions=True,
        )
        winners = [i for i, result in enumerate(results) if result is None]
        assert len(winners) == 1
        assert all(
            isinstance(result, VersionConflict)
            for i, result in enumerate(results)
            if i != winners[0]
        )
        (winner,) = winners
        assert await store.load(game_id) == contenders[winner]
        assert await store.events(game_id, 0, 1000) == e0 + e1
        for i in range(n):
            expected = answer(2, f"c{i}") if i == winner else None
            assert await store.idempotent_response(game_id, f"key-{i}") == expected

    backend.run(body)


def test_memory_store_saves_from_many_threads_have_exactly_one_winner(memory_backend):
    game_id = memory_backend.new_id()
    r0, e0 = new_record(game_id)
    r1, e1 = advance(r0, 1)
    n = 50
    store = MemoryGameStore()
    asyncio.run(store.create(r0, e0, TTL))
    barrier = threading.Barrier(n)
    outcomes: list[str] = [""] * n

    def contend(i: int) -> None:
        barrier.wait()
        try:
            asyncio.run(store.save(replace(r1, updated_at=NOW + i), 0, e1, TTL))
            outcomes[i] = "won"
        except VersionConflict:
            outcomes[i] = "conflict"

    threads = [threading.Thread(target=contend, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["conflict"] * (n - 1) + ["won"]
    assert asyncio.run(store.load(game_id)).updated_at == NOW + outcomes.index("won")
    assert asyncio.run(store.events(game_id, 0, 1000)) == e0 + e1


# ------------------------------------------------------------------ expiry


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_memory_store_expires_games_after_the_ttl(memory_backend):
    game_id = memory_backend.new_id()
    r0, e0 = new_record(game_id)
    r1, e1 = advance(r0, 1)
    r2, e2 = advance(r1, 1)
    again, again_events = new_record(game_id, seed="again")
    clock = Clock(1000.0)

    async def body(store):
        await store.create(r0, e0, 60)
        clock.now = 1059.9
        assert await store.load(game_id) == r0
        await store.save(r1, 0, e1, 60, ("key-1", answer(1)))  # expires at 1119.9 now
        clock.now = 1119.8
        assert await store.load(game_id) == r1
        assert await store.events(game_id, 0, 100) == e0 + e1
        clock.now = 1119.9
        assert await store.load(game_id) is None
        assert await store.events(game_id, 0, 100) == []
        assert await store.idempotent_response(game_id, "key-1") is None
        assert await store.events_of({game_id: 0}, 100) == {}
        with pytest.raises(VersionConflict):
            await store.save(r2, 1, e2, 60)
        await store.create(again, again_events, 60)  # the id is free again
        assert await store.load(game_id) == again
        assert await store.events(game_id, 0, 100) == again_events
        assert await store.idempotent_response(game_id, "key-1") is None

    memory_backend.run(body, clock=clock)


def _assert_ttls(client, keys, ttl: int) -> None:
    for key in keys:
        left = client.pttl(key)
        assert ttl * 1000 - 5000 < left <= ttl * 1000, (key, left)


def test_redis_store_sets_a_ttl_on_every_key_of_a_game(redis_backend):
    game_id = redis_backend.new_id()
    state_key, log_key, idem_key = redis_backend.keys(game_id)
    client = redis_backend.client
    r0, e0 = new_record(game_id)
    r1, e1 = advance(r0, 1)
    r2, e2 = advance(r1, 1)

    async def body(store):
        await store.create(r0, e0, 3600)
        _assert_ttls(client, [state_key, log_key], 3600)
        assert client.pttl(idem_key) == -2  # no answer stored yet: no key
        await store.save(r1, 0, e1, 7 * 24 * 3600, ("key-1", answer(1)))
        _assert_ttls(client, [state_key, log_key, idem_key], 7 * 24 * 3600)
        await store.save(r2, 1, e2, 600)  # a save without a key moves every key's expiry
        _assert_ttls(client, [state_key, log_key, idem_key], 600)

    redis_backend.run(body)


def test_redis_store_games_really_expire(redis_backend):
    game_id = redis_backend.new_id()
    keys = redis_backend.keys(game_id)
    r0, e0 = new_record(game_id)
    r1, e1 = advance(r0, 1)

    async def body(store):
        await store.create(r0, e0, 1)
        await store.save(r1, 0, e1, 1, ("key-1", answer(1)))
        assert await store.load(game_id) == r1
        assert redis_backend.client.exists(*keys) == 3
        await asyncio.sleep(1.3)
        assert await store.load(game_id) is None
        assert await store.events(game_id, 0, 100) == []
        assert await store.idempotent_response(game_id, "key-1") is None
        assert redis_backend.client.exists(*keys) == 0

    redis_backend.run(body)


# ------------------------------------------------------------------ Redis layout


def test_redis_layout_one_slot_msgpack_state_and_a_stream_log(redis_backend):
    game_id = redis_backend.new_id()
    state_key, log_key, idem_key = redis_backend.keys(game_id)
    client = redis_backend.client
    r0, e0 = new_record(game_id)
    r1, e1 = advance(r0, 3)

    async def body(store):
        await store.create(r0, e0, TTL)
        await store.save(r1, 0, e1, TTL, ("key-1", answer(3)))

    redis_backend.run(body)
    assert {key_slot(key.encode()) for key in (state_key, log_key, idem_key)} == {
        key_slot(f"game:{game_id}".encode())
    }
    assert sorted(client.scan_iter(match=f"{{game:{game_id}}}*", count=1000)) == sorted(
        key.encode() for key in (state_key, log_key, idem_key)
    )
    stored = client.hgetall(state_key)
    assert set(stored) == {b"v", b"rec"}
    assert stored[b"v"] == b"3"
    assert msgspec.msgpack.decode(stored[b"rec"], type=GameRecord) == r1
    assert msgspec.msgpack.decode(stored[b"rec"])["id"] == game_id
    assert client.type(log_key) == b"stream"
    assert client.xrange(log_key) == [
        (f"0-{event.seq}".encode(), {b"d": event.data}) for event in e0 + e1
    ]
    blob = client.hget(idem_key, "key-1")
    assert msgspec.msgpack.decode(blob, type=IdempotentResponse) == answer(3)


def test_redis_state_of_a_mid_game_four_player_game_is_under_4_kb(redis_backend):
    game_id = redis_backend.new_id()
    r0, e0 = new_record(game_id)
    start_pile = len(r0.state.draw_pile)
    record, events = r0, []
    while len(record.state.draw_pile) > start_pile // 2:
        record, produced = advance(record, 1)
        events.extend(produced)
    assert record.state.phase != "finished"
    assert sum(len(player.cards) for player in record.state.players) > 0

    async def body(store):
        await store.create(r0, e0, TTL)
        await store.save(record, 0, events, TTL, ("key-1", answer(record.version)))

    redis_backend.run(body)
    state_key, log_key, _ = redis_backend.keys(game_id)
    used = redis_backend.client.memory_usage(state_key, samples=0)
    log_used = redis_backend.client.memory_usage(log_key, samples=0)
    print(
        f"\nmid-game 4-player state (version {record.version}, {len(e0) + len(events)} events, "
        f"msgpack blob {len(msgspec.msgpack.encode(record))} B): MEMORY USAGE {state_key} = "
        f"{used} B, log = {log_used} B"
    )
    assert 0 < used < 4096


# ------------------------------------------------------------------ health


def test_ping_works(backend):
    async def body(store):
        assert await store.ping() is None

    backend.run(body)


def test_redis_store_on_a_closed_port_raises_store_unavailable(redis_backend):
    game_id = redis_backend.new_id()
    r0, e0 = new_record(game_id)
    r1, e1 = advance(r0, 1)

    async def body():
        store = RedisGameStore("redis://127.0.0.1:1/0")
        calls = {
            "ping": store.ping,
            "load": lambda: store.load(game_id),
            "create": lambda: store.create(r0, e0, TTL),
            "save": lambda: store.save(r1, 0, e1, TTL, ("key-1", answer(1))),
            "events": lambda: store.events(game_id, 0, 10),
            "events_of": lambda: store.events_of({game_id: 0}, 10),
            "idempotent_response": lambda: store.idempotent_response(game_id, "key-1"),
        }
        try:
            for name, call in calls.items():
                with pytest.raises(StoreUnavailable):  # refused, not left hanging (the guard)
                    await asyncio.wait_for(call(), HANG)
                assert name
        finally:
            await store.close()

    asyncio.run(body())


def test_redis_store_creates_over_leftovers_of_a_vanished_game(redis_backend):
    """If a game's state key vanished (deleted, evicted) its log and answers must not leak into
    a new game of the same id: the old log made XADD fail half-way through the create."""
    game_id = redis_backend.new_id()
    state_key, _, _ = redis_backend.keys(game_id)
    r0, e0 = new_record(game_id)
    r1, e1 = advance(r0, 2)
    again, again_events = new_record(game_id, seed="again")

    async def body(store):
        await store.create(r0, e0, TTL)
        await store.save(r1, 0, e1, TTL, ("key-1", answer(2)))
        redis_backend.client.delete(state_key)
        await store.create(again, again_events, TTL)
        assert await store.load(game_id) == again
        assert await store.events(game_id, 0, 100) == again_events
        assert await store.idempotent_response(game_id, "key-1") is None

    redis_backend.run(body)


# ------------------------------------------------------------------ live games


def test_live_games_counts_games_in_play_not_finished_or_expired(backend):
    """`live_games` (the `ten_live_games` metric): games started and not finished or expired.
    On Redis the test uses its own index key (other tests share the database) and re-checks
    idle entries on every call (in service: after a minute)."""
    from domain.bots.simulation import play_bots

    bots_only = [("b1", "random"), ("b2", "basic")]
    kwargs = {}
    if backend.kind != "memory":
        kwargs = {"live_key": f"ten:test-live:{backend.new_id()}", "live_recheck": 0}
    playing, playing_events = new_record(backend.new_id())
    ending_state, ending_events = new_game(bots_only, "to-finish")
    ending = replace(playing, id=backend.new_id(), state=ending_state)
    finished_state, last_events = play_bots(ending_state)
    assert finished_state.phase == "finished"
    done_at_start = replace(playing, id=backend.new_id(), state=finished_state)
    short_lived = replace(playing, id=backend.new_id())

    async def body(store):
        assert await store.live_games() == 0
        await store.create(playing, playing_events, TTL)
        await store.create(ending, encode_events(ending_events), TTL)
        await store.create(done_at_start, [], TTL)  # finished when created: not live
        assert await store.live_games() == 2
        await store.save(replace(ending, state=finished_state), 0, encode_events(last_events), TTL)
        assert await store.live_games() == 1
        await store.create(short_lived, playing_events, 1)
        assert await store.live_games() == 2
        await asyncio.sleep(1.2)  # the short-lived game expires idle
        assert await store.live_games() == 1
        assert await store.live_games() == 1  # and stays gone (its index entry was dropped)

    try:
        backend.run(body, **kwargs)
    finally:
        if kwargs:
            backend.client.delete(kwargs["live_key"])


# ------------------------------------------------------------------ the relay's cursor


def test_relay_read_hands_the_game_and_its_log_past_the_cursor(backend):
    """`relay_read` is the game as stored and every event past its relay cursor (all of
    them at first); `relayed` moves the cursor forward only; a game gone reads as nothing
    and its cursor cannot be set (no key made on Redis)."""
    record, events = new_record(backend.new_id())
    gone = backend.new_id()

    async def body(store):
        assert await store.relay_read(record.id) == (None, [])
        await store.create(record, events, TTL)
        found, unrelayed = await store.relay_read(record.id)
        assert found == record
        assert unrelayed == events
        await store.relayed(record.id, events[1].seq)
        assert (await store.relay_read(record.id))[1] == events[2:]
        moved, more = advance(record, 2)
        await store.save(moved, record.stamp, more, TTL)
        found, unrelayed = await store.relay_read(record.id)
        assert found == moved
        assert unrelayed == events[2:] + more
        await store.relayed(record.id, events[0].seq)  # never back
        assert (await store.relay_read(record.id))[1] == events[2:] + more
        await store.relayed(record.id, more[-1].seq)
        assert await store.relay_read(record.id) == (moved, [])
        await store.relayed(gone, 5)
        assert await store.relay_read(gone) == (None, [])

    backend.run(body)
    if backend.kind != "memory":
        assert backend.client.exists(*backend.keys(gone)) == 0


def test_an_entry_this_release_cannot_read_counts_as_a_reused_key(redis_backend):
    """An idempotency entry of another form (an old release's rendered answer) is never
    taken for a new request (its command could be applied twice) nor a failure: its key
    counts as reused (409), and nothing else in the game changes."""
    game_id = redis_backend.new_id()
    r0, e0 = new_record(game_id)
    foreign = msgspec.msgpack.encode(
        {"fingerprint": "0:abc", "status": 200, "body": b"{}", "version": 1}
    )

    async def body(store):
        await store.create(r0, e0, TTL)
        await store._redis.hset(redis_backend.keys(game_id)[2], "old-key", foreign)
        with pytest.raises(ServiceError) as refused:
            await store.idempotent_response(game_id, "old-key")
        assert refused.value.code == "idempotency_key_reused"
        assert await store.idempotent_response(game_id, "new-key") is None
        assert await store.load(game_id) == r0

    redis_backend.run(body)
