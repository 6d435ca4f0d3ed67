"""The one worker of every background job (service.jobs.worker.Worker) on the embedded queue, with a
fake clock and no jitter: backoff, poison quarantine, a dependency down, requeue, and a job
put again while claimed."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import pytest

from infra.queues import MemoryQueue
from service.core.errors import ServiceError
from service.core.ports import StoreUnavailable
from service.games.bot_work import bots_busy
from service.jobs.worker import Job, PermanentFailure, Worker
from tests.support.aio import dropping_sleep, run_without_waiting


class Clock:
    def __init__(self, now: float = 1_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Handler:
    """Records what it handled; `fail` maps a job id to what it raises (each time)."""

    def __init__(self, fail: dict[str, BaseException] | None = None) -> None:
        self.fail = fail or {}
        self.handled: list[str] = []
        self.tried: list[str] = []

    async def __call__(self, job: Job) -> None:
        self.tried.append(job.id)
        if job.id in self.fail:
            raise self.fail[job.id]
        self.handled.append(job.id)


def worker(queue: MemoryQueue, handle: Handler, clock: Clock, **options) -> Worker:
    counted: list[tuple[str, str]] = []
    made = Worker(
        queue, handle, clock=clock, jitter=lambda: 0.5, count=lambda q, o: counted.append((q, o)),
        **options,
    )  # fmt: skip
    made.counted = counted  # type: ignore[attr-defined]
    return made


def run(coroutine):
    return asyncio.run(coroutine)


def test_a_poisoned_job_is_quarantined_at_once_and_the_jobs_behind_it_go_through(caplog):
    async def body() -> None:
        clock, queue = Clock(), MemoryQueue("archive")
        handle = Handler({"bad": PermanentFailure("NUL in a name")})
        for job_id in ("bad", "good-1", "good-2"):
            await queue.put(job_id, job_id.encode(), clock.now)
        w = worker(queue, handle, clock)
        with caplog.at_level(logging.ERROR, logger="ten.jobs"):
            assert await w.run_once() == 3
        assert handle.handled == ["good-1", "good-2"]
        [aside] = await queue.quarantined(10)
        assert (aside.id, aside.payload, aside.failures) == ("bad", b"bad", 1)
        assert "NUL in a name" in aside.reason
        assert await queue.backlog() == 0
        assert sorted(w.counted) == [
            ("archive", "done"),
            ("archive", "done"),
            ("archive", "quarantined"),
        ]
        quarantined_logs = [r for r in caplog.records if "quarantined" in r.getMessage()]
        assert len(quarantined_logs) == 1
        # never tried again
        clock.now += 10_000
        assert await w.run_once() == 0
        assert handle.tried.count("bad") == 1

    run(body())


def test_a_failing_job_backs_off_then_is_quarantined_after_max_failures():
    async def body() -> None:
        clock, queue = Clock(), MemoryQueue("relay")
        handle = Handler({"flaky": RuntimeError("boom")})
        await queue.put("flaky", b"", clock.now)
        w = worker(queue, handle, clock, max_failures=3, first_backoff=1.0, max_backoff=60.0)
        assert await w.run_once() == 1  # failure 1: due again after 1 s (jitter 0.5: x1.0)
        assert await w.run_once() == 0
        clock.now += 0.99
        assert await w.run_once() == 0
        clock.now += 0.02
        assert await w.run_once() == 1  # failure 2: after 2 s
        clock.now += 1.9
        assert await w.run_once() == 0
        clock.now += 0.2
        assert await w.run_once() == 1  # failure 3: quarantined
        assert handle.tried == ["flaky"] * 3
        [aside] = await queue.quarantined(10)
        assert aside.failures == 3
        assert "RuntimeError: boom" in aside.reason
        assert await queue.backlog() == 0
        assert w.counted == [("relay", "retried"), ("relay", "retried"), ("relay", "quarantined")]

    run(body())


def test_a_dependency_down_blames_no_job_and_they_all_come_back():
    async def body() -> None:
        clock, queue = Clock(), MemoryQueue("archive")
        handle = Handler({"a": StoreUnavailable("database down")})
        for job_id in ("a", "b"):
            await queue.put(job_id, b"", clock.now)
        w = worker(queue, handle, clock, max_failures=1)
        with pytest.raises(StoreUnavailable):
            await w.run_once()
        assert await queue.quarantined(10) == []
        assert handle.handled == []  # the batch stopped: "b" was not tried while it is down
        handle.fail.clear()  # the database is back
        clock.now += 1.01
        assert await w.run_once() == 2
        assert sorted(handle.handled) == ["a", "b"]
        assert await queue.backlog() == 0

    run(body())


def test_a_quarantined_job_put_back_is_tried_again_with_its_failures_forgotten():
    async def body() -> None:
        clock, queue = Clock(), MemoryQueue("archive")
        handle = Handler({"bad": PermanentFailure("refused")})
        await queue.put("bad", b"payload", clock.now)
        w = worker(queue, handle, clock)
        await w.run_once()
        assert await queue.put("bad", b"other", clock.now) == 0  # stays aside
        assert await queue.backlog() == 0
        handle.fail.clear()  # the cause was fixed
        assert await queue.requeue("bad", clock.now)
        assert not await queue.requeue("bad", clock.now)  # not in quarantine any more
        assert await queue.quarantined(10) == []
        [job] = await queue.claim(clock.now, 30.0, 10)
        assert (job.payload, job.failures) == (b"payload", 0)

    run(body())


def test_a_job_put_again_while_claimed_is_not_removed_by_that_claim():
    """What is put meanwhile must be handled too: the claim's token no longer settles it."""

    async def body() -> None:
        clock, queue = Clock(), MemoryQueue("relay")
        await queue.put("g", b"", clock.now)
        [claimed] = await queue.claim(clock.now, 30.0, 10)
        token = await queue.put("g", b"", clock.now + 5)
        assert token > claimed.token
        assert not await queue.done("g", claimed.token)
        assert await queue.retry("g", claimed.token, clock.now, failed=True) is None
        assert await queue.backlog() == 1
        clock.now += 5
        [again] = await queue.claim(clock.now, 30.0, 10)
        assert again.id == "g"
        assert await queue.done("g", again.token)
        assert await queue.backlog() == 0

    run(body())


def test_a_handler_answering_a_time_leaves_its_job_due_then_unless_it_was_put_meanwhile():
    async def body() -> None:
        clock, queue = Clock(), MemoryQueue("tournaments")
        later = clock.now + 3600
        puts = {"put-meanwhile": clock.now + 2}

        async def handle(job: Job) -> float:
            if job.id in puts:  # another process queues it while the step runs
                await queue.put(job.id, b"", puts.pop(job.id))
            return later

        for job_id in ("waits", "put-meanwhile"):
            await queue.put(job_id, b"", clock.now)
        w = worker(queue, handle, clock)  # type: ignore[arg-type]
        assert await w.run_once() == 2
        assert w.counted == [("tournaments", "later"), ("tournaments", "later")]
        assert await queue.backlog() == 2
        assert await queue.claim(clock.now + 1, 30.0, 10) == []
        # at its lease's end: only the one put meanwhile (due as that put made it)
        [meanwhile] = await queue.claim(clock.now + w.lease, 30.0, 10)
        assert meanwhile.id == "put-meanwhile"
        assert await queue.done(meanwhile.id, meanwhile.token)
        assert await queue.claim(later - 1, 30.0, 10) == []
        [waited] = await queue.claim(later, 30.0, 10)
        assert waited.id == "waits"

    run(body())


def test_a_claim_hides_the_job_until_its_lease_ends():
    async def body() -> None:
        clock, queue = Clock(), MemoryQueue("relay")
        await queue.put("g", b"x", clock.now)
        assert len(await queue.claim(clock.now, 30.0, 10)) == 1
        assert await queue.claim(clock.now + 29.9, 30.0, 10) == []
        [again] = await queue.claim(clock.now + 30.0, 30.0, 10)  # its worker died
        assert again.id == "g"

    run(body())


def test_backoff_doubles_to_the_cap_within_a_quarter_either_way():
    w = Worker(MemoryQueue("x"), Handler(), first_backoff=1.0, max_backoff=8.0, jitter=lambda: 0.5)
    assert [w.backoff(n) for n in range(1, 6)] == [1.0, 2.0, 4.0, 8.0, 8.0]
    low = Worker(MemoryQueue("x"), Handler(), max_backoff=8.0, jitter=lambda: 0.0)
    high = Worker(MemoryQueue("x"), Handler(), max_backoff=8.0, jitter=lambda: 1.0)
    assert (low.backoff(2), high.backoff(2), high.backoff(4)) == (1.5, 2.5, 8.0)


def test_a_quarantine_reason_keeps_its_text_and_escapes_what_could_forge_a_line():
    async def body() -> None:
        clock, queue = Clock(), MemoryQueue("archive")
        bad = PermanentFailure("name 'Zoë\x00\u202egnp.exe'\nFAKE LOG LINE")
        await queue.put("bad", b"", clock.now)
        await worker(queue, Handler({"bad": bad}), clock).run_once()
        [aside] = await queue.quarantined(10)
        assert aside.reason == (
            "PermanentFailure: name 'Zoë\\u0000\\u202egnp.exe'\\u000aFAKE LOG LINE"
        )

    run(body())


@pytest.mark.parametrize("settle", [0, 1, 2, 3])
def test_a_worker_cancelled_as_it_is_woken_stops(settle: int) -> None:
    """A cancellation that comes as the worker's wait ends (woken by a job queued, or by a
    job finishing) stops it: Python 3.11's asyncio.wait_for dropped such a cancellation,
    and the worker then ran on for good (a shutdown, or a test, waiting for it hung)."""

    async def body() -> None:
        worker = Worker(MemoryQueue("jobs"), Handler(), poll=30.0)
        task = asyncio.create_task(worker.run_forever())
        await asyncio.sleep(0.01)  # waiting for work
        worker.wake()
        for _ in range(settle):  # the wake taking effect, step by step
            await asyncio.sleep(0)
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=120.0)  # only a task that never stops waits so
        assert task in done, "the cancelled worker did not stop"
        assert task.cancelled()

    asyncio.run(body())


class DroppingQueue(MemoryQueue):
    """A queue whose claim takes a moment and, cancelled meanwhile, answers anyway
    (`dropping_sleep`)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.dropped = 0

    async def claim(self, now: float, lease: float, limit: int) -> list[Job]:
        self.dropped += await dropping_sleep(0.02)
        return await super().claim(now, lease, limit)


def test_a_worker_whose_cancellation_a_claim_dropped_still_stops() -> None:
    """The cancellation is still counted (Task.cancelling()); without a look at it the
    worker ran on and every poll's timeout then took the next cancellation for its own."""

    async def body() -> None:
        queue = DroppingQueue("jobs")
        worker = Worker(queue, Handler(), poll=0.01)
        task = asyncio.create_task(worker.run_forever())
        await asyncio.sleep(0.005)  # inside its first claim
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=120.0)  # only a task that never stops waits so
        assert queue.dropped == 1  # the claim did drop it
        assert task in done, "the cancelled worker did not stop"
        assert task.cancelled()

    run_without_waiting(body())  # a worker that does not stop fails the test, not hangs it


def busy() -> Exception:
    """A refusal that says "busy, try again" (the bots' pool full: service.games.bot_work)."""
    return bots_busy()


def test_a_busy_dependency_is_a_wait_never_a_failure_and_the_job_runs_once_it_frees(caplog):
    """A full bot pool (bots_busy, Retry-After) many more times than `max_failures`: the
    job waits, is never quarantined nor counted as failed, and is done once the pool frees."""

    async def body() -> None:
        clock, queue = Clock(), MemoryQueue("tournaments")
        handle = Handler({"t": busy()})
        await queue.put("t", b"", clock.now)
        w = worker(queue, handle, clock, max_failures=3, unavailable_cap=30.0)
        with caplog.at_level(logging.INFO, logger="ten.jobs"):
            for _ in range(3 * 4):
                with contextlib.suppress(ServiceError):  # held back, as for a store down
                    await w.run_once()
                assert await queue.quarantined(10) == []
                [job] = await queue.claim(clock.now, 0.0, 10) or [None]
                assert job is None  # it waits: not due again at once
                clock.now += 30.0  # past any wait
        assert handle.tried == ["t"] * 12
        assert await queue.quarantined(10) == []
        assert queue._fails.get("t", 0) == 0  # never blamed
        assert ("tournaments", "retried") not in w.counted
        assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
        handle.fail.clear()  # the pool frees
        clock.now += 30.0
        assert await w.run_once() == 1
        assert handle.handled == ["t"]
        assert await queue.backlog() == 0
        assert w.counted == [("tournaments", "done")]

    run(body())


def test_a_busy_refusal_raised_from_a_failure_is_that_failure():
    """A bot worker that died computing the job's step (bots_busy raised from it) may be the
    job's doing: a failure, counted, so a job that kills every worker is set aside."""

    async def body() -> None:
        clock, queue = Clock(), MemoryQueue("reviews")
        died = busy()
        died.__cause__ = RuntimeError("a bot worker process died")
        await queue.put("r", b"", clock.now)
        w = worker(queue, Handler({"r": died}), clock, max_failures=1)
        assert await w.run_once() == 1
        [aside] = await queue.quarantined(10)
        assert "bots_busy" in aside.reason

    run(body())
