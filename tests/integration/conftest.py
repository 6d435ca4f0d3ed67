"""Fixtures of the store contract tests: one `backend` per adapter (embedded and real Redis).

A test writes `backend.run(body)` with `async def body(store)`: the store is built inside the
event loop that uses it (a Redis client belongs to one loop) and closed at the end. Game ids
come from `backend.new_id()` and their Redis keys are deleted after the test.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
import redis

from infra.memory_store import MemoryGameStore
from infra.redis_store import RedisGameStore


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


def _backend(kind: str, request: pytest.FixtureRequest) -> Iterator[Backend]:
    url = request.getfixturevalue("redis_url") if kind == "redis" else None
    backend = Backend(kind, url)
    try:
        yield backend
    finally:
        backend.cleanup()


@pytest.fixture(params=["memory", "redis"])
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """Each adapter in turn: the contract tests run against both."""
    yield from _backend(request.param, request)


@pytest.fixture
def redis_backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """The Redis adapter alone, for its layout and expiry."""
    yield from _backend("redis", request)


@pytest.fixture
def memory_backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """The embedded adapter alone, for its injected clock and threads."""
    yield from _backend("memory", request)
