"""The deadline poller: every replica looks at the games whose `due` has come (a seat's clock
ran out, a game idle for too long) and has each dealt with once.

Each poll reads the store's due index (`DueIndex.due_games`), claims each due game for a
lease (`claim_due`: exactly one replica wins it), has it dealt with (`fire`, that is
`GameService.fire_due`, which reads the game and decides: a timeout, an idle game
abandoned, or nothing because it moved on) and settles its entry at the game's due as it
was left (`settle_due`, gated by its stamp). A replica that dies holding a claim leaves it
to lapse: another one fires the game after the lease. A `fire` that fails leaves its claim
to lapse the same way (the game is retried after the lease), logged once per game; an
unreachable store is a warning and a pause that doubles up to `MAX_BACKOFF`, never the end
of the task.

On the embedded store the poller is the process's timer: it sleeps until the next poll or
the earliest due it knows of (`wake(at)`, and the dues it settles), whichever comes first,
and `wake()` makes it look at once. It learns of the dues this process's saves set as a
local reaction of the relay (`saved`, see `service.reactions.relay.LocalReaction`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from service.core.cancellation import stop_if_cancelled
from service.core.ports import DueGame, DueIndex, Fired, StoreUnavailable
from service.reactions.relay import Change

log = logging.getLogger("ten.deadlines")

MAX_BACKOFF = 5.0  # seconds between two polls at most while the store is unreachable
CONCURRENCY = 32  # games fired at once by one poller
FAILING_KEPT = 10_000  # failing games remembered (logged once each); past that, forgotten

Fire = Callable[[str], Awaitable[Fired]]


class DeadlinePoller:
    name = "deadlines"
    durable: Literal[False] = False  # its wake is a local reaction to every save (`saved`)

    def __init__(
        self,
        store: DueIndex,
        fire: Fire,
        *,
        poll: float,
        lease: float,
        clock: Callable[[], float] = time.time,
        batch: int = 100,
        concurrency: int = CONCURRENCY,
        metrics: Any = None,
    ) -> None:
        self._store = store
        self._fire = fire
        self._poll = poll
        self._lease = lease
        self._clock = clock
        self._batch = batch
        self._concurrency = concurrency
        self._metrics = metrics
        self._failing: set[str] = set()  # games whose fire raised (logged once)
        self._backoff = 0.0  # the pause after the last poll failed; 0 while the store answers
        self._failures = 0  # polls failed in a row
        self._next_due: float | None = None  # the earliest due known (wake, settled games)
        self._woken: asyncio.Event | None = None
        self._resting_until: float | None = None  # when the current rest ends (clock time)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._more = False  # the last poll read a whole batch and fired some: look again

    # ------------------------------------------------------------------ one poll

    async def run_once(self, now: float) -> int:
        """Deal with the games due at `now`: each one this poller claims is fired and its
        entry settled. Returns how many were fired. Raises StoreUnavailable when the store
        could not be reached (after every game under way was dealt with)."""
        if self._next_due is not None and self._next_due <= now:
            self._next_due = None
        due = await self._store.due_games(now, self._batch)
        if not due:
            self._more = False
            return 0
        slots = asyncio.Semaphore(self._concurrency)
        outcomes = await asyncio.gather(
            *(self._one(entry, now, slots) for entry in due), return_exceptions=True
        )
        fired = 0
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome  # the store failed (a failing `fire` is dealt with in `_one`)
            fired += outcome
        self._more = len(due) >= self._batch and fired > 0
        return fired

    async def _one(self, entry: DueGame, now: float, slots: asyncio.Semaphore) -> bool:
        """Claim, fire and settle one due game; False when another poller has it or its
        fire failed (the claim is left to lapse: it is retried after the lease)."""
        game_id = entry.game_id
        async with slots:
            if not await self._store.claim_due(game_id, max(now, self._clock()), self._lease):
                return False
            try:
                fired = await self._fire(game_id)
            except StoreUnavailable:
                raise
            except Exception:
                self._failed(game_id)
                return False
            await self._store.settle_due(game_id, fired.due, fired.stamp)
        if game_id in self._failing:
            self._failing.discard(game_id)
            log.info("deadline of game %s dealt with after failing (%s)", game_id, fired.outcome)
        self._count(fired)
        if fired.due is not None:
            self._note(fired.due)
        return True

    def _failed(self, game_id: str) -> None:
        """Log a game's failure once (with its traceback), not on every retry."""
        if game_id in self._failing:
            log.debug("deadline of game %s failed again", game_id, exc_info=True)
            return
        if len(self._failing) >= FAILING_KEPT:
            self._failing.clear()
        self._failing.add(game_id)
        log.exception(
            "deadline of game %s failed; retried after the lease (%.0f s)", game_id, self._lease
        )

    def _count(self, fired: Fired) -> None:
        metrics = self._metrics
        if metrics is None:
            return
        metrics.deadlines.labels(fired.outcome).inc()
        if fired.late is not None:
            metrics.deadline_lateness.observe(max(fired.late, 0.0))

    # ------------------------------------------------------------------ the loop

    async def step(self) -> float:
        """One poll at the clock's time, whatever happens (it never raises but for
        cancellation): the seconds to wait before the next one."""
        try:
            await self.run_once(self._clock())
        except StoreUnavailable as exc:
            return self._paused(f"the store is unavailable ({exc})", exc_info=False)
        except Exception:
            return self._paused("polling for due games failed", exc_info=True)
        if self._failures:
            log.info("polling for due games again (after %d failed polls)", self._failures)
            self._failures, self._backoff = 0, 0.0
        return 0.0 if self._more else self._poll

    def _paused(self, why: str, *, exc_info: bool) -> float:
        """A failed poll: logged when the failures start, the pause doubled."""
        self._failures += 1
        self._backoff = min(max(2 * self._backoff, 2 * self._poll), MAX_BACKOFF)
        if self._failures == 1:
            log.warning("%s; polling again in %.1f s", why, self._backoff, exc_info=exc_info)
        else:
            log.debug("%s (%d in a row)", why, self._failures, exc_info=exc_info)
        return self._backoff

    async def run_forever(self) -> None:
        """Poll until cancelled (the process's background task)."""
        self._loop = asyncio.get_running_loop()
        self._woken = woken = asyncio.Event()
        while True:
            stop_if_cancelled()  # a cancellation a library dropped (service.core.cancellation)
            await self._rest(await self.step(), woken)

    async def _rest(self, delay: float, woken: asyncio.Event) -> None:
        """Wait `delay` seconds, or until the earliest due known comes if sooner (a `wake`
        tells of one; not while the store fails: the pause is kept)."""
        loop = asyncio.get_running_loop()
        until = loop.time() + delay
        try:
            while True:
                wait = until - loop.time()
                if not self._failures and self._next_due is not None:
                    wait = min(wait, self._next_due - self._clock())
                if wait <= 0:
                    await asyncio.sleep(0)  # the embedded store never suspends: let others run
                    return
                self._resting_until = self._clock() + wait
                try:
                    async with asyncio.timeout(wait):
                        await woken.wait()
                except TimeoutError:
                    return
                woken.clear()  # what it told is in _next_due
        finally:
            self._resting_until = None

    def saved(self, change: Change) -> None:
        """The relay's local reaction, listed for `DUE_MOVED` (a game made with a due, or its
        due moved): the poller is woken by then. A hint to this process's timer, nothing
        more: if it is lost (the process died), the poll of the due index finds the game."""
        if change.new.due is not None:
            self.wake(change.new.due)

    def wake(self, at: float | None = None) -> None:
        """A game's due was set (`at`, unix seconds: `saved`), or something is
        due now (None): the poller looks by then rather than at its next poll (resting
        until before `at` anyway, it is not disturbed). Callable from any thread."""
        at = self._clock() if at is None else at
        self._note(at)
        loop, woken, until = self._loop, self._woken, self._resting_until
        if loop is None or woken is None:
            return  # not running yet: its first poll looks anyway
        if until is None or at >= until:
            return  # polling now, or resting until after `at` anyway: no need to wake it
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            woken.set()
        else:
            with contextlib.suppress(RuntimeError):  # that loop is closed: nobody polls
                loop.call_soon_threadsafe(woken.set)

    def _note(self, at: float) -> None:
        if self._next_due is None or at < self._next_due:
            self._next_due = at
