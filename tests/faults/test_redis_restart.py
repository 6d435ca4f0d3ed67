"""Redis with an append-only file (`appendfsync always`) restarted under a game -- a clean
SHUTDOWN, then a SIGKILL while the client keeps playing: the game goes on where it was and
every acknowledged action is in the event log, once, in order (the client retries what was
in flight with its Idempotency-Key, as a real client would)."""

from __future__ import annotations

import threading
import time

from tests.faults.player import Player
from tests.servers import RedisServer, ServiceProcess
from tests.support.api import strict_client
from tests.support.replicas import check_whole_log, replica_env


def kill_and_restart(redis_server: RedisServer, player: Player, after_acks: int) -> None:
    """SIGKILL Redis once the player has `after_acks` acknowledgements, start it 0.5 s later."""
    deadline = time.monotonic() + 20
    while player.acks < after_acks and time.monotonic() < deadline:
        time.sleep(0.005)
    redis_server.kill()
    time.sleep(0.5)
    redis_server.start()


def test_redis_restarted_and_killed_under_a_game_loses_no_acknowledged_action(
    private_redis: RedisServer, tmp_path
):
    server = ServiceProcess(replica_env(private_redis.url, str(tmp_path / "archive.sqlite3")))
    player = Player([server.base], "faults/aof")
    try:
        for _ in range(10):
            player.step()
        private_redis.shutdown()
        private_redis.start()
        for _ in range(10):
            player.step()
        private_redis.kill()
        private_redis.start()
        for _ in range(10):
            player.step()
        # and once more while the client is playing: killed, down for a while, started again
        failed = player.failed_attempts
        chaos = threading.Thread(
            target=kill_and_restart, args=(private_redis, player, player.acks + 5)
        )
        chaos.start()
        try:
            while chaos.is_alive():
                player.step()
            for _ in range(5):
                player.step()
        finally:
            chaos.join()
        assert player.failed_attempts > failed  # it was down while the client played
        assert player.acks >= 40
        with strict_client(server.base) as client:
            for game_id, replies in player.acked.items():
                check_whole_log([client], game_id, replies)
    finally:
        player.close()
        server.stop()
