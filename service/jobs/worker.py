"""One leased queue and one worker for every background job of the service.

The reactions to a game change (`service.reactions.relay`) and the archive (`service.history.archiver`) are
jobs in a `LeasedQueue` (infra.queues: in memory for the embedded store, on Redis for every
replica), each handled by a `Worker`:

- **Lease**: a claimed job is due again when its lease ends, so a job whose process died
  is taken over by another replica; each claim has a token (`Job.token`) and only the
  latest claim may settle the job. A job put again while claimed gets a new token: the
  claim holding the old one cannot remove it (what was put meanwhile is handled too).
- **Backoff**: a failed job is due again after 1 s, 2 s, 4 s ... (capped, with jitter);
  a dependency that does not answer (`Unavailable`: the store or the database is down)
  holds the whole worker back instead, and counts against no job.
- **Busy is a wait**: a refusal that says "busy, try again" (`busy_for`: an error with a
  `retry_after`, e.g. the bots' pool full, `bots_busy`) holds the whole worker back the same
  way, for at least that long, on every queue: the job is never blamed for it, so no busy
  spell, however long, sets a job aside.
- **Poison quarantine**: a job that fails `max_failures` times, or fails with a
  `PermanentFailure`, is set aside with its reason (`LeasedQueue.quarantine`), counted and
  logged once, and never blocks the jobs behind it. `python -m service.cli jobs` lists the
  quarantined jobs of a queue and puts them back (`requeue`) once the cause is fixed.
- **Log once**: a streak of failures of the worker's dependency is logged when it begins
  and when it ends, not at every try.
- **Later**: a handler may return a time (unix s): its job then stays queued, due at that
  time (a step that waits for a time, e.g. a tournament's start), unless it was put again
  while it ran: then it is due as that put made it (no wake-up is lost).
- **Every queue named once**: `QUEUES` names every queue of the service; the adapters make
  no other (`registered`), and the jobs command line offers each of them.

No adapter here: the queue is a port and the handler a callable.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
import unicodedata
from collections.abc import Awaitable, Callable, Sequence
from typing import Final, NamedTuple, Protocol, TypeVar

from service.core.cancellation import stop_if_cancelled
from service.core.ports import StoreUnavailable

log = logging.getLogger("ten.jobs")

# a dependency that does not answer: the worker backs off, no job is blamed
Unavailable = (StoreUnavailable, OSError, TimeoutError)


def busy_for(exc: BaseException) -> float | None:
    """The seconds to wait when `exc` says "busy, try again", else None (a failure). Such a
    refusal carries a `retry_after` (a `ServiceError` with a Retry-After: the bots' pool full,
    a quota) and was raised by no other error: one raised from a failure (a bot worker that
    died computing the job's step, which may be the job's doing) is that failure."""
    retry_after = getattr(exc, "retry_after", None)
    if retry_after is None or exc.__cause__ is not None:
        return None
    return float(retry_after)


# every leased queue of the service: its name, what its jobs are (`python -m service.cli jobs`)
QUEUES: Final[dict[str, str]] = {
    "archive": "ended games waiting for the SQL archive",
    "relay": "games whose reactions are to be relayed",
    "webhooks": "deliveries to the platform",
    "reviews": "post-game reviews to compute (one set aside answers 500 review_failed "
    "until it is put back)",
    "tournaments": "tournaments whose director has a step to take (dealing a round, "
    "pairing the next)",
    "matchmaking": "matchmaking pools whose matchmaker has a step to take (pairing the "
    "waiting tickets, making their tables)",
    "push": "Web Push messages telling players their correspondence turn came",
    "bulk": "bulk pairings' tables to start at their time (or to cancel)",
    "privacy": "the erasure ledger's reconciliation, due at each start and then periodically",
}
Q = TypeVar("Q")


def registered(make: Callable[[str], Q]) -> Callable[[str], Q]:
    """`make` (a queue by name) for the names in `QUEUES` only: a queue that is not there
    cannot be made, so none escapes the jobs command line."""

    def made(name: str) -> Q:
        if name not in QUEUES:
            raise ValueError(
                f"no queue {name!r} in service.jobs.worker.QUEUES: name it there first"
            )
        return make(name)

    return made


class PermanentFailure(Exception):
    """A job that can never succeed as it is (its data is refused): quarantined at once."""


class QueueFull(Exception):
    """A bounded `put` refused: the queue holds its bound of jobs already."""


class Job(NamedTuple):
    """A claimed job: `token` is the claim's (only its holder settles the job), `failures`
    how many times it failed before this claim."""

    id: str
    payload: bytes
    token: int
    failures: int


class Quarantined(NamedTuple):
    """A job set aside: why (the last failure), after how many failures, when (unix s)."""

    id: str
    payload: bytes
    reason: str
    failures: int
    at: float


class LeasedQueue(Protocol):
    """Jobs by id, each due at a time; claimed for a lease. Every operation is atomic."""

    name: str

    async def put(
        self, job_id: str, payload: bytes, at: float, *, keep: bool = False, bound: int = 0
    ) -> int:
        """Queue the job, due at `at` (a job of that id already queued: its payload is
        replaced, it is due at the earlier of the two times, and its current claim, if
        any, can no longer settle it; with `keep`, it is left as it is instead, and so is
        one done within its `remember` time: 0 returned). A job in quarantine stays there
        (0 returned); else the token a caller may settle the job with (`done`) without
        claiming it. With a `bound`, a job not queued yet is refused (QueueFull, nothing
        changed) when `bound` jobs are queued (`backlog`) already."""

    async def claim(self, now: float, lease: float, limit: int) -> list[Job]:
        """Up to `limit` jobs due at `now`, earliest first, each claimed until now + lease."""

    async def hasten(self, job_id: str, at: float) -> bool:
        """A queued job due after `at` is due at `at`, its payload kept, and its current
        claim, if any, can no longer settle it (as a `put` of it would); True when moved.
        A job not queued, or due by then already, is left as it is."""

    async def done(
        self, job_id: str, token: int, *, now: float = 0.0, remember: float = 0.0
    ) -> bool:
        """The job succeeded: it leaves the queue, if `token` is still its latest. With
        `remember`, a `put(..., keep=True)` of its id is ignored for that many seconds."""

    async def retry(self, job_id: str, token: int, at: float, *, failed: bool) -> int | None:
        """Due again at `at` (`failed`: one more failure counted); its failures so far, or
        None when `token` is no longer its latest (nothing changed)."""

    async def quarantine(self, job_id: str, token: int, reason: str, now: float) -> bool:
        """Set the job aside with `reason`, if `token` is still its latest."""

    async def quarantined(self, limit: int) -> list[Quarantined]: ...

    async def quarantined_job(self, job_id: str) -> Quarantined | None:
        """The job set aside under this id, None when it is not in quarantine."""

    async def requeue(self, job_id: str, now: float) -> bool:
        """Put a quarantined job back, due now, its failures forgotten."""

    async def backlog(self) -> int:
        """Jobs queued (due, claimed or waiting for a retry), quarantined ones apart."""

    async def queued(self, job_id: str) -> bool:
        """Whether the job is queued (due, claimed or waiting for a retry)."""


_UNPRINTABLE = frozenset(("Cc", "Cf", "Zl", "Zp", "Cs"))  # controls, bidi and format marks
# a handler's answer: None, the job is done; a time (unix s), the job is due again then
Handler = Callable[[Job], Awaitable[float | None]]
Counter = Callable[[str, str], None]  # (queue name, outcome): done, retried, quarantined


class Worker:
    """Claims due jobs of one queue and hands each to `handle`, up to `concurrency` at once
    (a slow job holds one slot, not the others; see the module docstring). Never crashes
    its task: a bug in a handler is a failure of that job."""

    def __init__(
        self,
        queue: LeasedQueue,
        handle: Handler,
        *,
        lease: float = 60.0,
        batch: int = 16,
        concurrency: int = 1,
        poll: float = 1.0,
        max_failures: int | None = 5,
        first_backoff: float = 1.0,
        max_backoff: float = 300.0,
        unavailable_cap: float = 30.0,
        remember_done: float = 0.0,
        log_failures: bool = True,
        clock: Callable[[], float] = time.time,
        jitter: Callable[[], float] = random.random,
        count: Counter | None = None,
    ) -> None:
        self.queue = queue
        self.handle = handle
        self.lease = lease
        self.batch = batch
        self.concurrency = concurrency
        self.poll = poll
        self.max_failures = max_failures  # None: no limit (the handler decides, e.g. by age)
        self.first_backoff = first_backoff
        self.max_backoff = max_backoff
        self.unavailable_cap = unavailable_cap
        self.remember_done = remember_done  # seconds a job done is not queued again (`keep`)
        self.log_failures = log_failures  # False: the handler logs its failures itself
        self.clock = clock
        self.jitter = jitter
        self._count = count
        self._wake = asyncio.Event()
        self._down = 0  # failures in a row of the queue or the handler's dependency
        self._paused_until = 0.0  # a dependency did not answer: no claim before then

    def wake(self) -> None:
        """A job was queued: look now rather than at the next poll."""
        self._wake.set()

    def backoff(self, failures: int) -> float:
        """Seconds before a job that failed `failures` times is tried again: doubling from
        `first_backoff`, capped at `max_backoff`, each between 75% and 125% of that."""
        base = min(self.max_backoff, self.first_backoff * 2 ** min(failures - 1, 60))
        return min(self.max_backoff, base * (0.75 + 0.5 * self.jitter()))

    def _pause(self) -> float:
        return min(self.unavailable_cap, self.first_backoff * 2 ** min(self._down, 20))

    async def run_once(self) -> int:
        """Claim what is due (up to `batch`) and handle it; the number handled. When the
        dependency does not answer, the jobs not handled yet are due again soon (none
        blamed) and its error is raised."""
        jobs = await self.queue.claim(self.clock(), self.lease, self.batch)
        for start in range(0, len(jobs), self.concurrency):
            chunk = jobs[start : start + self.concurrency]
            down = await asyncio.gather(*(self._one(job) for job in chunk))
            failure = next((exc for exc in down if exc is not None), None)
            if failure is not None:
                retry_at = self.clock() + self.first_backoff
                for left in jobs[start + len(chunk) :]:
                    with contextlib.suppress(*Unavailable):
                        await self.queue.retry(left.id, left.token, retry_at, failed=False)
                raise failure
        return len(jobs)

    async def _one(self, job: Job) -> BaseException | None:
        """Handle one claimed job and settle it; never raises. The dependency's error when
        it did not answer (the job is due again soon, not blamed), else None."""
        try:
            try:
                later = await self.handle(job)
            except Unavailable as exc:
                at = self.clock() + self.first_backoff
                await self.queue.retry(job.id, job.token, at, failed=False)
                self._unavailable(exc)
                return exc
            except PermanentFailure as exc:
                await self._quarantine(job, job.failures + 1, f"{type(exc).__name__}: {exc}")
                return None
            except Exception as exc:
                wait = busy_for(exc)
                if wait is None:
                    await self._failed(job, exc)
                    return None
                at = self.clock() + max(self.first_backoff, wait)
                await self.queue.retry(job.id, job.token, at, failed=False)
                self._unavailable(exc, wait)
                return exc
            if later is None:
                await self.queue.done(
                    job.id, job.token, now=self.clock(), remember=self.remember_done
                )
            else:  # the claim's token: a put while it ran keeps the job due as that put made it
                await self.queue.retry(job.id, job.token, later, failed=False)
            self._counted("done" if later is None else "later")
            if self._down:
                log.info("%s working again after %d failure(s)", self.queue.name, self._down)
                self._down = 0
        except Exception as exc:  # the queue did not answer: the claim lapses, tried again
            self._unavailable(exc)
            return exc
        return None

    async def _failed(self, job: Job, exc: Exception) -> None:
        failures = job.failures + 1
        reason = f"{type(exc).__name__}: {exc}"
        if self.max_failures is not None and failures >= self.max_failures:
            await self._quarantine(job, failures, reason)
            return
        if self.log_failures:
            log.warning(
                "%s job %s failed (%d time(s)): %s", self.queue.name, job.id, failures, reason,
                exc_info=failures == 1,
            )  # fmt: skip
        at = self.clock() + self.backoff(failures)
        if await self.queue.retry(job.id, job.token, at, failed=True) is not None:
            self._counted("retried")

    async def _quarantine(self, job: Job, failures: int, reason: str) -> None:
        # the reason may quote the job's data (a player's name): stored, listed and logged
        # with control characters escaped, so it cannot forge a line of a log or a terminal
        reason = "".join(
            f"\\u{ord(c):04x}" if unicodedata.category(c) in _UNPRINTABLE else c
            for c in reason[:1000]
        )
        if await self.queue.quarantine(job.id, job.token, reason, self.clock()):
            log.error(
                "%s job %s quarantined after %d failure(s): %s (the jobs behind it go on; "
                "`python -m service.cli jobs list %s` lists it, `... requeue` puts it back)",
                self.queue.name, job.id, failures, reason, self.queue.name,
            )  # fmt: skip
            self._counted("quarantined")

    def _unavailable(self, exc: BaseException, busy: float | None = None) -> None:
        """The queue or the handler's dependency did not answer, or is `busy` (that many
        seconds at least): logged once a streak, and no claim until a backoff has passed."""
        self._down += 1
        self._paused_until = self.clock() + max(self._pause(), busy or 0.0)
        if self._down == 1:
            if busy is not None:
                log.info("%s: %s; its jobs wait", self.queue.name, exc)
            elif isinstance(exc, Unavailable):
                log.warning("%s unavailable (%s); retrying", self.queue.name, exc)
            else:
                log.error("%s jobs: the queue failed; retrying", self.queue.name, exc_info=exc)

    def _counted(self, outcome: str) -> None:
        if self._count is not None:
            self._count(self.queue.name, outcome)

    async def run_forever(self) -> None:
        """Keep up to `concurrency` jobs in flight while any is due; a dependency down is
        logged once and looked at again with a backoff (up to `unavailable_cap`)."""
        inflight: set[asyncio.Task] = set()

        def finished(task: asyncio.Task) -> None:
            inflight.discard(task)
            self._wake.set()

        try:
            while True:
                stop_if_cancelled()  # a cancellation a library dropped (service.core.cancellation)
                self._wake.clear()  # before the claim: a job queued during it wakes the next
                wait = self.poll
                free = min(self.concurrency - len(inflight), self.batch)
                paused = self._paused_until - self.clock()
                if paused > 0:
                    wait = paused
                elif free > 0:
                    try:
                        jobs = await self.queue.claim(self.clock(), self.lease, free)
                    except Exception as exc:
                        self._unavailable(exc)
                        continue
                    for job in jobs:
                        task = asyncio.create_task(self._one(job))
                        inflight.add(task)
                        task.add_done_callback(finished)
                    if len(jobs) == free:
                        continue  # more may be due
                # asyncio.timeout, not wait_for: Python 3.11's wait_for can swallow a
                # cancellation that comes as the wait ends, and the worker then never stops
                # (seen: a test waiting for a cancelled worker hung for good)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(wait):
                        await self._wake.wait()
        finally:
            for task in inflight:
                task.cancel()
            await asyncio.gather(*inflight, return_exceptions=True)


async def requeue_all(queue: LeasedQueue, ids: Sequence[str], now: float) -> int:
    """Put quarantined jobs back (the CLI's `requeue`); the number put back."""
    back = 0
    for job_id in ids:
        back += await queue.requeue(job_id, now)
    return back
