"""Two service processes on different ports sharing one Redis: any replica serves any game.
Every test runs twice: on the standalone test Redis and on the 3-node Redis Cluster.

A game is played with its requests alternating between the replicas (a read on one, the
action with If-Match on the other); an Idempotency-Key retried on the other replica replays
the first answer; an event stream opened on one replica follows the actions sent to the
other, to the end of the game.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator

import httpx
import pytest

from tests.support.api import bearer, check_problem, public_part, strict_client
from tests.support.replicas import (
    CLUSTER_GROUP,
    SSE_IDLE,
    check_whole_log,
    create_game,
    play_game,
    replica_env,
    start_replicas,
)
from tests.support.streams import AsyncTable, http_client, open_stream

DECK = ["R1", "$2", "W1", "B3", "R2", "$1", "G5", "O4", "B#", "R6", "G1", "$3", "O2", "B4"]


@pytest.fixture(scope="module")
def standalone_replicas(
    redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[str]]:
    archive = tmp_path_factory.mktemp("two-replicas") / "archive.sqlite3"
    servers = start_replicas(replica_env(redis_url, str(archive), TEN_SSE_KEEPALIVE=SSE_IDLE))
    try:
        yield [server.base for server in servers]
    finally:
        for server in servers:
            server.stop()


@pytest.fixture(
    params=[
        pytest.param("standalone", marks=pytest.mark.xdist_group("two-replicas")),
        pytest.param("cluster", marks=CLUSTER_GROUP),  # on the worker that runs the cluster
    ]
)
def replicas(request: pytest.FixtureRequest) -> list[str]:
    """The base URLs of two replicas: on the standalone Redis, or on the Redis Cluster."""
    return request.getfixturevalue(f"{request.param}_replicas")


@pytest.fixture
def clients(replicas: list[str]) -> Iterator[list[httpx.Client]]:
    opened = [strict_client(base) for base in replicas]
    try:
        yield opened
    finally:
        for client in opened:
            client.close()


def test_a_whole_game_alternating_between_two_replicas(clients):
    players = [{"name": "ann"}, {"name": "bob"}, {"name": "cy", "bot": "random"}]
    game = create_game(clients[0], players)
    final, replies = play_game(clients, game, random.Random("scale/alternate"))
    assert final["status"] == "finished"
    assert len(replies) > 20
    log = check_whole_log(clients, game["id"], replies)
    assert log[-1]["type"] == "game_finished"
    for client in clients:
        served = client.get(f"/v1/games/{game['id']}")
        assert served.headers["etag"] == f'"{final["version"]}"'
        assert public_part(served.json()) == public_part(final)


def test_a_stale_if_match_is_refused_by_the_other_replica(clients):
    game = create_game(clients[0], [{"name": "ann"}, {"name": "bob"}], deck=DECK, starting_seat=0)
    token = bearer(game["seats"][0]["token"])
    path = f"/v1/games/{game['id']}/actions"
    first = clients[0].post(path, json={"type": "draw"}, headers={**token, "If-Match": '"0"'})
    assert first.status_code == 200, first.text
    stale = clients[1].post(path, json={"type": "draw"}, headers={**token, "If-Match": '"0"'})
    check_problem(stale, 412, "version_mismatch")


def test_an_idempotent_retry_on_the_other_replica_replays_the_first_answer(clients):
    game = create_game(clients[0], [{"name": "ann"}, {"name": "bob"}], deck=DECK, starting_seat=0)
    headers = {**bearer(game["seats"][0]["token"]), "Idempotency-Key": "draw-1"}
    path = f"/v1/games/{game['id']}/actions"
    first = clients[0].post(path, json={"type": "draw"}, headers=headers)
    assert first.status_code == 200, first.text
    assert "idempotent-replayed" not in first.headers
    again = clients[1].post(path, json={"type": "draw"}, headers=headers)
    assert again.status_code == 200, again.text
    assert again.headers["idempotent-replayed"] == "true"
    assert again.content == first.content
    log = clients[1].get(f"{path[: -len('/actions')]}/events").json()["events"]
    assert [e["seq"] for e in log if e["version"] == 1] == [
        e["seq"] for e in first.json()["events"]
    ]
    assert clients[1].get(f"/v1/games/{game['id']}").json()["version"] == 1


def test_an_event_stream_on_one_replica_follows_actions_sent_to_the_other(replicas):
    async def main() -> None:
        rng = random.Random("scale/sse")
        async with http_client(replicas[0]) as actor, http_client(replicas[1]) as reader:
            table = await AsyncTable.create(actor, 2, DECK)
            async with open_stream(reader, table.id) as stream:
                streamed = await stream.events(2)
                assert [e["type"] for e in streamed] == ["game_started", "turn_started"]
                while not table.finished:
                    sent = await table.step(rng)  # on the actor's replica
                    assert await stream.events(len(sent)) == sent
                assert await stream.rest() == []  # the stream ends after game_finished
                assert stream.ended
            assert sent[-1]["type"] == "game_finished"
            assert streamed == (await table.log())[:2]

    asyncio.run(main())


def test_an_idle_stream_outlives_the_redis_socket_timeout_and_follows_the_other_replica(replicas):
    """A stream waits on Redis (XREAD BLOCK) for TEN_SSE_KEEPALIVE seconds between keep-alive
    comments; a wait longer than redis-py's 5 s socket timeout used to break the stream."""

    async def main() -> None:
        async with (
            http_client(replicas[0]) as actor,
            httpx.AsyncClient(base_url=replicas[1], timeout=30) as reader,  # idle reads
        ):
            table = await AsyncTable.create(actor, 2, DECK)
            async with open_stream(reader, table.id) as stream:
                assert len(await stream.events(2)) == 2
                idle = await stream.block(timeout=float(SSE_IDLE) + 10)
                assert idle is not None, "the stream ended while idle"
                assert idle.comments == ["keep-alive"], idle.fields
                sent = await table.step(random.Random("scale/idle"))
                assert await stream.events(len(sent)) == sent

    asyncio.run(main())
