"""The BulkStore contract (service.bulk.store), run against both adapters: in memory and
real Redis (each test its own key prefix, its keys deleted afterwards)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import msgspec
import pytest

from infra.memory_bulk import MemoryBulkStore
from infra.redis_bulk import RedisBulkStore
from service.bulk.records import BulkConflict, BulkRecord, BulkSeat, BulkTable, BulkTokens
from tests.support.stores import run_on_a_client

NOW = 1_760_000_000.5
TOKENS = BulkTokens(fingerprint="f", tokens=(("t0", None), ("t1", "t2")))


def record(bulk_id: str, **changes) -> BulkRecord:
    tables = (
        BulkTable(game_id="a" * 20, seats=(BulkSeat("Ann", "ann"), BulkSeat("Bot", None, "basic"))),
        BulkTable(game_id="b" * 20, seats=(BulkSeat("Bob", "bob"), BulkSeat("Cy", "cy"))),
    )
    fields = {"owner": "platform", "start_at": NOW + 60, "tables": tables, "fingerprint": "f"}
    fields.update(changes)
    return BulkRecord(id=bulk_id, created_at=NOW, updated_at=NOW, **fields)


def run(backend, body: Callable[..., Awaitable[None]]) -> None:
    run_on_a_client(
        backend, MemoryBulkStore, lambda client, prefix: RedisBulkStore(client, prefix=prefix), body
    )


def test_a_bulk_is_created_once_and_read_back_with_its_tokens(backend):
    async def body(store) -> None:
        assert await store.load_bulk("x1") is None
        assert await store.create_bulk(record("x1"), 3600, ("e1", TOKENS)) is None
        assert await store.load_bulk("x1") == record("x1")
        assert await store.remembered_bulk("x1", "e1") == TOKENS
        assert await store.remembered_bulk("x1", "e2") is None
        taken = await store.create_bulk(record("x1", owner="other"), 3600, ("e1", None))
        assert taken == record("x1")  # the one stored, untouched
        assert await store.remembered_bulk("x1", "e1") == TOKENS

    run(backend, body)


def test_a_bulk_without_a_key_keeps_no_tokens(backend):
    async def body(store) -> None:
        assert await store.create_bulk(record("x2"), 3600) is None
        assert await store.remembered_bulk("x2", "") is None
        assert (await store.load_bulk("x2")).id == "x2"

    run(backend, body)


def test_a_save_compares_the_version_and_names_the_bulk_stored(backend):
    async def body(store) -> None:
        await store.create_bulk(record("x3"), 3600, ("e", TOKENS))
        first = msgspec.structs.replace(record("x3"), cancelled=True, version=1)
        await store.save_bulk(first, 3600)
        with pytest.raises(BulkConflict) as lost:
            await store.save_bulk(msgspec.structs.replace(record("x3"), version=1), 3600)
        assert lost.value.current == first
        assert await store.load_bulk("x3") == first
        assert await store.remembered_bulk("x3", "e") == TOKENS  # kept across saves
        with pytest.raises(BulkConflict) as gone:
            await store.save_bulk(msgspec.structs.replace(record("nope"), version=1), 3600)
        assert gone.value.current is None

    run(backend, body)


def test_of_concurrent_saves_of_one_version_exactly_one_wins(backend):
    async def body(store) -> None:
        await store.create_bulk(record("x4"), 3600)

        async def save(status: str) -> bool:
            try:
                await store.save_bulk(
                    msgspec.structs.replace(
                        record("x4"),
                        cancelled=status == "cancelled",
                        start_at=NOW + len(status),
                        version=1,
                    ),
                    3600,
                )
            except BulkConflict:
                return False
            return True

        won = await asyncio.gather(save("started"), save("cancelled"), save("started"))
        assert sum(won) == 1
        assert (await store.load_bulk("x4")).version == 1

    run(backend, body)


def test_a_bulk_on_redis_is_one_key_that_expires_with_its_tokens(redis_backend):
    async def body(store) -> None:
        await store.create_bulk(record("x5"), 3600, ("e", TOKENS))
        await store.save_bulk(msgspec.structs.replace(record("x5"), version=1), 7200)
        fields = await store.client.hkeys(store.key("x5"))  # its tokens in its own hash
        assert sorted(f.decode() for f in fields) == ["d", "i:e", "v"]
        assert 3600 < await store.client.ttl(store.key("x5")) <= 7200

    run(redis_backend, body)
