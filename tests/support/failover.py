"""A Redis failover under load, counted: the service on a primary + replica + three
sentinels (`tests.support.sentinels`), clients playing, the primary SIGKILLed, the sentinels
promoting the replica; then every action the service acknowledged (200) is looked for in its
game's event log on the new primary. Used by the fault test (tests/faults/test_failover.py)
and by `bench/failover.py`, which prints the counts.

With `stall`, the replica stops reading its primary (SIGSTOP, then SIGCONT) just before the primary
dies: the replication lag of a busy replica or a slow link, made long enough to count. With
acknowledgements on WAIT (TEN_REDIS_WAIT_REPLICAS=1), what the replica did not confirm was
never acknowledged; without, the actions acknowledged in that window are lost."""

from __future__ import annotations

import random
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.servers import ServiceProcess, wait_until
from tests.support.api import bearer
from tests.support.replicas import replica_env
from tests.support.sentinels import MASTER, SentinelGroup

PLAYERS = [{"name": "human"}] + [{"name": f"bot{i}", "bot": "random"} for i in range(3)]
STALL_SECONDS = 0.5  # the partition, before the primary dies
STALL_LONGEST = 3.0  # ... or longer, until 50 actions were acknowledged in it


@dataclass
class Outcome:
    wait_replicas: int
    stall: bool
    acknowledged: int = 0  # actions answered 200
    lost: int = 0  # of them, missing from (or different in) the log after the failover
    games: int = 0
    games_lost: int = 0  # games created (201) that the new primary does not have
    refused: dict[int, int] = field(default_factory=dict)  # status -> count, at the fault
    cut: int = 0  # requests that got no answer at the fault
    failover_seconds: float = 0.0  # from the kill to a promoted replica taking writes
    after: int = 0  # actions acknowledged after the failover (the service recovered)
    errors: list[str] = field(default_factory=list)  # the service's ERROR log lines

    def line(self) -> str:
        return (
            f"WAIT replicas={self.wait_replicas} stall={'yes' if self.stall else 'no '}  "
            f"acknowledged {self.acknowledged:5d}  lost {self.lost:4d}  "
            f"games {self.games} (lost {self.games_lost})  at the fault: "
            f"{sum(self.refused.values())} refused {dict(sorted(self.refused.items()))}, "
            f"{self.cut} cut  failover {self.failover_seconds:.1f} s  after it: {self.after} acked"
        ) + "".join(f"\n  ERROR {line[:2000]}" for line in self.errors[:3])


class _Client:
    """Plays 1-human games until its first failure (it does not retry: an action it sends
    again could be applied on a state the failover rolled back, which is not what is counted
    here). Every acknowledged reply is kept per game."""

    def __init__(self, base: str, seed: int, outcome: Outcome, lock: threading.Lock) -> None:
        self.http = httpx.Client(base_url=base, timeout=15)
        self.rng = random.Random(seed)
        self.acked: dict[str, list[dict[str, Any]]] = {}
        self.outcome = outcome
        self.lock = lock

    def _failed(self, response: httpx.Response | None) -> None:
        with self.lock:
            if response is None:
                self.outcome.cut += 1
            else:
                status = response.status_code
                self.outcome.refused[status] = self.outcome.refused.get(status, 0) + 1

    def play(self, stop: threading.Event) -> None:
        game: dict[str, Any] | None = None
        try:
            while not stop.is_set():
                if game is None or game["status"] == "finished":
                    created = self.http.post("/v1/games", json={"players": PLAYERS})
                    if created.status_code != 201:
                        return self._failed(created)
                    token = created.json()["seats"][0]["token"]
                    read = self.http.get(created.headers["location"], headers=bearer(token))
                    if read.status_code != 200:
                        return self._failed(read)
                    game = read.json()
                    self.acked[game["id"]] = []
                action = self.rng.choice(game["legal_actions"])
                headers = {**bearer(token), "Idempotency-Key": uuid.uuid4().hex}
                sent = self.http.post(
                    f"/v1/games/{game['id']}/actions", json=action, headers=headers
                )
                if sent.status_code != 200:
                    return self._failed(sent)
                game = sent.json()
                self.acked[game["id"]].append(game)
        except httpx.TransportError:
            self._failed(None)
        return None

    def count(self, base: str) -> tuple[int, int, int, int]:
        """(acknowledged, lost, games, games lost), read from the service at `base`."""
        acknowledged = lost = games_lost = 0
        for game_id, replies in self.acked.items():
            acknowledged += len(replies)
            page = self.http.get(f"{base}/v1/games/{game_id}/events", params={"limit": 1000})
            if page.status_code == 404:
                games_lost += 1
                lost += len(replies)
                continue
            assert page.status_code == 200, page.text
            logged = {event["seq"]: event for event in page.json()["events"]}
            lost += sum(
                any(logged.get(event["seq"]) != event for event in reply["events"])
                for reply in replies
            )
        return acknowledged, lost, len(self.acked), games_lost


def _ready(base: str) -> bool:
    try:
        return httpx.get(f"{base}/ready", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def run_failover(
    workspace: Path, *, wait_replicas: int, stall: bool, clients: int = 8, before: int = 300
) -> Outcome:
    """One failover under `clients` playing clients, once they have `before` acknowledged
    actions; the counts afterwards."""
    outcome = Outcome(wait_replicas, stall)
    group = SentinelGroup()
    server = None
    players: list[_Client] = []
    try:
        env = replica_env(
            f"redis://{MASTER}/0",
            str(workspace / "archive.sqlite3"),
            TEN_REDIS_SENTINELS=group.addresses,
            TEN_REDIS_SENTINEL_MASTER=MASTER,
            TEN_REDIS_WAIT_REPLICAS=str(wait_replicas),
            TEN_REDIS_WAIT_TIMEOUT="1",
        )
        log = workspace / "service.log"
        server = ServiceProcess(env, stdout=log)
        lock = threading.Lock()
        stop = threading.Event()
        players = [_Client(server.base, seed, outcome, lock) for seed in range(clients)]
        threads = [threading.Thread(target=p.play, args=(stop,), daemon=True) for p in players]
        for thread in threads:
            thread.start()

        def acknowledged() -> int:
            return sum(len(replies) for p in players for replies in p.acked.values())

        wait_until(lambda: acknowledged() >= before, 60, f"{before} acknowledged actions")
        if stall:  # what the primary sends its replica is lost from here on (a partition)
            assert group.replica_through_link(), "the sentinels moved the replica off the link"
            group.link.cut.set()
            cut_at = acknowledged()
            time.sleep(STALL_SECONDS)
            # on a machine busy enough to stall the clients, until some actions came back
            # (none do while WAIT waits for the replica: then until every client gave up)
            deadline = time.monotonic() + STALL_LONGEST
            while acknowledged() < cut_at + 50 and time.monotonic() < deadline:
                if not any(thread.is_alive() for thread in threads):
                    break
                time.sleep(0.01)
        killed = group.kill_primary()
        for thread in threads:  # each stops at its first failure
            thread.join(timeout=60)
        stop.set()
        outcome.failover_seconds = group.wait_for_failover() - killed
        wait_until(lambda: _ready(server.base), 30, "the service ready on the new primary")
        for player in players:
            acked, lost, games, games_lost = player.count(server.base)
            outcome.acknowledged += acked
            outcome.lost += lost
            outcome.games += games
            outcome.games_lost += games_lost
        # and it plays on: the old primary back (empty: it kept nothing on disk), made a
        # replica of the new one by the sentinels; a new game, to its first actions
        group.rejoin_old_primary()
        again = _Client(server.base, 99, Outcome(wait_replicas, stall), lock)
        players.append(again)
        stop_after = threading.Event()
        timer = threading.Timer(1.0, stop_after.set)
        timer.start()
        again.play(stop_after)
        timer.cancel()
        outcome.after = sum(len(replies) for replies in again.acked.values())
        return outcome
    finally:
        for player in players:
            player.http.close()
        if server is not None:
            server.stop()
            outcome.errors = [
                line for line in server.log().splitlines() if '"level":"ERROR"' in line
            ]
        group.close()
