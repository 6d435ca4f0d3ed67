"""The store contract suites' backends: one per adapter (`MemoryGameStore`, `RedisGameStore` on
a standalone Redis and on a Redis Cluster), built inside the event loop that uses them;
`game_keys` is the documented Redis layout of a game (not taken from the adapter)."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

import redis

from infra.memory_store import MemoryGameStore
from infra.redis_store import RedisGameStore
from tests.servers import RedisClusterNodes


def game_keys(game_id: str) -> tuple[str, str, str]:
    """The Redis keys of a game, as the layout documents them (not taken from the adapter)."""
    tag = f"{{game:{game_id}}}"
    return tag, f"{tag}:log", f"{tag}:idem"


class Backend:
    def __init__(self, kind: str, url: str | None) -> None:
        self.kind = kind
        self.url = url
        self.ids: list[str] = []
        self.other_keys: list[str] = []  # more Redis keys to delete after the test
        self._client: redis.Redis | None = None

    @staticmethod
    def keys(game_id: str) -> tuple[str, str, str]:
        return game_keys(game_id)

    def new_id(self) -> str:
        game_id = secrets.token_hex(10)
        self.ids.append(game_id)
        return game_id

    def store(self, **kwargs: Any) -> Any:
        if self.kind == "memory":
            return MemoryGameStore(**kwargs)
        assert self.url is not None
        return RedisGameStore(self.url, **kwargs)

    def run(self, body: Callable[[Any], Awaitable[None]], **kwargs: Any) -> None:
        async def main() -> None:
            store = self.store(**kwargs)
            try:
                await store.open()
                await body(store)
            finally:
                await store.close()

        asyncio.run(main())

    @property
    def client(self) -> redis.Redis:
        """A plain synchronous client on the same Redis, to look at the raw keys."""
        assert self.url is not None, "the embedded store has no Redis"
        if self._client is None:
            self._client = redis.Redis.from_url(self.url)
        return self._client

    def cleanup(self) -> None:
        keys = [key for game_id in self.ids for key in game_keys(game_id)] + self.other_keys
        if self.url is not None and keys:
            self.client.delete(*keys)
        if self._client is not None:
            self._client.close()


class ClusterBackend(Backend):
    """The contract suite's Redis backend, on the cluster: `RedisGameStore(cluster=True)` and a
    RedisCluster client to look at the raw keys (multi-key calls are split by slot)."""

    def __init__(self, cluster: RedisClusterNodes) -> None:
        super().__init__("cluster", cluster.url)
        self.cluster = cluster

    def store(self, **kwargs: Any) -> Any:
        return RedisGameStore(self.cluster.url, cluster=True, **kwargs)

    @property
    def client(self) -> redis.RedisCluster:  # type: ignore[override]
        if self._client is None:
            self._client = self.cluster.client()
        return self._client


def run_on_a_client(
    backend: Backend,
    memory: Callable[[], Any],
    on_redis: Callable[[Any, str], Any],
    body: Callable[[Any], Awaitable[None]],
) -> None:
    """`body(store)` in a loop of its own: the store `memory()` for the embedded backend, else
    `on_redis(client, prefix)` on a client of the backend's Redis (standalone or Cluster) and
    a key prefix of the test's own, whose keys are deleted afterwards."""

    async def main() -> None:
        if backend.kind == "memory":
            await body(memory())
            return
        from infra.redis_client import connect

        client = connect(backend.url, cluster=backend.kind == "cluster")
        if backend.kind == "cluster":
            await client.initialize()  # as RedisGameStore.open does, before concurrent calls
        prefix = f"ten-test-{secrets.token_hex(6)}"
        try:
            await body(on_redis(client, prefix))
        finally:
            for key in await client.keys(f"{prefix}:*"):
                await client.delete(key)
            await client.aclose()

    asyncio.run(main())
