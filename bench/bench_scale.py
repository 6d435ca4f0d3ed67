"""Scale-out benchmark: one service process against two, on one Redis, on this machine.

Run: `.venv/bin/python bench/bench_scale.py` (prints figures, asserts nothing). It starts a
redis-server of its own on a free loopback port (`--redis-url redis://127.0.0.1:6379/14`
uses a shared one instead). About 5 minutes with the defaults.

Configurations (`--configs`), every service process with one uvicorn worker (uvloop,
httptools, no access log), the same Redis, each process with its own temporary SQLite archive
(finished games are archived by whichever replica takes them from the shared outbox):
- `1x1`  one process on one port
- `2x1`  two processes on two ports, the load spread evenly over both (as a load balancer
         would: each load-generator process drives one of them)
- `1x2`  for reference: one process with `uvicorn --workers 2` (the kernel spreads the
         connections over the two workers of one port)

Scenarios, each for `--duration` seconds after `--warmup`, `--clients` keep-alive
connections from `--procs` load-generator processes (`bench/loadgen.py`, the raw asyncio
client: the same client and the same number of processes in every configuration):
- `read`    GET /v1/games/{id} of a 4-player game in mid-play
- `action`  POST /v1/games/{id}/actions, each client playing its own game (1 human seat,
            3 random bots) with a random pick from the previous reply's `legal_actions`

Besides requests/s and latency it prints where the machine's CPU went during each window: the
service processes, the load generator, redis-server and everything else, in shares of one
core (this machine has `os.cpu_count()` of them, shared by all of these). That is the
limit of scaling out here: a second process can only use what the load generator, Redis and
the first process leave of the cores. `--rounds` repeats everything; the table shows the
median round and the range.

It reuses bench/bench_http.py (process handling, CPU accounting, the load-generator runner,
cleanup helpers); every process it starts is stopped on exit and its Redis keys deleted.
"""

from __future__ import annotations

import argparse
import os
import time

import redis
from bench_http import (  # the sibling module: `python bench/bench_scale.py` puts bench/ first
    IDS_DIR,
    Server,
    bench_session,
    free_port,
    game_keys,
    mid_play_game,
    run_loadgen,
    spawn,
)

CONFIGS = {"1x1": (1, 1), "2x1": (2, 1), "1x2": (1, 2)}  # name -> (processes, workers each)


def private_redis() -> str:
    """A redis-server of this run alone on a free loopback port (no persistence): nobody
    else's commands in its CPU figures, nobody else's FLUSHDB under the games."""
    port = free_port()
    directory = IDS_DIR / "redis"
    directory.mkdir()
    cmd = [
        "redis-server", "--bind", "127.0.0.1", "--port", str(port), "--dir", str(directory),
        "--save", "", "--appendonly", "no", "--logfile", "redis.log",
    ]  # fmt: skip
    spawn(cmd)
    url = f"redis://127.0.0.1:{port}/0"
    client = redis.Redis.from_url(url, socket_connect_timeout=1)
    deadline = time.monotonic() + 10
    while True:
        try:
            client.ping()
            break
        except redis.ConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    client.close()
    return url


def start_config(name: str, redis_url: str) -> list[Server]:
    processes, workers = CONFIGS[name]
    servers = []
    for i in range(processes):
        archive = IDS_DIR / f"archive-{name}-{i}.sqlite3"
        env = {
            "TEN_REDIS_URL": redis_url,
            "TEN_DATABASE_URL": f"sqlite+aiosqlite:///{archive}",
            "TEN_MIGRATE_ON_START": "true",
        }
        servers.append(Server(f"service-{name}-{i}", "service.app:app", workers, env))
    return servers


def summary(rows: list[dict]) -> dict:
    """The median round (by req/s) and the range over the rounds."""
    ordered = sorted(rows, key=lambda r: r["rps"])
    median = ordered[len(ordered) // 2]
    return {**median, "rps_range": (ordered[0]["rps"], ordered[-1]["rps"])}


def fmt(config: str, scenario: str, r: dict, base: float | None) -> str:
    c = r["cpu"]
    low, high = r["rps_range"]
    spread = f"{low:.0f}-{high:.0f}" if high > low else ""
    scale = f"x{r['rps'] / base:.2f}" if base else ""
    busy = c["server"] + c["client"] + c["redis"] + c["others"]
    per_process = "/".join(f"{p * 100:.0f}" for p in c["server_processes"]) or "-"
    server_us, all_us = cpu_per_request(r)
    return (
        f"{config:<5} {scenario:<7} {r['rps']:>7.0f} {spread:>11} {scale:>6} "
        f"{r['p50_ms']:>7.1f} {r['p99_ms']:>7.1f} {r['non_200']:>7} "
        f"{c['server'] * 100:>5.0f}% {per_process:>9} {c['client'] * 100:>5.0f}% "
        f"{c['redis'] * 100:>5.0f}% {c['others'] * 100:>5.0f}% {busy * 100:>5.0f}% "
        f"{server_us:>6.0f} {all_us:>6.0f} {ceiling(config, r):>8.0f}"
    )


def cpu_per_request(r: dict) -> tuple[float, float]:
    """CPU microseconds per request: of the service processes, and of service + load
    generator + Redis (what one request costs the machine, whatever else runs on it)."""
    c = r["cpu"]
    per = c["wall"] / max(r["requests"], 1) * 1e6
    return c["server"] * per, (c["server"] + c["client"] + c["redis"]) * per


def ceiling(config: str, r: dict) -> float:
    """The req/s this configuration would reach with the machine to itself at the CPU per
    request measured: every core busy with service, load generator and Redis, but a service
    process (one event loop) never above one core."""
    processes, workers = CONFIGS[config]
    server_us, all_us = cpu_per_request(r)
    cores = len(os.sched_getaffinity(0))
    return min(processes * workers * 1e6 / server_us, cores * 1e6 / all_us)


HEADER = (
    f"{'procs':<5} {'load':<7} {'req/s':>7} {'range':>11} {'scale':>6} {'p50 ms':>7} "
    f"{'p99 ms':>7} {'non-200':>7} {'server':>6} {'per proc':>9} {'loadgen':>6} "
    f"{'redis':>6} {'others':>6} {'busy':>6} {'us/req':>6} {'all us':>6} {'ceiling':>8}"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--redis-url",
        default="private",
        help="the Redis to use, e.g. redis://127.0.0.1:6379/14; default: a private "
        "redis-server started (and stopped) by this run",
    )
    parser.add_argument("--configs", default="1x1,2x1,1x2", help="of " + ", ".join(CONFIGS))
    parser.add_argument("--scenarios", default="read,action")
    parser.add_argument("--duration", type=float, default=8.0, help="seconds per window")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds before each window")
    parser.add_argument("--clients", type=int, default=64, help="concurrent connections")
    parser.add_argument("--procs", type=int, default=2, help="load-generator processes")
    parser.add_argument("--rounds", type=int, default=2, help="repeat every window")
    parser.add_argument("--pool", type=int, default=5, help="games made ahead per action client")
    parser.add_argument("--bots", default="random", help="level of the 3 bot seats")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    configs = args.configs.split(",")
    scenarios = args.scenarios.split(",")
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown or not set(scenarios) <= {"read", "action"}:
        parser.error(f"unknown configuration or scenario: {unknown or scenarios}")

    keys_to_delete: list[str] = []
    if args.redis_url == "private":
        args.redis_url = private_redis()
    results: dict[str, dict[str, list[dict]]] = {c: {s: [] for s in scenarios} for c in configs}
    game: dict | None = None
    with bench_session(args.redis_url, keys_to_delete) as rclient:
        print(
            f"settings: {args.clients} clients from {args.procs} load-generator processes "
            f"(bench/loadgen.py raw), {args.warmup:g} s warm-up + {args.duration:g} s per "
            f"window, {args.rounds} round(s); Redis {args.redis_url}; 1 uvicorn worker per "
            "process unless the configuration says otherwise"
        )
        for round_no in range(args.rounds):
            for config in configs:
                servers = start_config(config, args.redis_url)
                time.sleep(0.5)
                if game is None:
                    game = mid_play_game(servers[0].base, args.bots, args.seed)
                    keys_to_delete += game_keys(game["id"])
                    print(
                        f"read target: game {game['id']} in mid-play (version {game['version']}, "
                        f"GET reply {game['get_bytes']} B)"
                    )
                bases = [s.base for s in servers]
                for scenario in scenarios:
                    if scenario == "read":
                        urls = [f"{b}/v1/games/{game['id']}" for b in bases]
                        row = run_loadgen("get", urls, servers, rclient, args, procs=args.procs)
                    else:
                        row = run_loadgen("act", bases, servers, rclient, args, procs=args.procs)
                        keys_to_delete += [k for g in row["game_ids"] for k in game_keys(g)]
                    results[config][scenario].append(row)
                    print(
                        f"  round {round_no + 1} {config} {scenario}: {row['rps']:.0f} req/s, "
                        f"loadgen {row['cpu']['client'] * 100:.0f}% of a core"
                    )
                for server in servers:
                    server.close()
        cores = len(os.sched_getaffinity(0))
        print()
        print(f"medians of {args.rounds} round(s); CPU in % of one core ({cores} usable cores):")
        print(HEADER)
        for scenario in scenarios:
            base = None
            for config in configs:
                r = summary(results[config][scenario])
                if config == "1x1":
                    base = r["rps"]
                print(fmt(config, scenario, r, base if config != "1x1" else None))
        print()
        for scenario in scenarios:
            shares = [summary(results[c][scenario])["cpu"]["client"] / cores * 100 for c in configs]
            print(
                f"load generator's share of the machine ({scenario}): "
                + ", ".join(f"{c} {s:.0f}%" for c, s in zip(configs, shares, strict=True))
            )
        statuses = {
            f"{c}/{s}": (summary(results[c][s])["statuses"], summary(results[c][s])["errors"])
            for c in configs
            for s in scenarios
        }
        print(f"statuses, errors (median rounds): {statuses}")
        print(
            "columns: scale = req/s against 1x1; server = CPU of all service processes (per "
            "proc: each busy process); busy = everything on the machine, at most "
            f"{cores * 100}%; us/req = service CPU per request; all us = service + load "
            "generator + Redis CPU per request; ceiling = the req/s at those CPU costs with "
            f"the {cores} cores to themselves, a service process (one event loop) never above "
            "one core: min(processes / us/req, cores / all us), the bound on an idle machine"
        )


if __name__ == "__main__":
    main()
