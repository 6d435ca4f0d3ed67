"""Shared fixtures: the real Redis (CI starts it; tests never mock it), service processes and a
Redis Cluster."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.servers import RedisClusterNodes, run_server

REDIS_URL = os.environ.get("TEN_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


@pytest.fixture(scope="session")
def redis_url() -> str:
    """The real Redis server. Its absence is a failure, not a skip: CI starts it."""
    import redis

    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
    try:
        client.ping()
    except redis.exceptions.ConnectionError as exc:
        pytest.fail(f"Redis is not reachable at {REDIS_URL} ({exc}); start it (see .ci/run)")
    finally:
        client.close()
    return REDIS_URL


@pytest.fixture(scope="session")
def redis_server_url(redis_url: str) -> Iterator[str]:
    """One service process on the real Redis, shared by the e2e tests of a worker."""
    with run_server({"TEN_REDIS_URL": redis_url}) as base:
        yield base


@pytest.fixture(scope="session")
def embedded_server_url() -> Iterator[str]:
    """One service process on the embedded default (no configuration at all)."""
    with run_server({}) as base:
        yield base


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[RedisClusterNodes]:
    """A 3-node Redis Cluster of this session's worker (its users are in the xdist group
    `redis-cluster`, so one worker starts it)."""
    cluster = RedisClusterNodes()
    try:
        yield cluster
    finally:
        cluster.close()
