"""The rate limit's counts: one fixed window per client, counted in one atomic step.

`RedisRateCounter` shares the count of every replica (standalone or Cluster: one key, one
slot) with a Lua script run by redis-py (`register_script`: EVALSHA, loaded again if the
server lost it): the increment, the window's expiry on the first hit and the time left
come back in one round trip, so two replicas never both read 59 and both let the 60th and
61st through (Litestar's store-backed middleware did a GET then a SET: two replicas let far
more requests through than the limit). Redis errors are StoreUnavailable, the 503 with
Retry-After of every other request while Redis is down.

`MemoryRateCounter` is the embedded default's: one process, so one count.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from infra.redis_client import unavailable_on_connection_errors

# KEYS[1] the client's window; ARGV[1] the window in milliseconds -> {count, ms left}
_HIT = """
local n = redis.call('INCR', KEYS[1])
local left = redis.call('PTTL', KEYS[1])
if left < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  left = tonumber(ARGV[1])
end
return {n, left}
"""


class RedisRateCounter:
    def __init__(self, client: Any, namespace: str = "ten-rate", concurrency: int = 1) -> None:
        self._hit = client.register_script(_HIT)
        self._namespace = namespace
        # one count in flight per process, as Litestar's lock around its store did (an
        # EVALSHA is short: one at a time keeps up), not a connection per request: a Cluster
        # client's pool fails past its size rather than waiting, and a burst of event
        # streams opened at once had taken it past (503)
        self._slots = asyncio.Semaphore(concurrency)

    async def hit(self, key: str, window: float) -> tuple[int, float]:
        """Count one request of `key` in its window of `window` seconds: the count so far
        (this one included) and the seconds until the window resets."""
        async with self._slots:
            with unavailable_on_connection_errors():
                count, left = await self._hit(
                    keys=[f"{self._namespace}:{key}"], args=[max(1, round(window * 1000))]
                )
        return int(count), int(left) / 1000


class MemoryRateCounter:
    """The counts of one process (the embedded default): no await between read and write."""

    def __init__(self, clock: Any = time.monotonic, max_keys: int = 100_000) -> None:
        self._clock = clock
        self._windows: dict[str, tuple[int, float]] = {}
        self._max_keys = max_keys

    async def hit(self, key: str, window: float) -> tuple[int, float]:
        now = self._clock()
        count, ends = self._windows.get(key, (0, 0.0))
        if ends <= now:
            if len(self._windows) >= self._max_keys:  # many clients: drop the ended windows
                self._windows = {k: w for k, w in self._windows.items() if w[1] > now}
            count, ends = 0, now + window
        self._windows[key] = (count + 1, ends)
        return count + 1, ends - now
