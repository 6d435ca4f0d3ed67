"""The one quota mechanism: how many things of a kind (open tables, tournaments not ended,
pending review requests, ...) one caller may have at once.

A quota is a set of held items per owner (`QuotaStore`: a sorted set per kind and owner on
Redis, a dict in memory). `Quota.take` holds an item atomically with the count, so
concurrent requests never overshoot; when the owner's set is full, the items that no longer
count (the capability's `counts` says which still do: a table that started, a tournament
that ended, a review computed) are dropped and the hold is tried again. An item the
capability does not know counts for GRACE seconds after its hold (the write that follows
the hold may be in flight), then is dropped too (that write died).

The owner is `owner_of(caller, address)`: a player by their JWT's `sub`, an anonymous
client by a digest of its address (never stored as such); the platform is exempt (None), as
is an anonymous caller without an address (the tools, in process). Past the quota: 429 with
the capability's code and `Retry-After`.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from service.core.callers import Caller
from service.core.errors import ServiceError

GRACE = 60.0  # seconds a held item counts whatever `counts` says (its write is in flight)


class QuotaStore(Protocol):
    """Held items per key, each with its score (the time it was held)."""

    async def hold(self, key: str, item: str, score: float, limit: int, ttl: int) -> float | None:
        """Hold `item` under `key` only while fewer than `limit` items are held there, in one
        atomic step. None: held (or it was already); else the lowest score held (full). The
        key expires `ttl` seconds after its last hold."""

    async def held(self, key: str) -> list[tuple[str, float]]:
        """Every item held under `key`, with its score, lowest score first."""

    async def drop(self, key: str, entries: Sequence[tuple[str, float]]) -> None:
        """Drop these (item, score) entries, each only while it still has that score."""


# which of these items the capability knows, and whether each still counts (an item it does
# not know is not stored yet, or gone)
Counts = Callable[[Sequence[str]], Awaitable[dict[str, bool]]]


def owner_of(caller: Caller, address: str | None) -> str | None:
    """Whose quota a caller's request counts in (see the module docstring)."""
    if caller.kind == "player":
        return caller.scope
    if caller.kind == "anonymous" and address is not None:
        return f"address:{hashlib.sha256(address.encode()).hexdigest()[:32]}"
    return None


class Quota:
    """One kind's quota (see the module docstring). `limit` 0: no quota. `retry_after`
    gives the Retry-After from the oldest held item's score and now; `keep` is how long an
    owner's set lives after its last hold (an item cannot count longer than its kind's
    things live)."""

    def __init__(
        self,
        store: QuotaStore,
        kind: str,
        limit: int,
        code: str,
        counts: Counts,
        *,
        keep: int,
        retry_after: Callable[[float, float], float],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.kind = kind
        self.limit = limit
        self.code = code
        self.counts = counts
        self.keep = keep
        self.retry_after = retry_after
        self.clock = clock

    def key(self, owner: str) -> str:
        return f"{self.kind}:{owner}"

    async def count(self, owner: str) -> int:
        """How many items `owner` holds now (those that no longer count included, until a
        full quota drops them)."""
        return len(await self.store.held(self.key(owner)))

    async def take(self, owner: str | None, item: str, now: float | None = None) -> None:
        """Hold `item` in `owner`'s quota, or refuse: 429 `code` with Retry-After."""
        if owner is None or self.limit == 0:
            return
        now = self.clock() if now is None else now
        key = self.key(owner)
        oldest = await self.store.hold(key, item, now, self.limit, self.keep)
        if oldest is None:
            return
        entries = await self.store.held(key)
        known = await self.counts([held for held, _ in entries])
        # dropped: what no longer counts, and what is not stored GRACE seconds after its hold
        stale = [
            (held, score)
            for held, score in entries
            if known.get(held) is False or (held not in known and score <= now - GRACE)
        ]
        if stale:
            await self.store.drop(key, stale)
            oldest = await self.store.hold(key, item, now, self.limit, self.keep)
            if oldest is None:
                return
        error = ServiceError(self.code)
        error.retry_after = max(1, math.ceil(self.retry_after(oldest, now)))
        raise error
