"""The service on a 3-node Redis Cluster (TEN_REDIS_CLUSTER=true): what the game store shares
with the rest of the service also works across slots and nodes -- the archive outbox (one
hash), the rate limit count, readiness. Whole games, SSE and idempotency on the cluster are
in test_two_replicas.py (its `cluster` runs); the store contract in
test_cluster_store_contract.py."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator

import httpx
import pytest

from tests.servers import RedisClusterNodes, wait_until
from tests.support.api import strict_client
from tests.support.replicas import (
    CLUSTER_GROUP,
    RATE_LIMIT,
    check_whole_log,
    create_game,
    play_game,
)

pytestmark = CLUSTER_GROUP


@pytest.fixture
def clients(cluster_replicas: list[str]) -> Iterator[list[httpx.Client]]:
    opened = [strict_client(base) for base in cluster_replicas]
    try:
        yield opened
    finally:
        for client in opened:
            client.close()


def test_both_replicas_are_ready_on_the_cluster(clients):
    for client in clients:
        assert client.get("/ready").json() == {"status": "ready"}


def test_a_finished_game_goes_through_the_outbox_into_the_archive(clients, redis_cluster):
    players = [{"name": "ann", "player_id": "p-ann"}] + [
        {"name": f"bot{i}", "bot": "random"} for i in range(3)
    ]
    game = create_game(clients[0], players)
    final, replies = play_game(clients, game, random.Random("scale/cluster-archive"))
    log = check_whole_log(clients, game["id"], replies)
    archived: dict = {}

    def in_archive() -> bool:
        response = clients[1].get(f"/v1/archive/games/{game['id']}/events")
        if response.status_code == 200:
            archived.update(response.json())
        return response.status_code == 200

    wait_until(in_archive, 15, "the finished game reaching the archive", step=0.2)
    assert archived["events"] == log
    record = clients[0].get(f"/v1/archive/games/{game['id']}").json()
    assert [r["score"] for r in record["results"]] == [r["score"] for r in final["results"]]
    with redis_cluster.client() as client:
        wait_until(
            lambda: client.hget("{ten:q:archive}:jobs", game["id"]) is None,
            10,
            "the archive queue's job removed",
        )


def test_the_rate_limit_count_is_shared_by_the_replicas_through_the_cluster(clients):
    remaining = []
    for i in range(6):
        response = clients[i % 2].get("/v1/rules")
        assert response.status_code == 200
        assert response.headers["ratelimit-limit"] == str(RATE_LIMIT)
        remaining.append(int(response.headers["ratelimit-remaining"]))
    # one window for both replicas: every request counts once, whichever replica served it
    # (other tests of this worker may count in between: never up, always down)
    assert all(after < before for before, after in itertools.pairwise(remaining))


def test_the_services_keys_on_the_cluster(clients, redis_cluster: RedisClusterNodes):
    game = create_game(clients[0], [{"name": "ann"}, {"name": "bot", "bot": "random"}])
    tag = f"{{game:{game['id']}}}"
    with redis_cluster.client() as client:
        assert client.exists(tag, f"{tag}:log") == 2
        assert client.type(f"{tag}:log") == b"stream"
        rate_keys = list(client.scan_iter(match="ten-rate*", count=1000))
    assert rate_keys, "the rate limit count is not kept in the cluster"
