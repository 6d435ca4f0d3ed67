"""Deadlines fire once, anywhere: real service processes on a private Redis (AOF, fsync on
every write), games with short clocks.

Each game here is one human who never answers and one bot, with `takeover_after` 1: its
first deadline times the human out, the bot takes the seat over and the two bots play the
game to its end at once. So every game has exactly one deadline, and its event log shows
how often it fired (`timed_out` events) and the finished game's clock shows when (`since`:
the moment the game stopped waiting, which is when the timeout was applied).
"""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from tests.servers import RedisServer, ServiceProcess, wait_until
from tests.support.api import strict_client
from tests.support.replicas import replica_env, start_replicas

CLAIMS = "{ten:due}:claims"  # the due index's claims (infra/redis_layout.py)


def _clock(seconds: float) -> dict[str, Any]:
    return {"type": "bank", "initial_seconds": seconds, "increment_seconds": 0, "takeover_after": 1}


def _create(client: httpx.Client, seconds: float) -> str:
    created = client.post(
        "/v1/games",
        json={
            "players": [{"name": "away"}, {"name": "bot", "bot": "random"}],
            "starting_seat": 0,  # the human decides first: the game waits on them at once
            "clock": _clock(seconds),
        },
    )
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["clock"]["seat"] == 0
    return body["id"]


def _finished(client: httpx.Client, game_ids: list[str]) -> bool:
    return all(client.get(f"/v1/games/{g}").json()["status"] == "finished" for g in game_ids)


def _check_fired_once_never_early(client: httpx.Client, game_ids: list[str]) -> list[float]:
    """Every game timed out exactly once, not before its deadline; the lateness of each."""
    late = []
    for game_id in game_ids:
        events = client.get(f"/v1/games/{game_id}/events", params={"limit": 1000}).json()
        timeouts = [e for e in events["events"] if e["type"] == "timed_out"]
        assert len(timeouts) == 1, (game_id, timeouts)
        game = client.get(f"/v1/games/{game_id}").json()
        assert game["status"] == "finished"
        applied = game["clock"]["since"]  # when the timeout ended the wait (and the game)
        assert applied >= timeouts[0]["deadline"], (game_id, applied, timeouts[0])
        late.append(applied - timeouts[0]["deadline"])
    return late


@pytest.fixture
def aof_redis():
    server = RedisServer("--appendonly", "yes", "--appendfsync", "always")
    try:
        yield server
    finally:
        server.close()


def _stop_all(servers: list[ServiceProcess]) -> None:
    for server in servers:
        server.stop()


def test_two_replicas_fire_each_of_200_deadlines_exactly_once(aof_redis, tmp_path) -> None:
    env = replica_env(aof_redis.url, str(tmp_path / "archive.sqlite3"), TEN_DEADLINE_POLL="0.05")
    replicas = start_replicas(env)
    clients = [strict_client(r.base) for r in replicas]
    try:
        # deadlines spread over a second and a half, games made through both replicas
        game_ids = [_create(clients[i % 2], 1.0 + (i % 16) * 0.1) for i in range(200)]
        wait_until(lambda: _finished(clients[0], game_ids), 60, "200 games timed out", step=0.5)
        late = sorted(_check_fired_once_never_early(clients[1], game_ids))
        print(f"200 deadlines, 2 replicas: lateness p50 {late[100] * 1000:.0f} ms, "
              f"max {late[-1] * 1000:.0f} ms")  # fmt: skip
        # both replicas' pollers worked (each reports what it fired in its metrics)
        fired = [_timeouts_fired(c) for c in clients]
        assert sum(fired) == 200, fired
    finally:
        for client in clients:
            client.close()
        _stop_all(replicas)


def _timeouts_fired(client: httpx.Client) -> float:
    text = client.get("/metrics").text
    for line in text.splitlines():
        if line.startswith('ten_deadlines_total{outcome="timeout"}'):
            return float(line.split()[-1])
    return 0.0


def test_a_replica_killed_holding_claims_leaves_them_to_the_other(aof_redis, tmp_path) -> None:
    env = replica_env(
        aof_redis.url,
        str(tmp_path / "archive.sqlite3"),
        TEN_DEADLINE_POLL="0.05",
        TEN_DEADLINE_LEASE="2",
    )
    (victim,) = start_replicas(env, count=1)
    raw = aof_redis.client()
    survivor = None
    try:
        with strict_client(victim.base) as client:
            game_ids = [_create(client, 1.5) for _ in range(150)]
        # SIGKILL the victim the moment it holds claims (it is firing the due games)
        stop = time.monotonic() + 30
        while not raw.zcard(CLAIMS):
            assert time.monotonic() < stop, "the victim never claimed a deadline"
        victim.kill()
        now = time.time()
        held = [m for m, lease in raw.zrange(CLAIMS, 0, -1, withscores=True) if lease > now]
        assert held, "the victim held no live claim when it died"
        survivor = ServiceProcess(env)
        with strict_client(survivor.base) as client:
            wait_until(lambda: _finished(client, game_ids), 60, "every game timed out", step=0.5)
            _check_fired_once_never_early(client, game_ids)
            # the claims the victim died holding were fired by the survivor
            for member in held:
                game = client.get(f"/v1/games/{member.decode()}").json()
                assert game["status"] == "finished"
        assert raw.zcard(CLAIMS) == 0
    finally:
        raw.close()
        _stop_all([s for s in (victim, survivor) if s is not None])


def test_deadlines_pending_while_redis_restarts_fire_after(aof_redis, tmp_path) -> None:
    env = replica_env(aof_redis.url, str(tmp_path / "archive.sqlite3"), TEN_DEADLINE_POLL="0.05")
    (replica,) = start_replicas(env, count=1)
    try:
        with strict_client(replica.base) as client:
            game_ids = [_create(client, 2.0) for _ in range(50)]
        aof_redis.shutdown()  # every deadline passes while Redis is down
        time.sleep(3.0)
        aof_redis.start()
        with strict_client(replica.base) as client:
            wait_until(lambda: _finished(client, game_ids), 60, "every game timed out", step=0.5)
            late = _check_fired_once_never_early(client, game_ids)
        assert min(late) > 0.5  # fired after Redis came back, not before the deadline
    finally:
        replica.stop()
