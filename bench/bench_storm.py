"""A storm of bot-only tables against readers: `python bench/bench_storm.py`.

One service process (uvicorn, the embedded store, a temporary archive) per bot setting
(`--bot-workers 0,1`: 0 = bot steps in a thread of the serving process, as before the bot
pool; 1 = one worker process), each measured in two windows of `--duration` seconds:
- quiet: `--readers` clients reading games (GET /v1/games/{id}, keep-alive, closed loop)
  and one probe of GET /health every 20 ms;
- storm: the same, while `--storm` clients each create tables of five `expert` bots
  (POST /v1/games, the whole game played in the request) one after the other.
Prints per window the readers' requests/s, p50 and p99, /health p50/p99/max, the tables
created (and refused: 503 bots_busy), and the storm's ratio of reader p99 to the quiet one.

`--control` (on by default) adds a third window per round, a control: the readers while a
process outside the service does the storm's bot work (the simulator playing tables of five
experts, `python -m service.entrypoints.simulator --players 5 --bots expert`) at the bot pool's priority
(SCHED_IDLE), with no request at all. Its ratio to the quiet window is what that work costs
the readers on this machine when it runs anywhere on it (its two cores share caches, memory
and the host's scheduling), the floor under the storm's own ratio. `--rounds N` repeats quiet, control and
storm N times in turns and prints each ratio per round and the median of the rounds.
The issue's goals: readers' p99 within 20% of quiet, /health p99 under 50 ms. The load
generator (bench/loadgen.py's raw HTTP/1.1 client) runs in this process. No assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.loadgen import RawConnection
from tests.servers import ServiceProcess
from tests.support.processes import cpu_seconds as cpu
from tests.support.processes import descendants

FIVE_EXPERTS = json.dumps(
    {"players": [{"name": f"E{i}", "bot": "expert"} for i in range(5)]}
).encode()
READ_GAME = json.dumps(
    {"players": [{"name": "human"}, {"name": "b1", "bot": "basic"}, {"name": "b2", "bot": "basic"}]}
).encode()
JSON = {"Content-Type": "application/json"}


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


async def window(port: int, ids: list[str], readers: int, storm: int, seconds: float) -> dict:
    stop = time.monotonic() + seconds
    reads: list[float] = []
    health: list[float] = []
    created: dict[int, int] = {}

    async def reader(n: int) -> None:
        conn = RawConnection("127.0.0.1", port)
        path = f"/v1/games/{ids[n % len(ids)]}"
        while time.monotonic() < stop:
            started = time.perf_counter()
            status, _ = await conn.request("GET", path)
            reads.append((time.perf_counter() - started) * 1000)
            assert status == 200, status
        await conn.close()

    async def prober() -> None:
        conn = RawConnection("127.0.0.1", port)
        while time.monotonic() < stop:
            started = time.perf_counter()
            await conn.request("GET", "/health")
            health.append((time.perf_counter() - started) * 1000)
            await asyncio.sleep(0.02)
        await conn.close()

    async def creator() -> None:
        conn = RawConnection("127.0.0.1", port)
        while time.monotonic() < stop:
            status, _ = await conn.request("POST", "/v1/games", FIVE_EXPERTS, JSON)
            created[status] = created.get(status, 0) + 1
        await conn.close()

    await asyncio.gather(
        *(reader(n) for n in range(readers)), prober(), *(creator() for _ in range(storm))
    )
    return {
        "reads/s": len(reads) / seconds,
        "read p50": pct(reads, 0.5),
        "read p99": pct(reads, 0.99),
        "health p50": pct(health, 0.5),
        "health p99": pct(health, 0.99),
        "health max": max(health, default=float("nan")),
        "tables": created,
    }


async def games(port: int, count: int) -> list[str]:
    conn = RawConnection("127.0.0.1", port)
    ids = []
    for _ in range(count):
        status, body = await conn.request("POST", "/v1/games", READ_GAME, JSON)
        assert status == 201, body
        ids.append(json.loads(body)["id"])
    await conn.close()
    return ids


# the control's neighbour: the storm's own bot work (tables of five experts played to their
# end by the simulator) in a process of the pool's priority, outside the service
NEIGHBOUR = """
import os, runpy, sys
try:
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
except OSError:
    os.nice(19)
sys.argv = ["ten-sim", "--games", "1000000", "--players", "5", "--bots", "expert", "--workers", "1"]
runpy.run_module("service.entrypoints.simulator", run_name="__main__")
"""


def apart(port: int, ids: list[str], readers: int, seconds: float) -> dict:
    """The readers' window while a process of the lowest priority plays bot tables outside
    the service (the control)."""
    root = Path(__file__).resolve().parents[1]
    neighbour = subprocess.Popen(
        [sys.executable, "-c", NEIGHBOUR], cwd=root, stdout=subprocess.DEVNULL
    )
    try:
        return asyncio.run(window(port, ids, readers, 0, seconds))
    finally:
        neighbour.kill()
        neighbour.wait()


def line(name: str, r: dict) -> str:
    return (
        f"  {name:<6} reads {r['reads/s']:7.0f}/s  p50 {r['read p50']:6.1f} ms  "
        f"p99 {r['read p99']:6.1f} ms   /health p50 {r['health p50']:5.1f}  "
        f"p99 {r['health p99']:6.1f}  max {r['health max']:6.1f} ms   tables {r['tables']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bot-workers", default="0,1", help="TEN_BOT_WORKERS values to compare")
    parser.add_argument("--duration", type=float, default=15.0)
    parser.add_argument("--readers", type=int, default=16)
    parser.add_argument("--storm", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=1, help="quiet, control, storm: N times")
    parser.add_argument(
        "--control", action=argparse.BooleanOptionalAction, default=True,
        help="a window with the bot work in a SCHED_IDLE process apart, no request (the floor)",
    )  # fmt: skip
    args = parser.parse_args()
    for workers in args.bot_workers.split(","):
        with tempfile.TemporaryDirectory(prefix="ten-storm-") as tmp:
            env = {
                "TEN_DATABASE_URL": f"sqlite+aiosqlite:///{tmp}/archive.sqlite3",
                "TEN_BOT_WORKERS": workers,
                "TEN_LOG_LEVEL": "WARNING",
            }
            server = ServiceProcess(env, stdout=Path(tmp) / "service.log")
            try:
                port = server.port
                ids = asyncio.run(games(port, args.readers))
                rounds = []
                for _ in range(args.rounds):
                    quiet = asyncio.run(window(port, ids, args.readers, 0, args.duration))
                    control = (
                        apart(port, ids, args.readers, args.duration) if args.control else None
                    )
                    storm = asyncio.run(window(port, ids, args.readers, args.storm, args.duration))
                    rounds.append((quiet, control, storm))
                # the tables alone: the serving process's CPU per table, and its children's
                # (the bot pool)
                # (uvicorn with one worker serves in its own process; the fork server and
                # the pool's workers are its descendants)
                serving = server.proc.pid
                before = {p: cpu(p) for p in [serving, *descendants(serving)]}
                alone = asyncio.run(window(port, ids, 0, args.storm, args.duration))
                after = {p: cpu(p) for p in [serving, *descendants(serving)]}
                tables = alone["tables"].get(201, 0)
                own = after[serving] - before[serving]
                pool = sum(after[p] - before.get(p, 0.0) for p in after if p != serving)
            finally:
                server.stop()
        print(f"TEN_BOT_WORKERS={workers}: {args.readers} readers, storm of {args.storm}")
        storms, controls = [], []
        for n, (quiet, control, storm) in enumerate(rounds, 1):
            if args.rounds > 1:
                print(f" round {n}")
            print(line("quiet", quiet))
            if control is not None:
                print(line("apart", control))
            print(line("storm", storm))
            storms.append(storm["read p99"] / quiet["read p99"])
            text = f"  storm/quiet reader p99: {storms[-1]:.2f}"
            if control is not None:
                controls.append(control["read p99"] / quiet["read p99"])
                text += f"   control (the bot work apart, no request)/quiet: {controls[-1]:.2f}"
            print(text)
        if args.rounds > 1:
            text = f"  median of {args.rounds} rounds: storm/quiet {statistics.median(storms):.2f}"
            if controls:
                text += f", control/quiet {statistics.median(controls):.2f}"
            print(text)
        print(
            f"  tables alone: {tables} five-expert tables in {args.duration:g} s; per table "
            f"{own / max(tables, 1) * 1000:.2f} ms of the serving process's CPU, "
            f"{pool / max(tables, 1) * 1000:.2f} ms of its bot pool's",
            flush=True,
        )


if __name__ == "__main__":
    main()
