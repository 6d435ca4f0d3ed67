"""A service replica SIGKILLed under load: several clients play games with their requests
spread over two replicas sharing one Redis; one replica is killed in the middle. The clients
fail over to the other (a request cut in flight is sent again with its Idempotency-Key), the
games go on, and afterwards every acknowledged action's events are in its game's event log,
in order, exactly once, with contiguous seqs and versions."""

from __future__ import annotations

import threading
import time

from tests.faults.player import Player
from tests.servers import wait_until
from tests.support.api import strict_client
from tests.support.replicas import check_whole_log, replica_env, start_replicas

CLIENTS = 6
ACKS_BEFORE = 80  # acknowledged actions (all clients) before the kill
ACKS_AFTER = 80  # and after it


def test_a_replica_killed_under_load_loses_no_acknowledged_action(redis_url: str, tmp_path):
    survivor, victim = start_replicas(replica_env(redis_url, str(tmp_path / "archive.sqlite3")))
    players = [
        Player([survivor.base, victim.base], f"faults/replica-{i}", offset=i)
        for i in range(CLIENTS)
    ]
    stop, errors = threading.Event(), []
    threads = [threading.Thread(target=p.run, args=(stop, errors)) for p in players]

    def acks() -> int:
        assert not errors, errors
        return sum(p.acks for p in players)

    try:
        for thread in threads:
            thread.start()
        wait_until(lambda: acks() >= ACKS_BEFORE, 30, "acknowledged actions before the kill")
        victim.kill()
        killed_at, acks_at_kill = time.monotonic(), acks()
        failed_before = sum(p.failed_attempts for p in players)
        wait_until(lambda: acks() >= acks_at_kill + ACKS_AFTER, 30, "actions after the kill")
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
        assert not errors, errors
        # the killed replica's requests failed over to the survivor
        failed = sum(p.failed_attempts for p in players)
        assert failed > failed_before
        # games in play at the kill went on afterwards
        went_on = [
            game_id
            for p in players
            for game_id, times in p.ack_times.items()
            if times and times[0] < killed_at < times[-1]
        ]
        assert went_on
        games = 0
        with strict_client(survivor.base) as client:
            for player in players:
                for game_id, replies in player.acked.items():
                    check_whole_log([client], game_id, replies)
                    games += 1
        print(
            f"\n{acks()} actions acknowledged ({acks_at_kill} before the kill) in {games} games; "
            f"{failed} attempts failed and were sent again "
            f"({sum(p.cut_in_flight for p in players)} of them cut in flight); "
            f"{sum(p.replays for p in players)} acknowledged by an idempotent replay"
        )
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
        for player in players:
            player.close()
        victim.kill()
        survivor.stop()
