"""Hundreds of event streams on service processes (issue 15), lean versions of
bench/bench_watchers.py: every stream gets every event of its game in order, once, while the
process's Redis connections stay a handful (one Pub/Sub connection, one per Cluster node,
whatever the number of streams); past the caps a stream is refused before it starts with a
problem and Retry-After, and nothing is logged as a traceback."""

from __future__ import annotations

import asyncio
import inspect
import random
from pathlib import Path

from infra.redis_batch import Batcher
from tests.servers import RedisClusterNodes, RedisServer, ServiceProcess, redis_connections
from tests.support.replicas import CLUSTER_GROUP, replica_env
from tests.support.streams import DECK, AsyncTable, Stream, open_streams, pool

# the connections the store's batcher sends on, at most (its default, which the store keeps)
BATCHER_CONNECTIONS = inspect.signature(Batcher).parameters["most_in_flight"].default


async def follow_play(
    bases: list[str], streams_count: int, games: int, moves: int, nodes: list[RedisServer]
) -> tuple[int, int]:
    """Create `games` games, open the streams, play `moves` actions per game (requests
    alternating over `bases`), check what every stream got against the log; the Redis
    connections (all, Pub/Sub) while the streams are open."""
    clients = [pool(base) for base in bases]
    try:
        tables = [await AsyncTable.create(clients[0], 2, DECK) for _ in range(games)]
        opened = await open_streams(clients, [t.id for t in tables], streams_count)
        rng = random.Random("scaleout/watchers")
        for step in range(moves):
            for table in tables:
                table.http = clients[step % len(clients)]
                await table.step(rng)

        async def check(game_id: str, stream: Stream, log: list) -> None:
            assert await stream.events(len(log)) == log, game_id

        logs = {t.id: await t.log() for t in tables}
        await asyncio.gather(*(check(g, s, logs[g]) for g, _, s in opened))
        return redis_connections(nodes)
    finally:
        for client in clients:
            await client.aclose()


def service_on(redis_url: str, tmp_path: Path, **extra: str) -> ServiceProcess:
    env = replica_env(redis_url, str(tmp_path / "archive.sqlite3"), **extra)
    return ServiceProcess(env, stdout=tmp_path / "service.log")


# each of the process's two Redis pools opens at most this many connections
POOL_CAP = 3


def test_three_hundred_streams_on_one_process_share_one_pubsub_connection(tmp_path):
    """The process's connections are bounded by its pools' cap, whatever its streams: with
    each pool capped at POOL_CAP, 300 streams still get every event (a stream holding a
    pooled connection would starve the rest), and Redis sees no more clients than the two
    pools, the store's batcher and one Pub/Sub connection. The bound is the configuration's,
    not a count of how many connections the workers' claims happened to overlap on."""
    redis = RedisServer()
    try:
        cap = str(POOL_CAP)
        service = service_on(
            redis.url, tmp_path, TEN_SSE_MAX_PER_CLIENT="0", TEN_REDIS_MAX_CONNECTIONS=cap
        )
        try:
            total, pubsub = asyncio.run(follow_play([service.base], 300, 6, 4, [redis]))
            assert pubsub == 1
            # one connection per stream would be 300
            bound = 2 * POOL_CAP + BATCHER_CONNECTIONS + pubsub
            assert total <= bound, (total, bound)
            assert "Traceback" not in service.log()
        finally:
            service.stop()
    finally:
        redis.close()


def test_streams_past_the_caps_are_refused_before_they_start(tmp_path):
    async def body(base: str, cap: int, status: int, code: str) -> None:
        async with pool(base) as http:
            table = await AsyncTable.create(http, 1, DECK)
            opened = await open_streams([http], [table.id], cap)
            refused = await http.get(f"/v1/games/{table.id}/events/stream")
            assert refused.status_code == status
            assert refused.headers["content-type"].startswith("application/problem+json")
            assert refused.headers["retry-after"] == "5"
            assert refused.json()["code"] == code
            await opened[0][1].aclose()  # a stream ends: its slot is free again
            for _ in range(50):
                await asyncio.sleep(0.1)
                response = await http.send(
                    http.build_request("GET", f"/v1/games/{table.id}/events/stream"), stream=True
                )
                await response.aclose()
                if response.status_code == 200:
                    break
            assert response.status_code == 200
            for _, response, _ in opened[1:]:
                await response.aclose()

    cases = [
        ({"TEN_SSE_MAX_STREAMS": "20", "TEN_SSE_MAX_PER_CLIENT": "0"}, 20, 503, "too_many_streams"),
        ({"TEN_SSE_MAX_PER_CLIENT": "10"}, 10, 429, "too_many_streams_from_client"),
    ]
    for env, cap, status, code in cases:
        service = ServiceProcess(env, stdout=tmp_path / f"{code}.log", cwd=tmp_path)
        try:
            asyncio.run(body(service.base, cap, status, code))
            assert "Traceback" not in service.log()
        finally:
            service.stop()


@CLUSTER_GROUP
def test_streams_on_two_replicas_of_a_cluster_follow_actions_sent_to_either(
    redis_cluster: RedisClusterNodes, cluster_replicas: list[str]
):
    idle, _ = redis_connections(redis_cluster.nodes)
    nodes = redis_cluster.nodes
    total, pubsub = asyncio.run(follow_play(cluster_replicas, 180, 6, 4, nodes))  # 90 a replica
    assert pubsub <= 2 * len(redis_cluster.nodes)  # one per replica and node at most
    assert total - idle <= 30, (idle, total)
