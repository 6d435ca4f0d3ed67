"""Playing over HTTP across service replicas (the scale-out and fault tests share these)."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Any

import httpx
import pytest

from tests.servers import ServiceProcess
from tests.support.api import bearer, check_log, public_part, rebuilt

# the scale-out tier's settings: every test on the cluster is in one xdist group, so one
# worker starts it
CLUSTER_GROUP = pytest.mark.xdist_group("redis-cluster")
RATE_LIMIT = 100_000  # per client and minute: on, but never reached by the tests
SSE_IDLE = "6"  # keep-alive seconds: longer than redis-py's 5 s default socket timeout
MAX_ACTIONS = 2000  # far more than any game takes: a game that does not end fails


def replica_env(redis_url: str, archive: str, **extra: str) -> dict[str, str]:
    """Settings of a replica: the shared Redis, a shared SQL archive migrated at start."""
    return {
        "TEN_REDIS_URL": redis_url,
        "TEN_DATABASE_URL": f"sqlite+aiosqlite:///{archive}",
        "TEN_MIGRATE_ON_START": "true",
        "TEN_ARCHIVE_INTERVAL": "0.2",
        **extra,
    }


def start_replicas(env: dict[str, str], count: int = 2) -> list[ServiceProcess]:
    """`count` service processes on the same settings, started one after the other (the first
    migrates the archive before the second starts)."""
    started: list[ServiceProcess] = []
    try:
        for _ in range(count):
            started.append(ServiceProcess(env))
    except BaseException:
        for server in started:
            server.stop()
        raise
    return started


def alternating(clients: Sequence[httpx.Client]) -> Iterator[httpx.Client]:
    while True:
        yield from clients


def create_game(client: httpx.Client, players: list[dict[str, Any]], **extra: Any) -> dict:
    response = client.post("/v1/games", json={"players": players, **extra})
    assert response.status_code == 201, response.text
    return response.json()


def check_whole_log(
    clients: Sequence[httpx.Client], game_id: str, acknowledged: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Every replica serves the same log: seq 1..n, versions contiguous, the creation's
    events then every acknowledged action's events in order, each exactly once, and it
    rebuilds the state every replica serves. Returns the log."""
    logs = []
    for client in clients:
        response = client.get(f"/v1/games/{game_id}/events", params={"limit": 1000})
        assert response.status_code == 200, response.text
        page = response.json()
        assert not page["more"]
        logs.append(page["events"])
    log = logs[0]
    assert all(other == log for other in logs[1:])
    check_log(log)
    acked = [event for reply in acknowledged for event in reply["events"]]
    assert acked == log[len(log) - len(acked) :], "acknowledged events missing or repeated"
    states = [client.get(f"/v1/games/{game_id}").json() for client in clients]
    assert all(public_part(state) == public_part(states[0]) for state in states)
    assert rebuilt(log) == public_part(states[0])
    return log


def play_game(
    clients: Sequence[httpx.Client], game: dict[str, Any], rng: random.Random
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Play a game to its end, each request to the next replica in turn: read the seat's legal
    actions on one replica, act with If-Match on the next, check a third read agrees.
    Returns the final state and every action reply."""
    tokens = {seat["seat"]: seat["token"] for seat in game["seats"]}
    turn = alternating(clients)
    body, replies = game, []
    for _ in range(MAX_ACTIONS):
        if body["status"] == "finished":
            return body, replies
        seat = body["to_act"]
        read = next(turn).get(f"/v1/games/{game['id']}", headers=bearer(tokens[seat]))
        assert read.status_code == 200, read.text
        assert read.headers["etag"] == f'"{body["version"]}"'  # the other replica's write
        action = rng.choice(read.json()["legal_actions"])
        acted = next(turn).post(
            f"/v1/games/{game['id']}/actions",
            json=action,
            headers={**bearer(tokens[seat]), "If-Match": read.headers["etag"]},
        )
        assert acted.status_code == 200, acted.text
        body = acted.json()
        replies.append(body)
    raise AssertionError("the game did not end")
