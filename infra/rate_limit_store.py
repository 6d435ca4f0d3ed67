"""The rate limit count in Redis, shared by every replica (standalone or Cluster).

Litestar's rate-limit middleware keeps one key per client in a `Store` and only GETs and SETs
that key, so its `RedisStore` works as well on a RedisCluster client (one key, one slot).
Unlike the game store, Litestar's store lets redis-py's errors through, and the middleware
runs before any route: with Redis down every request was a 500. Here they are
StoreUnavailable, the 503 with Retry-After of every other request while Redis is down.
"""

from __future__ import annotations

from datetime import timedelta

from litestar.stores.redis import RedisStore

from infra.redis_store import unavailable_on_connection_errors


class RateLimitStore(RedisStore):
    async def get(self, key: str, renew_for: int | timedelta | None = None) -> bytes | None:
        with unavailable_on_connection_errors():
            return await super().get(key, renew_for)

    async def set(
        self, key: str, value: str | bytes, expires_in: int | timedelta | None = None
    ) -> None:
        with unavailable_on_connection_errors():
            await super().set(key, value, expires_in)
