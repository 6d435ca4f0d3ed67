"""Fixtures of the scale-out tests: a 3-node Redis Cluster started once per test session
(every test using it is in the xdist group `redis-cluster`, so one pytest-xdist worker
starts it), the contract suite's `backend` on that cluster, and service processes on it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis

from infra.redis_store import RedisGameStore
from tests.integration.conftest import Backend
from tests.scaleout.helpers import replica_env, start_replicas
from tests.servers import RedisClusterNodes

CLUSTER_GROUP = pytest.mark.xdist_group("redis-cluster")
RATE_LIMIT = 100_000  # per client and minute: on, but never reached by the tests
SSE_IDLE = "6"  # keep-alive seconds: longer than redis-py's 5 s default socket timeout


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[RedisClusterNodes]:
    cluster = RedisClusterNodes()
    try:
        yield cluster
    finally:
        cluster.close()


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
