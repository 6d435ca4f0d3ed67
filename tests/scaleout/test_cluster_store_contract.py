"""The game-store contract suites (tests/integration/test_store_contract.py,
test_lobby_store_contract.py, test_due_index_contract.py and test_log_news_contract.py) on a 3-node Redis Cluster:
every test of those suites that runs on a `backend` or `redis_backend` runs once more,
with `RedisGameStore(cluster=True)` (the `cluster` parameter of those fixtures in
tests/integration/conftest.py). Checked here: that they do. Plus what only a cluster shows: a
game's keys share one slot owned by one node, games spread over the nodes, and a cluster
that cannot be reached is StoreUnavailable (a 503), like a standalone Redis."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest
from redis.crc import key_slot

from infra.redis_store import RedisGameStore
from service.core.ports import StoreUnavailable
from tests.servers import ROOT
from tests.support.records import TTL, advance, new_record
from tests.support.replicas import CLUSTER_GROUP
from tests.support.stores import game_keys

pytestmark = CLUSTER_GROUP

SUITES = [
    "tests/integration/test_store_contract.py",
    "tests/integration/test_lobby_store_contract.py",
    "tests/integration/test_due_index_contract.py",
    "tests/integration/test_log_news_contract.py",
]


def test_the_cluster_runs_the_whole_shared_contract_suite():
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", *SUITES],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert collected.returncode == 0, collected.stdout[-3000:] + collected.stderr[-2000:]
    ids = [line for line in collected.stdout.splitlines() if "::" in line]
    on_cluster = {node.split("::")[1].split("[")[0] for node in ids if "[cluster" in node}
    assert len(on_cluster) >= 20, sorted(on_cluster)
    assert "test_concurrent_saves_at_the_same_version_have_exactly_one_winner" in on_cluster
    assert "test_redis_layout_one_slot_msgpack_state_and_a_stream_log" in on_cluster
    assert "test_saves_move_a_game_between_listings_as_its_indexes_change" in on_cluster
    assert "test_concurrent_claims_of_a_due_entry_have_exactly_one_winner" in on_cluster
    assert "test_redis_layout_three_keys_in_one_slot" in on_cluster
    standalone = {node.split("::")[1].split("[")[0] for node in ids if "[redis" in node}
    assert "test_redis_store_on_a_closed_port_raises_store_unavailable" in standalone
    assert "test_redis_store_on_a_closed_port_raises_store_unavailable" not in on_cluster
    assert "test_redis_news_on_a_closed_port_raises_store_unavailable" not in on_cluster


def test_games_spread_over_the_nodes_each_game_on_one_node(backend):
    """A game's three keys live on the node that owns its hash tag's slot; different games
    land on different nodes (ids are random: up to 60 tries to see every node used)."""
    client = backend.client
    owners: dict[str, str] = {}
    for _ in range(60):
        game_id = backend.new_id()
        record, events = new_record(game_id)

        async def body(store, record=record, events=events):
            await store.create(record, events, TTL)

        backend.run(body)
        slots = {key_slot(key.encode()) for key in game_keys(game_id)[:2]}
        assert len(slots) == 1
        node = client.get_node_from_key(game_keys(game_id)[0])
        assert node.redis_connection.exists(*game_keys(game_id)[:2]) == 2  # no MOVED: all here
        owners[game_id] = node.name
        if len(set(owners.values())) == len(backend.cluster.nodes):
            break
    assert len(set(owners.values())) == len(backend.cluster.nodes), owners


def test_an_unreachable_cluster_raises_store_unavailable(backend):
    game_id = backend.new_id()
    r0, e0 = new_record(game_id)
    r1, e1 = advance(r0, 1)

    async def body():
        store = RedisGameStore("redis://127.0.0.1:1", cluster=True)
        calls = {
            "ping": store.ping,
            "load": lambda: store.load(game_id),
            "create": lambda: store.create(r0, e0, TTL),
            "save": lambda: store.save(r1, 0, e1, TTL),
            "events": lambda: store.events(game_id, 0, 10),
            "events_of": lambda: store.events_of({game_id: 0}, 10),
            "idempotent_response": lambda: store.idempotent_response(game_id, "key-1"),
        }
        try:
            for call in calls.values():
                with pytest.raises(StoreUnavailable):
                    await call()
        finally:
            await store.close()

    asyncio.run(body())
