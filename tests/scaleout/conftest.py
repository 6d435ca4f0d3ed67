"""Fixtures of the scale-out tests: the 3-node Redis Cluster of tests/conftest.py (every test
using it is in the xdist group `redis-cluster`, so one pytest-xdist worker starts it), a
`backend` on that cluster, and service processes on it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.servers import RedisClusterNodes
from tests.support.replicas import RATE_LIMIT, SSE_IDLE, replica_env, start_replicas
from tests.support.stores import Backend, ClusterBackend


@pytest.fixture
def backend(redis_cluster: RedisClusterNodes) -> Iterator[Backend]:
    """Overrides the contract suite's `backend` (memory, Redis): here, the cluster only."""
    cluster_backend = ClusterBackend(redis_cluster)
    try:
        yield cluster_backend
    finally:
        cluster_backend.cleanup()


@pytest.fixture
def redis_backend(backend: Backend) -> Backend:
    """The contract suite's Redis-only tests (layout, expiry), on the cluster."""
    return backend


@pytest.fixture(scope="session")
def cluster_replicas(
    redis_cluster: RedisClusterNodes, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[str]]:
    """Two service processes on the cluster (TEN_REDIS_CLUSTER=true, the URL naming one node),
    with a rate limit and their own SQL archive (the cluster's outbox is theirs alone)."""
    archive = tmp_path_factory.mktemp("cluster-archive") / "archive.sqlite3"
    env = replica_env(
        redis_cluster.url,
        str(archive),
        TEN_REDIS_CLUSTER="true",
        TEN_RATE_LIMIT=f"{RATE_LIMIT}/minute",
        TEN_SSE_KEEPALIVE=SSE_IDLE,
    )
    servers = start_replicas(env)
    try:
        yield [server.base for server in servers]
    finally:
        for server in servers:
            server.stop()
