"""The one write loop of every command of every capability (a game's action, the lobby's
changes, a tournament's): try the change on the record as read, save it with the version
compared, and on a lost race try again on the record as stored, after a jittered backoff.

A try (`attempt`) decides and saves; its save raises `Conflict` when another writer won,
naming the record as stored then (None: it is gone). What a save keeps with the change (the
idempotent outcome, the relay's mark, the replicas' WAIT) is the store's and the save's
(`GameService.store_change`, `TournamentStore.save_tournament`): each try saves all of it
or nothing. The backoff is "full jitter" (a random pause up to a cap that doubles per lost
race), so writers that collided spread out instead of colliding again: contention every
valid command can survive (every player of a tournament registering at once) is survived.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from domain.game.errors import RuleError
from service.core.errors import ServiceError

R = TypeVar("R")
T = TypeVar("T")


class Conflict(Exception, Generic[R]):
    """A save refused: the record is no longer at the version the change was decided on.
    `current`: the record as stored when it refused (None: there is none any more)."""

    def __init__(self, message: str = "", *, current: R | None = None) -> None:
        super().__init__(message)
        self.current = current


class Retry:
    """How often and how patiently a lost race is tried again: `tries` in all, the n-th
    retry after a pause drawn uniformly from [0, min(cap, base * 2**n)] seconds."""

    def __init__(
        self,
        tries: int,
        *,
        base: float = 0.002,
        cap: float = 0.25,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        uniform: Callable[[float, float], float] = random.uniform,
    ) -> None:
        self.tries = tries
        self.base = base
        self.cap = cap
        self.sleep = sleep
        self.uniform = uniform

    def pause(self, lost: int) -> float:
        """The pause before the retry that follows the `lost`-th lost race (0: the first)."""
        return self.uniform(0.0, min(self.cap, self.base * 2**lost))


async def write(
    record: R,
    attempt: Callable[[R], Awaitable[T]],
    retry: Retry,
    *,
    gone: str,
    stale: bool = False,
    reread: Callable[[], Awaitable[R]] | None = None,
    seen: Callable[[R | None], None] | None = None,
    read_after_pause: bool = True,
) -> T:
    """`attempt(record)` until it is not refused by a lost race (see the module docstring).

    A lost race tries again after its pause, on the record as stored then (`reread`; without
    it, or without `read_after_pause`, on the record the conflict names: no round trip, for
    records seldom contended); `seen` is told of the conflict's record (None: the record is
    gone, ServiceError `gone`); past `retry.tries`, `concurrent_update`.
    `stale`: `record` is a copy that may be out of date (a process's cache): a refusal of the
    change itself (a ServiceError or RuleError) is then judged again on the record as stored
    (`reread`), so a stale copy costs a retry, never a wrong answer."""
    fresh = not stale
    lost = 0
    while True:
        try:
            return await attempt(record)
        except Conflict as conflict:
            lost += 1
            current = conflict.current
            if seen is not None:
                seen(current)
            if lost >= retry.tries:
                raise ServiceError("concurrent_update") from None
            if current is None:
                raise ServiceError(gone) from None
            record, fresh = current, True
            await retry.sleep(retry.pause(lost - 1))
            if read_after_pause and reread is not None:  # others wrote during the pause
                record = await reread()
        except (ServiceError, RuleError):
            if fresh or reread is None:
                raise
            record, fresh = await reread(), True
