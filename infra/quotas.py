"""The quotas' held items (`service.core.quotas.QuotaStore`): in memory (the embedded default)
and on Redis, shared by every replica: `<prefix>:quota:{<kind>:<owner>}`, a sorted set of
the items held, scored by the time each was held (one key per owner: a Cluster keeps it on
one node)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

# KEYS[1] the owner's set; ARGV the item, its score, the limit, the key's ttl. false: held
# (or it was); else the lowest score held, the set holding `limit` items or more.
_HOLD = """
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return false end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2]
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return false
"""

# Drop entries (ARGV: item, score, item, score, ...) still at the score they were read at
# (an item held again meanwhile is not dropped with its old entry).
_DROP = """
for i = 1, #ARGV, 2 do
  local score = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if score and tonumber(score) == tonumber(ARGV[i + 1]) then
    redis.call('ZREM', KEYS[1], ARGV[i])
  end
end
return 1
"""


class MemoryQuotas:
    """One process's quotas (`ttl` is not needed: they die with the process)."""

    def __init__(self) -> None:
        self._held: dict[str, dict[str, float]] = {}
        self._lock = threading.Lock()

    async def hold(self, key: str, item: str, score: float, limit: int, ttl: int) -> float | None:
        with self._lock:
            held = self._held.setdefault(key, {})
            if item in held:
                return None
            if len(held) >= limit:
                return min(held.values())
            held[item] = score
            return None

    async def held(self, key: str) -> list[tuple[str, float]]:
        with self._lock:
            return sorted(self._held.get(key, {}).items(), key=lambda entry: (entry[1], entry[0]))

    async def drop(self, key: str, entries: Sequence[tuple[str, float]]) -> None:
        with self._lock:
            held = self._held.get(key, {})
            for item, score in entries:
                if held.get(item) == score:
                    del held[item]
            if not held:
                self._held.pop(key, None)


class RedisQuotas:
    """On a Redis client (connection errors are its caller's to map: `RedisGameStore`)."""

    def __init__(self, client: Any, *, prefix: str = "ten") -> None:
        self.client = client
        self.prefix = prefix
        self._hold = client.register_script(_HOLD)
        self._drop = client.register_script(_DROP)

    def _key(self, key: str) -> str:
        return f"{self.prefix}:quota:{{{key}}}"

    async def hold(self, key: str, item: str, score: float, limit: int, ttl: int) -> float | None:
        oldest = await self._hold(keys=[self._key(key)], args=[item, repr(score), limit, ttl])
        return None if oldest is None else float(oldest)

    async def held(self, key: str) -> list[tuple[str, float]]:
        found = await self.client.zrange(self._key(key), 0, -1, withscores=True)
        return [(item.decode(), float(score)) for item, score in found]

    async def drop(self, key: str, entries: Sequence[tuple[str, float]]) -> None:
        args: list[object] = []
        for item, score in entries:
            args += (item, repr(score))
        await self._drop(keys=[self._key(key)], args=args)
