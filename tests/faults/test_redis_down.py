"""Redis stopped in the middle of a game: while it is down the service answers 503
problem+json with Retry-After for every read and action (never a 500, nothing half-applied),
/ready is 503 while /health stays 200; once Redis is back on the same port the same
service process serves again by itself, from exactly the state before the failed action.
"""

from __future__ import annotations

import random
import signal

import httpx

from tests.servers import RedisServer, ServiceProcess, wait_until
from tests.support.api import bearer, check_problem
from tests.support.replicas import create_game, replica_env

DECK = ["R1", "$2", "W1", "B3", "R2", "$1", "G5", "O4", "B#", "R6", "G1", "$3", "O2", "B4"]


def snapshot(client: httpx.Client, game_id: str) -> tuple[bytes, bytes]:
    game = client.get(f"/v1/games/{game_id}")
    log = client.get(f"/v1/games/{game_id}/events")
    assert game.status_code == 200, game.text
    assert log.status_code == 200, log.text
    return game.content, log.content


def check_unavailable(response: httpx.Response) -> None:
    check_problem(response, 503, "store_unavailable")
    assert int(response.headers["retry-after"]) > 0


def test_redis_down_mid_game_is_503_then_the_service_recovers_by_itself(
    private_redis: RedisServer, tmp_path
):
    env = replica_env(
        private_redis.url, str(tmp_path / "archive.sqlite3"), TEN_RATE_LIMIT="10000/minute"
    )
    server = ServiceProcess(env)
    try:
        with httpx.Client(base_url=server.base, timeout=15) as client:
            game = create_game(
                client, [{"name": "ann"}, {"name": "bob"}], deck=DECK, starting_seat=0
            )
            game_id, path = game["id"], f"/v1/games/{game['id']}"
            tokens = {s["seat"]: bearer(s["token"]) for s in game["seats"]}
            rng = random.Random("faults/redis-down")
            body = game
            for _ in range(4):  # a few acknowledged actions first
                seat = body["to_act"]
                legal = client.get(path, headers=tokens[seat]).json()["legal_actions"]
                acted = client.post(f"{path}/actions", json=rng.choice(legal), headers=tokens[seat])
                assert acted.status_code == 200, acted.text
                body = acted.json()
            before = snapshot(client, game_id)
            seat = body["to_act"]
            action = client.get(path, headers=tokens[seat]).json()["legal_actions"][0]

            private_redis.shutdown()
            # every request that needs Redis, a few times over (pooled connections are dead)
            for _ in range(3):
                check_unavailable(client.get(path, headers=tokens[seat]))
                check_unavailable(client.get(path))
                check_unavailable(client.get(f"{path}/events"))
                check_unavailable(client.get(f"{path}/events/stream"))
                check_unavailable(
                    client.post(
                        f"{path}/actions",
                        json=action,
                        headers={**tokens[seat], "Idempotency-Key": "k1"},
                    )
                )
                check_unavailable(client.post(f"{path}/actions", json=action, headers=tokens[seat]))
                check_unavailable(client.post("/v1/games", json={"players": [{"name": "x"}]}))
                check_unavailable(client.get("/ready"))
                assert client.get("/health").status_code == 200

            private_redis.start()  # same port, same data (its AOF)
            wait_until(
                lambda: client.get("/ready").status_code == 200, 15, "/ready after Redis is back"
            )
            assert snapshot(client, game_id) == before  # nothing of the failed action
            acted = client.post(
                f"{path}/actions", json=action, headers={**tokens[seat], "Idempotency-Key": "k1"}
            )
            assert acted.status_code == 200, acted.text
            assert "idempotent-replayed" not in acted.headers  # it had never been applied
            assert acted.json()["version"] == body["version"] + 1
            log = client.get(f"{path}/events").json()["events"]
            assert log[-len(acted.json()["events"]) :] == acted.json()["events"]
            assert [e["seq"] for e in log] == list(range(1, len(log) + 1))
    finally:
        server.stop()


def test_a_frozen_redis_is_503_and_an_action_retried_with_its_key_counts_once(
    private_redis: RedisServer, tmp_path
):
    """Redis frozen (SIGSTOP: a partition, not a refused connection): reads and actions end
    in 503 after the client timeout instead of hanging. An action sent meanwhile may still be
    applied when Redis wakes up (it was in its socket): retried with its Idempotency-Key it is
    acknowledged once, and its events are in the log once."""
    server = ServiceProcess(replica_env(private_redis.url, str(tmp_path / "archive.sqlite3")))
    assert private_redis.proc is not None
    try:
        with httpx.Client(base_url=server.base, timeout=30) as client:
            game = create_game(
                client, [{"name": "ann"}, {"name": "bob"}], deck=DECK, starting_seat=0
            )
            path = f"/v1/games/{game['id']}"
            headers = {**bearer(game["seats"][0]["token"]), "Idempotency-Key": "frozen-1"}
            private_redis.proc.send_signal(signal.SIGSTOP)
            try:
                check_unavailable(
                    client.post(f"{path}/actions", json={"type": "draw"}, headers=headers)
                )
                check_unavailable(client.get(path))
            finally:
                private_redis.proc.send_signal(signal.SIGCONT)
            wait_until(lambda: client.get("/ready").status_code == 200, 15, "/ready after SIGCONT")
            acted = client.post(f"{path}/actions", json={"type": "draw"}, headers=headers)
            assert acted.status_code == 200, acted.text
            assert acted.json()["version"] == 1
            log = client.get(f"{path}/events").json()["events"]
            assert [e["seq"] for e in log] == list(range(1, len(log) + 1))
            assert [e for e in log if e["version"] == 1] == acted.json()["events"]
            print(
                f"\nthe action sent to the frozen Redis was {'applied' if acted.headers.get('idempotent-replayed') else 'not applied'} when it woke up"
            )
    finally:
        server.stop()
