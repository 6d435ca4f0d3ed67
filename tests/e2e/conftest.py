"""Fixtures of the end-to-end tests: real service processes over real HTTP.

`server` is parametrized over the two shared processes of `tests/conftest.py`: the one on
the real Redis (`redis_server_url`) and the one on the embedded default with no
configuration at all (`embedded_server_url`). `client` is a session-long HTTP client on it
that fails the test at once on any 5xx answer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

import httpx
import pytest
import redis

from tests.servers import run_server
from tests.support.api import strict_client


@pytest.fixture(scope="session")
def redis_base(redis_server_url: str) -> str:
    """The shared service process on the real Redis."""
    return redis_server_url


@pytest.fixture(scope="session")
def embedded_base(embedded_server_url: str) -> str:
    """The shared service process on the embedded in-memory store (no TEN_* at all)."""
    return embedded_server_url


@pytest.fixture(params=["redis", "embedded"])
def server_kind(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def server(request: pytest.FixtureRequest, server_kind: str) -> str:
    """The base URL of a service process, once on Redis and once on the embedded store."""
    return request.getfixturevalue(f"{server_kind}_base")


@pytest.fixture(scope="session")
def redis_http(redis_base: str) -> Iterator[httpx.Client]:
    with strict_client(redis_base) as http:
        yield http


@pytest.fixture(scope="session")
def embedded_http(embedded_base: str) -> Iterator[httpx.Client]:
    with strict_client(embedded_base) as http:
        yield http


@pytest.fixture
def client(request: pytest.FixtureRequest, server_kind: str) -> httpx.Client:
    """An HTTP client on `server` that fails the test on any 5xx answer."""
    return request.getfixturevalue(f"{server_kind}_http")


@pytest.fixture
def redis_client(redis_base: str, redis_url: str) -> Iterator[redis.Redis]:
    """A direct connection to the Redis the `redis_base` process uses."""
    client = redis.Redis.from_url(redis_url)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(scope="session")
def start_server() -> Callable[..., AbstractContextManager[str]]:
    """`run_server` with keyword settings: `with start_server(TEN_X="1") as base: ...`."""

    def start(**env: str) -> AbstractContextManager[str]:
        return run_server(env)

    return start
