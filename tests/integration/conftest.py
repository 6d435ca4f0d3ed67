"""Fixtures of the store contract tests: one `backend` per adapter (embedded, real Redis, and
real Redis on the 3-node Redis Cluster of tests/conftest.py, in its xdist group).

A test writes `backend.run(body)` with `async def body(store)`: the store is built inside the
event loop that uses it (a Redis client belongs to one loop) and closed at the end. Game ids
come from `backend.new_id()` and their Redis keys are deleted after the test.

`receiver`: the platform's webhook endpoint on loopback (`tests.support.webhooks.Receiver`),
for the webhook tests and those of the capabilities whose games send them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.replicas import CLUSTER_GROUP
from tests.support.stores import Backend, ClusterBackend
from tests.support.webhooks import Receiver

# the suites that run on the cluster too (the contract of every store adapter), and the tests
# of theirs a cluster cannot run: a standalone Redis on a closed port (the cluster's own is in
# tests/scaleout/test_cluster_store_contract.py)
CLUSTER_SUITES = frozenset(
    {
        "test_store_contract.py",
        "test_lobby_store_contract.py",
        "test_due_index_contract.py",
        "test_log_news_contract.py",
        "test_quota_contract.py",
        "test_ticket_store_contract.py",
        "test_bulk_store_contract.py",
    }
)
STANDALONE_ONLY = frozenset(
    {
        "test_redis_store_on_a_closed_port_raises_store_unavailable",
        "test_redis_news_on_a_closed_port_raises_store_unavailable",
    }
)
CLUSTER = pytest.param("cluster", marks=CLUSTER_GROUP)


def on_cluster_too(item: pytest.Item) -> bool:
    """Whether the cluster variant of a test of this directory runs."""
    return item.path.name in CLUSTER_SUITES and item.originalname not in STANDALONE_ONLY


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Only the contract suites run on the cluster (`on_cluster_too`): the cluster variants
    of every other test of this directory are deselected."""
    here = Path(__file__).parent
    kept, dropped = [], []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        cluster = item.path.parent == here and "cluster" in (
            params.get("backend"),
            params.get("redis_backend"),
        )
        (dropped if cluster and not on_cluster_too(item) else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def _backend(kind: str, request: pytest.FixtureRequest) -> Iterator[Backend]:
    if kind == "cluster":
        backend: Backend = ClusterBackend(request.getfixturevalue("redis_cluster"))
    else:
        url = request.getfixturevalue("redis_url") if kind == "redis" else None
        backend = Backend(kind, url)
    try:
        yield backend
    finally:
        backend.cleanup()


@pytest.fixture(params=["memory", "redis", CLUSTER])
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """Each adapter in turn: the contract tests run against all three."""
    yield from _backend(request.param, request)


@pytest.fixture(params=["redis", CLUSTER])
def redis_backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """The Redis adapter alone (standalone and cluster), for its layout and expiry."""
    yield from _backend(request.param, request)


@pytest.fixture
def memory_backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """The embedded adapter alone, for its injected clock and threads."""
    yield from _backend("memory", request)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A webhook endpoint on loopback, listening (see the module docstring)."""
    found = Receiver().start()
    try:
        yield found
    finally:
        found.stop()
