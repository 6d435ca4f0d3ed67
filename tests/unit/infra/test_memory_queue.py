"""The embedded queue's due index (`infra.queues.MemoryQueue`: a heap with stale entries
skipped) against a model that looks at every job (what the queue did before): the same
jobs claimed, in the same order, whatever the puts, claims, retries, dones and requeues;
and its heap kept within twice the live jobs (the stale entries do not pile up)."""

from __future__ import annotations

import asyncio
import heapq

from hypothesis import given, settings
from hypothesis import strategies as st

from infra.queues import MemoryQueue

IDS = [f"g{i}" for i in range(12)]


class Model:
    """Every job looked at on each claim: earliest due first, then id."""

    def __init__(self) -> None:
        self.due: dict[str, float] = {}
        self.token: dict[str, int] = {}

    def put(self, job_id: str, at: float) -> int:
        held = self.due.get(job_id)
        self.due[job_id] = at if held is None else min(held, at)
        self.token[job_id] = self.token.get(job_id, 0) + 1
        return self.token[job_id]

    def claim(self, now: float, lease: float, limit: int) -> list[tuple[str, int]]:
        due = [(at, job_id) for job_id, at in self.due.items() if at <= now]
        found = []
        for _, job_id in heapq.nsmallest(limit, due):
            self.due[job_id] = now + lease
            self.token[job_id] += 1
            found.append((job_id, self.token[job_id]))
        return found

    def done(self, job_id: str, token: int) -> bool:
        if self.token.get(job_id) != token:
            return False
        self.due.pop(job_id, None)
        self.token.pop(job_id, None)
        return True

    def retry(self, job_id: str, token: int, at: float) -> bool:
        if self.token.get(job_id) != token:
            return False
        self.due[job_id] = at
        return True


operation = st.one_of(
    st.tuples(st.just("put"), st.sampled_from(IDS), st.integers(0, 12)),
    st.tuples(st.just("claim"), st.integers(0, 40), st.integers(0, 10), st.integers(1, 4)),
    st.tuples(st.just("done"), st.integers(0, 20)),
    st.tuples(st.just("retry"), st.integers(0, 20), st.integers(0, 30)),
)


@settings(max_examples=1000, deadline=None)
@given(st.lists(operation, max_size=80))
def test_claims_follow_the_due_order_whatever_came_before(operations: list[tuple]) -> None:
    async def body() -> None:
        queue, model = MemoryQueue("model"), Model()
        claimed: list[tuple[str, int]] = []  # (id, token) handed out
        for op in operations:
            if op[0] == "put":
                _, job_id, at = op
                token = await queue.put(job_id, job_id.encode(), at)
                assert token == model.put(job_id, at)
                claimed.append((job_id, token))  # settled by its maker too (a relay mark)
            elif op[0] == "claim":
                _, now, lease, limit = op
                jobs = await queue.claim(now, lease, limit)
                expected = model.claim(now, lease, limit)
                assert [(j.id, j.token) for j in jobs] == expected
                assert all(j.payload == j.id.encode() for j in jobs)
                claimed += expected
            elif op[0] == "done" and claimed:
                job_id, token = claimed[op[1] % len(claimed)]
                assert await queue.done(job_id, token) == model.done(job_id, token)
            elif op[0] == "retry" and claimed:
                job_id, token = claimed[op[1] % len(claimed)]
                retried = await queue.retry(job_id, token, op[2], failed=False)
                assert (retried is not None) == model.retry(job_id, token, op[2])
            assert await queue.backlog() == len(model.due)

    asyncio.run(body())


def test_a_job_done_then_put_again_at_the_same_time_is_claimed_once() -> None:
    async def body() -> None:
        queue = MemoryQueue("again")  # the relay's marks: put, then done by their maker
        token = await queue.put("g", b"", 5.0)
        assert await queue.done("g", token)
        await queue.put("g", b"", 5.0)  # its old entry (5.0, "g") is still in the heap
        assert [j.id for j in await queue.claim(5.0, 10.0, 10)] == ["g"]

    asyncio.run(body())


def test_the_heap_stays_within_twice_the_live_jobs() -> None:
    """Ten thousand claims and retries of 50 jobs: each leaves a stale entry behind, and the
    heap is rebuilt before they outnumber the live entries (plus a little)."""

    async def body() -> None:
        queue = MemoryQueue("churn")
        for i in range(50):
            await queue.put(f"j{i}", b"", 0.0)
        now = 0.0
        for _ in range(10_000):
            now += 1.0
            for job in await queue.claim(now, 0.5, 3):
                await queue.retry(job.id, job.token, now + 0.25, failed=False)
            assert len(queue._heap) <= 2 * 50 + 64
        assert await queue.backlog() == 50

    asyncio.run(body())
