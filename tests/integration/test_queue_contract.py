"""The LeasedQueue contract (service.jobs.worker), run against both adapters: the embedded queue and
real Redis (each test its own queue name, its keys deleted afterwards)."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable

import pytest
from redis.crc import key_slot

from infra.queues import LEGACY_ARCHIVE_OUTBOX, MemoryQueue, RedisQueue, adopt_legacy
from infra.redis_client import connect
from service.jobs.worker import QueueFull

NOW = 1_760_000_000.5


def run(backend, body: Callable[..., Awaitable[None]]) -> None:
    name = f"test-{secrets.token_hex(6)}"

    async def main() -> None:
        if backend.kind == "memory":
            await body(MemoryQueue(name))
            return
        client = connect(backend.url)
        queue = RedisQueue(client, name)
        backend.other_keys.extend(queue.keys.values())
        try:
            await body(queue)
        finally:
            await client.aclose()

    asyncio.run(main())


def test_put_claim_done(backend):
    async def body(queue) -> None:
        assert await queue.put("a", b"\x00payload\xff", NOW) > 0
        assert await queue.put("b", b"", NOW + 10) > 0
        assert await queue.backlog() == 2
        [job] = await queue.claim(NOW, 30.0, 10)  # "b" is not due yet
        assert (job.id, job.payload, job.failures) == ("a", b"\x00payload\xff", 0)
        assert await queue.done("a", job.token)
        assert not await queue.done("a", job.token)  # once
        assert await queue.backlog() == 1
        [later] = await queue.claim(NOW + 10, 30.0, 10)
        assert later.id == "b"

    run(backend, body)


def test_claims_come_earliest_first_and_at_most_the_limit(backend):
    async def body(queue) -> None:
        for i, at in enumerate((5.0, 1.0, 3.0, 2.0, 4.0)):
            await queue.put(f"j{i}", b"", NOW + at)
        first = await queue.claim(NOW + 10, 30.0, 3)
        assert [j.id for j in first] == ["j1", "j3", "j2"]
        assert [j.id for j in await queue.claim(NOW + 10, 30.0, 3)] == ["j4", "j0"]

    run(backend, body)


def test_a_put_again_moves_a_job_earlier_never_later_and_voids_its_claim(backend):
    async def body(queue) -> None:
        await queue.put("g", b"one", NOW + 5)
        await queue.put("g", b"two", NOW + 50)  # payload replaced, due stays NOW + 5
        assert await queue.claim(NOW + 4, 30.0, 10) == []
        [claimed] = await queue.claim(NOW + 5, 30.0, 10)
        assert claimed.payload == b"two"
        await queue.put("g", b"three", NOW + 6)  # while claimed: due at NOW + 6 again
        assert not await queue.done("g", claimed.token)
        assert await queue.retry("g", claimed.token, NOW + 100, failed=True) is None
        [again] = await queue.claim(NOW + 6, 30.0, 10)
        assert (again.payload, again.failures) == (b"three", 0)

    run(backend, body)


def test_a_claimed_job_retried_past_its_lease_is_due_then_not_at_its_leases_end(backend):
    """What the worker does with a handler's answered time (a step waiting for a time)."""

    async def body(queue) -> None:
        await queue.put("t", b"", NOW)
        [job] = await queue.claim(NOW, 15.0, 10)
        assert await queue.retry("t", job.token, NOW + 3600, failed=False) == 0
        assert await queue.claim(NOW + 15, 15.0, 10) == []
        assert await queue.claim(NOW + 3599, 15.0, 10) == []
        [due] = await queue.claim(NOW + 3600, 15.0, 10)
        assert (due.id, due.failures) == ("t", 0)

    run(backend, body)


def test_hasten_moves_a_waiting_job_earlier_keeps_its_payload_and_voids_its_claim(backend):
    """What the archive does with a game held for its deal once the deal is played."""

    async def body(queue) -> None:
        assert not await queue.hasten("nobody", NOW)  # not queued: nothing to move
        await queue.put("h", b"held", NOW)
        [job] = await queue.claim(NOW, 15.0, 10)
        assert await queue.hasten("h", NOW + 1)  # claimed until NOW + 15: now due at NOW + 1
        assert await queue.retry("h", job.token, NOW + 3600, failed=False) is None  # void
        assert not await queue.hasten("h", NOW + 2)  # due earlier already: left
        [again] = await queue.claim(NOW + 1, 15.0, 10)
        assert (again.id, again.payload, again.failures) == ("h", b"held", 0)
        assert await queue.retry("h", again.token, NOW + 3600, failed=False) == 0
        assert await queue.claim(NOW + 100, 15.0, 10) == []
        assert await queue.hasten("h", NOW + 100)
        [due] = await queue.claim(NOW + 100, 15.0, 10)
        assert due.payload == b"held"
        assert await queue.done("h", due.token)
        assert not await queue.hasten("h", NOW + 100)  # done: not queued
        await queue.put("q", b"poison", NOW)
        [bad] = await queue.claim(NOW, 15.0, 10)
        assert await queue.quarantine("q", bad.token, "why", NOW)
        assert not await queue.hasten("q", NOW)  # set aside: stays there
        assert await queue.backlog() == 0

    run(backend, body)


def test_retry_counts_failures_and_quarantine_sets_the_job_aside(backend):
    async def body(queue) -> None:
        await queue.put("p", b"poison", NOW)
        [job] = await queue.claim(NOW, 30.0, 10)
        assert await queue.retry("p", job.token, NOW + 2, failed=True) == 1
        assert await queue.claim(NOW + 1, 30.0, 10) == []
        [job] = await queue.claim(NOW + 2, 30.0, 10)
        assert job.failures == 1
        assert await queue.retry("p", job.token, NOW + 3, failed=False) == 1
        [job] = await queue.claim(NOW + 3, 30.0, 10)
        assert await queue.quarantine("p", job.token, "DataError: NUL é", NOW + 3)
        assert await queue.backlog() == 0
        assert await queue.claim(NOW + 1000, 30.0, 10) == []
        [aside] = await queue.quarantined(10)
        assert (aside.id, aside.payload, aside.reason) == ("p", b"poison", "DataError: NUL é")
        assert (aside.failures, aside.at) == (2, NOW + 3)
        assert await queue.quarantined_job("p") == aside  # looked up by its id
        assert await queue.quarantined_job("q") is None
        assert await queue.put("p", b"again", NOW) == 0  # set aside: stays aside
        assert await queue.requeue("p", NOW + 4)
        assert await queue.quarantined(10) == []
        assert await queue.quarantined_job("p") is None
        [back] = await queue.claim(NOW + 4, 30.0, 10)
        assert (back.payload, back.failures) == (b"poison", 0)

    run(backend, body)


def test_a_stale_token_cannot_quarantine(backend):
    async def body(queue) -> None:
        await queue.put("p", b"", NOW)
        [old] = await queue.claim(NOW, 1.0, 10)
        [new] = await queue.claim(NOW + 1, 1.0, 10)  # the lease lapsed: taken over
        assert not await queue.quarantine("p", old.token, "x", NOW)
        assert await queue.quarantine("p", new.token, "y", NOW)

    run(backend, body)


def test_of_many_concurrent_claims_each_job_goes_to_one(backend):
    async def body(queue) -> None:
        for i in range(20):
            await queue.put(f"j{i}", b"", NOW)
        batches = await asyncio.gather(*(queue.claim(NOW, 30.0, 3) for _ in range(12)))
        ids = [job.id for batch in batches for job in batch]
        assert sorted(ids) == sorted(f"j{i}" for i in range(20))

    run(backend, body)


def test_a_kept_put_leaves_a_queued_job_and_one_done_within_its_remember_time(backend):
    async def body(queue) -> None:
        assert await queue.put("d", b"first", NOW, keep=True) > 0
        assert await queue.put("d", b"second", NOW - 5, keep=True) == 0  # queued: left as is
        [job] = await queue.claim(NOW, 30.0, 10)
        assert (job.payload, job.token) == (b"first", job.token)
        assert await queue.done("d", job.token, now=NOW, remember=3600.0)
        assert await queue.put("d", b"again", NOW + 3599, keep=True) == 0  # remembered done
        assert await queue.put("d", b"again", NOW + 3601, keep=True) > 0  # forgotten since
        assert await queue.backlog() == 1
        [again] = await queue.claim(NOW + 3601, 30.0, 10)
        assert again.payload == b"again"
        assert await queue.done("d", again.token)  # not remembered this time
        assert await queue.put("d", b"third", NOW + 3602, keep=True) > 0

    run(backend, body)


def test_a_bounded_put_refuses_a_new_job_when_the_queue_holds_its_bound(backend):
    """`bound`: past that many jobs queued (due, claimed or retried; not those set aside), a
    new job is refused (QueueFull) and nothing changes; a job queued already is no new one."""

    async def body(queue) -> None:
        for job_id in ("a", "b", "c"):
            assert await queue.put(job_id, b"", NOW, keep=True, bound=3) > 0
        with pytest.raises(QueueFull):
            await queue.put("d", b"", NOW, keep=True, bound=3)
        with pytest.raises(QueueFull):
            await queue.put("d", b"", NOW, bound=2)
        assert await queue.backlog() == 3
        assert await queue.put("a", b"", NOW, keep=True, bound=3) == 0  # queued already
        assert await queue.put("a", b"again", NOW, bound=3) > 0  # replaced, not a new one
        assert await queue.put("d", b"", NOW, bound=0) > 0  # 0: no bound
        assert await queue.backlog() == 4
        [job, *_] = await queue.claim(NOW, 30.0, 10)  # claimed: still queued
        with pytest.raises(QueueFull):
            await queue.put("e", b"", NOW, bound=4)
        assert await queue.quarantine(job.id, job.token, "set aside", NOW)
        assert await queue.put("e", b"", NOW, bound=4) > 0  # one set aside: room again
        assert await queue.backlog() == 4

    run(backend, body)


def test_queued_tells_a_job_waiting_claimed_or_retried_from_one_done_or_set_aside(backend):
    async def body(queue) -> None:
        assert not await queue.queued("a")
        await queue.put("a", b"", NOW + 60)
        await queue.put("b", b"", NOW)
        assert await queue.queued("a")
        [job] = await queue.claim(NOW, 30.0, 10)
        assert await queue.queued("b")  # claimed
        assert await queue.retry("b", job.token, NOW + 5, failed=True) == 1
        assert await queue.queued("b")  # waiting for its retry
        [job] = await queue.claim(NOW + 5, 30.0, 10)
        assert await queue.quarantine("b", job.token, "set aside", NOW + 5)
        assert not await queue.queued("b")
        [job] = await queue.claim(NOW + 60, 30.0, 10)
        assert await queue.done("a", job.token)
        assert not await queue.queued("a")

    run(backend, body)


def test_redis_keys_of_a_queue_share_one_slot(redis_backend):
    async def body(queue) -> None:
        await queue.put("a", b"", NOW)
        [job] = await queue.claim(NOW, 30.0, 1)
        await queue.retry("a", job.token, NOW, failed=True)
        [job] = await queue.claim(NOW, 30.0, 1)
        await queue.quarantine("a", job.token, "r", NOW)
        assert len({key_slot(k.encode()) for k in queue.keys.values()}) == 1
        assert all(k.startswith(f"{{ten:q:{queue.name}}}:") for k in queue.keys.values())

    run(redis_backend, body)


def test_an_older_releases_jobs_are_adopted(redis_backend):
    # the service adopts LEGACY_ARCHIVE_OUTBOX; servers of other tests share that key
    assert LEGACY_ARCHIVE_OUTBOX == "ten:archive:outbox"
    legacy = f"test-legacy-outbox:{secrets.token_hex(6)}"
    redis_backend.other_keys.append(legacy)

    async def body(queue) -> None:
        client = connect(redis_backend.url)
        try:
            await client.hset(legacy, mapping={"g1": b"job one", "g2": b"job two"})
            assert await adopt_legacy(client, legacy, queue, NOW) == 2
            assert not await client.exists(legacy)
            jobs = await queue.claim(NOW, 30.0, 10)
            assert sorted((j.id, j.payload) for j in jobs) == [
                ("g1", b"job one"),
                ("g2", b"job two"),
            ]
        finally:
            await client.aclose()

    run(redis_backend, body)
