"""The quotas (`service.core.quotas`) on both stores, in memory and on real Redis: a hold counts
atomically with the limit, concurrent holds never overshoot, and what no longer counts (or
was never stored, once GRACE has passed) is dropped when the owner's set is full."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from infra.quotas import MemoryQuotas, RedisQuotas
from service.core.errors import ServiceError
from service.core.quotas import GRACE, Quota
from tests.support.stores import run_on_a_client

NOW = 1_760_000_000.25


def run(backend, body: Callable[..., Awaitable[None]]) -> None:
    run_on_a_client(backend, MemoryQuotas, lambda c, prefix: RedisQuotas(c, prefix=prefix), body)


def quota(store, limit: int, known: dict[str, bool]) -> Quota:
    async def counts(items):
        return {item: known[item] for item in items if item in known}

    return Quota(
        store, "things", limit, "too_many_open_tables", counts, keep=3600,
        retry_after=lambda oldest, now: oldest + 100 - now,
    )  # fmt: skip


def test_hold_counts_up_to_the_limit_and_a_copy_is_held_already(backend):
    async def body(store) -> None:
        assert await store.hold("k", "a", NOW, 2, 60) is None
        assert await store.hold("k", "a", NOW + 1, 2, 60) is None  # held already
        assert await store.hold("k", "b", NOW + 2, 2, 60) is None
        assert await store.hold("k", "c", NOW + 3, 2, 60) == NOW  # full: the oldest's score
        assert await store.hold("other", "c", NOW + 3, 2, 60) is None  # another owner
        assert await store.held("k") == [("a", NOW), ("b", NOW + 2)]
        await store.drop("k", [("a", NOW + 5), ("b", NOW + 2)])  # a's score moved: kept
        assert await store.held("k") == [("a", NOW)]

    run(backend, body)


def test_concurrent_holds_never_overshoot(backend):
    async def body(store) -> None:
        answers = await asyncio.gather(
            *(store.hold("k", f"i{n}", NOW + n, 7, 60) for n in range(30))
        )
        assert sum(answer is None for answer in answers) == 7
        assert len(await store.held("k")) == 7

    run(backend, body)


def test_a_full_quota_refuses_with_retry_after_then_drops_what_no_longer_counts(backend):
    async def body(store) -> None:
        known = {"a": True, "b": True}
        q = quota(store, 2, known)
        await q.take("ann", "a", NOW)
        await q.take("ann", "b", NOW + 10)
        with pytest.raises(ServiceError) as refused:
            await q.take("ann", "c", NOW + 20)
        assert refused.value.code == "too_many_open_tables"
        assert refused.value.retry_after == 80  # the oldest (NOW) + 100 - now
        await q.take(None, "c", NOW + 20)  # exempt (the platform)
        known["a"] = False  # a ended: no longer counts
        await q.take("ann", "c", NOW + 21)
        assert [item for item, _ in await store.held("things:ann")] == ["b", "c"]

    run(backend, body)


def test_an_item_never_stored_counts_for_grace_then_is_dropped(backend):
    async def body(store) -> None:
        known = {"b": True}
        q = quota(store, 2, known)
        await q.take("ann", "a", NOW)  # its write is in flight ("a" unknown)
        await q.take("ann", "b", NOW + 1)
        with pytest.raises(ServiceError):
            await q.take("ann", "c", NOW + GRACE - 1)  # a may still be written
        await q.take("ann", "c", NOW + GRACE + 1)  # a's write died: dropped
        assert [item for item, _ in await store.held("things:ann")] == ["b", "c"]

    run(backend, body)


def test_no_limit_holds_nothing(backend):
    async def body(store) -> None:
        q = quota(store, 0, {})
        for n in range(5):
            await q.take("ann", f"i{n}", NOW)
        assert await store.held("things:ann") == []

    run(backend, body)
