"""Bulk pairing on two replicas, one killed in between: `python bench/bench_bulk_pairing.py`.

A private Redis, two service processes on it (uvicorn, the platform's API key, a shared
SQLite archive, the platform's webhooks to a receiver in this process). One call creates
`--tables` tables (three players and a bot each, a deadline clock) on the replica that is
then killed (SIGKILL) `--kill-after` seconds later, the start `--ahead` seconds after the
call; the other replica, which never saw the create, starts them from the leased queue.

Then, for every game: its start as the game itself records it (its clock's `since`, the
server's time the start was decided, just before the save that dealt it) against the bulk's
`start_at`, and when its `game_started` webhook reached the receiver (after the save, the
relay and the delivery: an upper bound of when the game was there to play); the `game_started`
events in its log (exactly one each); the `game_started` webhooks received (distinct
deliveries per game). Prints the create's time, the lateness p50/p99/max (the goal: p99 at
most 1 s) and the counts. No assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# the service processes run this checkout's code (they inherit the environment)
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))

from service.bulk.records import CHUNK  # noqa: E402
from tests.servers import RedisServer, ServiceProcess  # noqa: E402
from tests.support.webhooks import SECRET, Receiver  # noqa: E402

API_KEY = "bench-platform-key-0123456789"
PLATFORM = {"X-API-Key": API_KEY}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def tables(n: int) -> list[dict]:
    return [
        {
            "seats": [
                {"player_id": f"p{i}a", "name": f"Ann {i}"},
                {"player_id": f"p{i}b", "name": f"Bob {i}"},
                {"player_id": f"p{i}c", "name": f"Cy {i}"},
                {"bot": "basic"},
            ],
            "clock": {"type": "deadline", "hours": 24},
        }
        for i in range(n)
    ]


class Hooks(Receiver):
    """The receiver, keeping each `game_started` delivery's game and its `webhook-id`."""

    def __init__(self) -> None:
        super().__init__()
        self.started: dict[str, set[str]] = {}
        self.first: dict[str, float] = {}  # game id -> when its first game_started came
        self.guard = threading.Lock()

    def answer(self, headers: dict[str, str], body: bytes) -> int:
        message = json.loads(body)
        if message.get("type") == "game_started":
            lowered = {k.lower(): v for k, v in headers.items()}
            with self.guard:
                game_id = message["data"]["game_id"]
                self.started.setdefault(game_id, set()).add(lowered.get("webhook-id", ""))
                self.first.setdefault(game_id, time.time())
        return 204


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument(
        "--ahead", type=float, default=25.0, help="seconds from the call to start_at"
    )
    parser.add_argument(
        "--kill-after", type=float, default=8.0, help="seconds from the call to the kill"
    )
    parser.add_argument("--workers", type=int, default=1, help="uvicorn workers per replica")
    parser.add_argument("--no-kill", action="store_true", help="both replicas live throughout")
    parser.add_argument("--no-webhooks", action="store_true", help="no webhooks configured")
    args = parser.parse_args()
    # the service processes run this checkout's code (they inherit the environment)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])
    )

    hooks = Hooks().start()
    redis_server = RedisServer()
    with tempfile.TemporaryDirectory(prefix="ten-bench-bulk-") as tmp:
        env = {
            "TEN_REDIS_URL": redis_server.url,
            "TEN_DATABASE_URL": f"sqlite+aiosqlite:///{tmp}/archive.sqlite3",
            "TEN_MIGRATE_ON_START": "true",
            "TEN_API_KEYS": API_KEY,
            **(
                {}
                if args.no_webhooks
                else {"TEN_WEBHOOK_URLS": hooks.url, "TEN_WEBHOOK_SECRET": SECRET}
            ),
            "TEN_LOG_LEVEL": "WARNING",
        }
        survivor = ServiceProcess(env, args.workers, stdout=Path(tmp) / "survivor.log")
        doomed = ServiceProcess(env, args.workers, stdout=Path(tmp) / "doomed.log")
        try:
            run(args, survivor, doomed, hooks)
        finally:
            problems = [
                line
                for line in survivor.log().splitlines()
                if '"WARNING"' in line or '"ERROR"' in line
            ]
            print(
                f"the surviving replica logged {len(problems)} warnings or errors",
                *problems[:5],
                sep="\n",
            )
            doomed.kill()
            survivor.stop()
            hooks.stop()
            redis_server.kill()


def run(
    args: argparse.Namespace, survivor: ServiceProcess, doomed: ServiceProcess, hooks: Hooks
) -> None:
    start_at = datetime.now(UTC) + timedelta(seconds=args.ahead)
    body = {"tables": tables(args.tables), "start_at": start_at.isoformat()}
    called = time.monotonic()
    with httpx.Client(base_url=doomed.base, timeout=120) as client:
        made = client.post("/v1/bulk-pairings", json=body, headers=PLATFORM)
    took = time.monotonic() - called
    if made.status_code != 201:
        raise SystemExit(f"the create answered {made.status_code}: {made.text[:500]}")
    bulk = made.json()
    games = [t["game_id"] for t in bulk["tables"]]
    print(
        f"created {len(games)} tables in one call: {took:.2f} s "
        f"({len(json.dumps(body)) / 1024:.0f} KiB asked, {len(made.content) / 1024:.0f} KiB answered)"
    )
    time.sleep(max(0.0, args.kill_after - (time.monotonic() - called)))
    if not args.no_kill:
        doomed.kill()
    left = start_at.timestamp() - time.time()
    if args.no_kill:
        print("both replicas live")
    else:
        print(
            f"replica {doomed.port} killed (SIGKILL) {left:.1f} s before start_at; "
            f"replica {survivor.port} never saw the create"
        )
    with httpx.Client(base_url=survivor.base, timeout=60) as client:
        deadline = time.monotonic() + args.ahead + 120
        while time.monotonic() < deadline:
            read = client.get(f"/v1/bulk-pairings/{bulk['id']}", headers=PLATFORM).json()
            states = Counter(t["status"] for t in read["tables"])
            if states.get("open", 0) == 0 and time.time() > start_at.timestamp():
                break
            time.sleep(0.5)
        print(f"bulk {read['status']}; tables by status: {dict(states)}")
        late, starts, by_job = [], Counter(), {}
        for index, game_id in enumerate(games):
            game = client.get(f"/v1/games/{game_id}", headers=PLATFORM).json()
            clock = game.get("clock")
            if clock is not None:
                late.append(clock["since"] - start_at.timestamp())
                by_job.setdefault(index // CHUNK, []).append(late[-1])
            events = client.get(
                f"/v1/games/{game_id}/events", params={"after": 0, "limit": 1000}, headers=PLATFORM
            ).json()
            starts[sum(e["type"] == "game_started" for e in events["events"])] += 1
    waited = time.monotonic() + 120  # the last webhooks' deliveries (by the relay's workers)
    while time.monotonic() < waited and len(hooks.first) < len(games):
        time.sleep(0.2)
    if late:
        print(
            f"start lateness vs start_at over {len(late)} games: p50 {statistics.median(late) * 1000:.0f} ms, "
            f"p99 {percentile(late, 0.99) * 1000:.0f} ms, max {max(late) * 1000:.0f} ms, "
            f"min {min(late) * 1000:.0f} ms"
        )
        worst = {job: round(max(values) * 1000) for job, values in sorted(by_job.items())}
        print(f"latest start per start job ({CHUNK} tables each), ms: {worst}")
    print(
        f"games by game_started events in their log: {dict(sorted(starts.items()))} (want {{1: {len(games)}}})"
    )
    came = [hooks.first[g] - start_at.timestamp() for g in games if g in hooks.first]
    if came:
        print(
            f"its game_started webhook received, after start_at, over {len(came)} games: "
            f"p50 {statistics.median(came) * 1000:.0f} ms, p99 {percentile(came, 0.99) * 1000:.0f} ms, "
            f"max {max(came) * 1000:.0f} ms"
        )
    hooked = Counter(len(hooks.started.get(g, ())) for g in games)
    print(f"games by distinct game_started webhooks: {dict(sorted(hooked.items()))}")


if __name__ == "__main__":
    main()
