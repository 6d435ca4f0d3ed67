"""HTTP load benchmark: the service against the ceiling of its own stack, side by side.

Run: `.venv/bin/python bench/bench_http.py` (prints figures, asserts nothing; Redis at
127.0.0.1:6379, db 15 unless `--redis-url` says otherwise). About 2.5 minutes with the defaults.

Its own Redis database and archive: the service hands every finished game to an archive
queue (`{ten:q:archive}:*`, one per Redis database, served by every replica) and
archives it (by default into `./ten-archive.sqlite3`). On db 0 other people's service
processes would sweep the benchmark's games into their archives (and this benchmark's
workers theirs into its own), so it uses a database of its own and a temporary SQLite
archive (migrated on start); finished games are still archived by the workers, as in
production, so that cost is in the figures.

It starts, on free loopback ports and with the same uvicorn settings (uvloop, httptools,
`--workers N`), the service `service.app:app` on Redis and the bare Litestar app
`bench/ceiling_app.py`, whose two endpoints do only the storage and serialization work of a
game request (the read ceiling: HGET a real stored game record, decode it, reply with JSON of
a real reply's size; the write ceiling: the same plus version + 1, re-encode and a Lua
compare-and-set). Then, per worker count, for `--duration` seconds after `--warmup`, with
`--clients` concurrent keep-alive connections from a separate load-generator process:

- read ceiling    GET  /ceiling/read/0                          (wrk if installed)
- read service    GET  /v1/games/{id}, a 4-player game in mid-play (wrk if installed)
- write ceiling   POST /ceiling/write/{n}, one key per client    (bench/loadgen.py, raw)
- action service  POST /v1/games/{id}/actions, each client playing its own game (1 human and
                  3 bots: every action also plays the bots' moves) with its seat token, a
                  random pick from the previous reply's `legal_actions` (bench/loadgen.py, raw)
- action humans   the same on games of 4 human seats and no bot, the client acting for the
                  seat whose turn it is: one engine move per request, the service's own
                  cost per action (what the write ceiling stands for: it plays no game)

Besides requests/s and p50/p99 latency it samples the CPU each party used during the window
(server processes, load generator, redis-server, and everyone else on the machine), since on a
small machine they all share the same cores. It also prints the bytes one live game in
mid-play takes in Redis (state hash and event log apart) and how fast httpx's AsyncClient
is as a load generator (`--no-client-check` skips that), which is why `bench/loadgen.py` uses
a minimal asyncio HTTP/1.1 client by default.

Every process it starts runs in its own process group and is stopped on exit (Ctrl-C too);
the Redis keys it wrote (games it created, ceiling keys) are deleted.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import platform
import random
import re
import resource
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import httpx
import redis

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
CLK = os.sysconf("SC_CLK_TCK")
CEILING_PREFIX = "{bench:ceil}:"
IDS_DIR = Path(tempfile.mkdtemp(prefix="bench-http-ids-"))  # game ids the loadgens created
# infra/queues.py: finished games waiting for the archive
ARCHIVE_QUEUE = ("{ten:q:archive}:jobs", "{ten:q:archive}:token", "{ten:q:archive}:fails")
ARCHIVE_DUE = "{ten:q:archive}:due"
_ids_files = itertools.count()
_started: list[subprocess.Popen] = []


# ---------------------------------------------------------------- processes


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def spawn(cmd: list[str], env: dict[str, str] | None = None, **kw) -> subprocess.Popen:
    """A child in its own process group (Ctrl-C does not reach it; `stop` ends the group)."""
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, start_new_session=True, **kw)
    _started.append(proc)
    return proc


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    else:  # the leader is gone: make sure no worker of its group is left
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    if proc in _started:
        _started.remove(proc)


JOB_PIDS: list[
    int
] = []  # `--job-process`: the `service.entrypoints.cli work` process (its CPU apart)


def stop_all() -> None:
    for proc in list(reversed(_started)):
        stop(proc)


def uvicorn_cmd(app: str, port: int, workers: int) -> list[str]:
    return [
        PY, "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(port),
        "--workers", str(workers), "--loop", "uvloop", "--http", "httptools",
        "--log-level", "warning", "--no-access-log",
    ]  # fmt: skip


class Server:
    """A uvicorn process; its output goes to a temporary log, shown if it fails or logs errors."""

    def __init__(self, name: str, app: str, workers: int, env: dict[str, str]) -> None:
        self.name, self.port = name, free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        proc_env = {k: v for k, v in os.environ.items() if not k.startswith(("TEN_", "CEILING_"))}
        proc_env.update(env)
        self.env = proc_env
        self.cmd = uvicorn_cmd(app, self.port, workers)
        self.log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - open while the server runs
            prefix=f"bench-{name}-", suffix=".log", delete=False
        )
        self.proc = spawn(self.cmd, proc_env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{name} exited with {self.proc.returncode}:\n{self.log_text()}")
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{self.base}/health", timeout=1).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not start in 30 s:\n{self.log_text()}")
            time.sleep(0.1)
        time.sleep(0.3 * workers)  # every worker up, not just the first one to answer

    def log_text(self, limit: int = 4000) -> str:
        with open(self.log.name, errors="replace") as f:
            return f.read()[-limit:]

    def cpu_seconds(self) -> float:
        return tree_cpu_seconds(self.proc.pid)

    def close(self) -> None:
        stop(self.proc)
        self.log.close()
        text = self.log_text()
        if re.search(r"Traceback|ERROR|CRITICAL", text):
            print(f"  ({self.name} logged errors; its log: {self.log.name})")
        else:
            os.unlink(self.log.name)


# ---------------------------------------------------------------- CPU accounting


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, user + system CPU seconds) of a process, from /proc."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / CLK


def tree_cpu(root: int) -> dict[int, float]:
    """CPU seconds of a process and each of its descendants, by pid."""
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (st := _stat(int(entry))) is not None:
            stats[int(entry)] = st
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = {}, [root]
    while todo:
        pid = todo.pop()
        if pid in stats:
            found[pid] = stats[pid][1]
        todo.extend(children.get(pid, []))
    return found


def _bot_pool(pid: int) -> bool:
    """A process of the service's bot pool (infra.bot_pool: the fork server and its workers)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"multiprocessing" in f.read()
    except OSError:
        return False


def tree_cpu_seconds(root: int) -> float:
    return sum(tree_cpu(root).values())


def machine_busy_seconds() -> float:
    """CPU seconds all cores spent running processes since boot (user, nice, system: not
    idle, I/O wait, interrupts, softirqs, nor time stolen by the hypervisor)."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    return (values[0] + values[1] + values[2]) / CLK


def redis_cpu_seconds(client: redis.Redis) -> float:
    info = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


class CpuWindow:
    """CPU used by the server(s), the load generator, Redis and everyone else over a window."""

    def __init__(
        self, server: Server | list[Server], client_pids: list[int], rclient: redis.Redis
    ) -> None:
        self.servers = server if isinstance(server, list) else [server]
        self.client_pids, self.rclient = client_pids, rclient

    def sample(self) -> tuple:
        server = {}
        for one in self.servers:
            server.update(tree_cpu(one.proc.pid))
        bots = {pid: cpu for pid, cpu in server.items() if _bot_pool(pid)}
        server = {pid: cpu for pid, cpu in server.items() if pid not in bots}
        return (
            time.monotonic(),
            sum(server.values()),
            sum(tree_cpu_seconds(p) for p in self.client_pids),
            redis_cpu_seconds(self.rclient),
            machine_busy_seconds(),
            server,
            sum(bots.values()),
            sum(tree_cpu_seconds(p) for p in JOB_PIDS),
        )

    @staticmethod
    def shares(start: tuple, end: tuple) -> dict:
        wall = end[0] - start[0]
        server, client, rds, busy = (end[i] - start[i] for i in range(1, 5))
        per_process = [  # the busy processes of the server (its workers), most used first
            (cpu - start[5].get(pid, 0.0)) / wall for pid, cpu in end[5].items()
        ]
        per_process = sorted((p for p in per_process if p > 0.02), reverse=True)
        bots = end[6] - start[6]  # a pool restarted in the window: its new processes only
        return {
            "wall": wall,
            "server_cpu_s": server,
            "bots_cpu_s": max(bots, 0.0),
            "jobs_cpu_s": end[7] - start[7],
            "server": server / wall,
            "server_processes": per_process,
            "client": client / wall,
            "redis": rds / wall,
            "others": max(0.0, busy - server - bots - client - rds) / wall,
        }


# ---------------------------------------------------------------- load generators


def percentile(sorted_values: list[int], q: float) -> float:
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def run_loadgen(
    scenario: str, url: str | list[str], server: Server | list[Server], rclient, args, *,
    client: str = "raw", procs: int = 1, duration: float | None = None,
    warmup: float | None = None, humans: int = 1,
) -> dict:  # fmt: skip
    """One closed-loop load window. Several URLs (servers): the load-generator processes take
    them in turn, each process loading one (`procs` is raised to one per URL at least)."""
    urls = [url] if isinstance(url, str) else url
    procs = max(procs, len(urls))
    duration = args.duration if duration is None else duration
    warmup = args.warmup if warmup is None else warmup
    start_at = time.time() + 0.6 + warmup  # interpreter start-up, then warm-up
    per = [args.clients // procs + (i < args.clients % procs) for i in range(procs)]
    gens, offset = [], 0
    for i, clients in enumerate(per):
        cmd = [
            PY, str(ROOT / "bench" / "loadgen.py"), scenario, urls[i % len(urls)], "--client", client,
            "--clients", str(clients), "--duration", str(duration), "--start-at", str(start_at),
            "--key-offset", str(offset), "--bots", args.bots, "--seed", str(args.seed + i),
            "--pool", str(args.pool), "--ids-file", str(IDS_DIR / f"{next(_ids_files)}.ids"),
            "--humans", str(humans), "--clock", str(args.clock),
        ]  # fmt: skip
        gens.append(spawn(cmd, stdout=subprocess.PIPE))
        offset += clients
    window = CpuWindow(server, [g.pid for g in gens], rclient)
    time.sleep(max(0.0, start_at - time.time()))
    first = window.sample()
    time.sleep(max(0.0, start_at + duration - time.time()))
    cpu = CpuWindow.shares(first, window.sample())
    results = []
    for gen in gens:
        out, _ = gen.communicate(timeout=60)
        _started.remove(gen)
        if gen.returncode != 0:
            raise RuntimeError(f"loadgen {scenario} exited with {gen.returncode}")
        results.append(json.loads(out))
    latencies = sorted(lat for r in results for lat in r["latencies_us"])
    statuses: dict[str, int] = {}
    for r in results:
        for k, v in r["statuses"].items():
            statuses[k] = statuses.get(k, 0) + v
    ok = statuses.get("200", 0)
    requests = len(latencies)
    return {
        "client": f"loadgen/{client}" + (f" x{procs}" if procs > 1 else ""),
        "requests": requests,
        "rps": requests / duration,
        "p50_ms": percentile(latencies, 0.50) / 1000,
        "p99_ms": percentile(latencies, 0.99) / 1000,
        "non_200": requests - ok,
        "statuses": statuses,
        "errors": sum(sum(r["errors"].values()) for r in results),
        "creates": sum(r["creates"] for r in results),
        "finished_games": sum(r["finished_games"] for r in results),
        "reply_bytes": sum(r["reply_bytes"] for r in results) / max(requests, 1),
        "client_cpu_s": sum(r["client_cpu_s"] for r in results),
        "game_ids": [g for r in results for g in r["game_ids"]],
        "cpu": cpu,
    }


_WRK_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3}


def _wrk_ms(text: str) -> float:
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text)
    if not m:
        raise ValueError(f"wrk latency {text!r}")
    return float(m.group(1)) * _WRK_UNITS[m.group(2)]


def _children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_wrk(url: str, server: Server, rclient, args) -> dict:
    base = ["wrk", "-t1", f"-c{args.clients}", "--timeout", "10s", "--latency", url]
    warm = spawn([*base[:1], f"-d{max(1, round(args.warmup))}s", *base[1:]], stdout=subprocess.PIPE)
    warm.communicate()
    _started.remove(warm)
    children_cpu = _children_cpu_seconds()
    proc = spawn(
        [*base[:1], f"-d{round(args.duration)}s", *base[1:]], stdout=subprocess.PIPE, text=True
    )
    window = CpuWindow(server, [], rclient)
    first = window.sample()
    time.sleep(args.duration - 0.05)
    last = window.sample()  # before wrk exits: the server is still under load
    out, _ = proc.communicate()
    _started.remove(proc)
    wrk_cpu = _children_cpu_seconds() - children_cpu  # wrk is reaped: its rusage
    cpu = CpuWindow.shares(first, last)
    cpu["client"] = wrk_cpu / args.duration
    cpu["others"] = max(0.0, cpu["others"] - cpu["client"])
    requests = int(re.search(r"(\d+) requests in ([\d.]+)(\w+)", out).group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    sock_errors = re.search(r"Socket errors: (.*)", out)
    return {
        "client": "wrk -t1",
        "requests": requests,
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
        "p50_ms": _wrk_ms(re.search(r"\s50%\s+(\S+)", out).group(1)),
        "p99_ms": _wrk_ms(re.search(r"\s99%\s+(\S+)", out).group(1)),
        "non_200": int(non2xx.group(1)) if non2xx else 0,
        "errors": sock_errors.group(1) if sock_errors else 0,
        "client_cpu_s": cpu["client"] * cpu["wall"],
        "cpu": cpu,
    }


# ---------------------------------------------------------------- the game under test


def create_game(base: str, bots: str) -> tuple[str, str, dict]:
    players = [{"name": "bench"}] + [{"name": f"bot{i}", "bot": bots} for i in range(3)]
    r = httpx.post(f"{base}/v1/games", json={"players": players}, timeout=10)
    r.raise_for_status()
    game = r.json()
    return game["id"], game["seats"][0]["token"], game


def mid_play_game(base: str, bots: str, seed: int) -> dict:
    """A 4-player game (1 human, 3 bots) played by random legal actions until half of the
    draw pile is gone; the sizes of its replies on the way."""
    rng = random.Random(seed)
    with httpx.Client(base_url=base, timeout=10) as client:
        for _ in range(20):  # a game that ends early (rare) is replaced
            game_id, token, _ = create_game(base, bots)
            headers = {"Authorization": f"Bearer {token}"}
            view = client.get(f"/v1/games/{game_id}", headers=headers).json()
            start, action_sizes = view["draw_pile_size"], []
            while view["status"] != "finished" and view["draw_pile_size"] > start // 2:
                r = client.post(
                    f"/v1/games/{game_id}/actions",
                    json=rng.choice(view["legal_actions"]),
                    headers=headers,
                )
                r.raise_for_status()
                action_sizes.append(len(r.content))
                view = r.json()
            if view["status"] != "finished":
                break
        get = client.get(f"/v1/games/{game_id}")
        return {
            "id": game_id,
            "version": view["version"],
            "draw_pile": (start, view["draw_pile_size"]),
            "actions": len(action_sizes),
            "get_bytes": len(get.content),
            "action_bytes": round(sum(action_sizes) / len(action_sizes)),
        }


def game_keys(game_id: str) -> list[str]:
    tag = f"{{game:{game_id}}}"
    return [tag, f"{tag}:log", f"{tag}:idem"]


def delete_keys(rclient: redis.Redis, keys: list[str]) -> None:
    for i in range(0, len(keys), 500):
        rclient.delete(*keys[i : i + 500])


def clean_up(rclient: redis.Redis, keys_to_delete: list[str]) -> None:
    """Delete the keys and the games the benchmark made (also those of a load generator cut
    short, from the ids files), their outbox entries and the temporary directory."""
    game_ids = {k[6:-1] for k in keys_to_delete if k.startswith("{game:") and k.endswith("}")}
    for path in IDS_DIR.glob("*.ids"):
        game_ids.update(path.read_text().split())
    keys = keys_to_delete + [k for g in game_ids for k in game_keys(g)]
    shutil.rmtree(IDS_DIR, ignore_errors=True)  # the ids and the temporary archive
    with contextlib.suppress(redis.RedisError):
        delete_keys(rclient, sorted(set(keys)))
        ids = sorted(game_ids)
        for i in range(0, len(ids), 500):  # finished games not archived yet
            for key in ARCHIVE_QUEUE:
                rclient.hdel(key, *ids[i : i + 500])
            rclient.zrem(ARCHIVE_DUE, *ids[i : i + 500])
    rclient.close()


@contextlib.contextmanager
def bench_session(redis_url: str, keys_to_delete: list[str]) -> Iterator[redis.Redis]:
    """The frame of a benchmark run: a client on its Redis, the command and machine facts
    printed first, the run time last; on the way out (Ctrl-C and SIGTERM too) every process
    started is stopped and the keys in `keys_to_delete` (filled in meanwhile) deleted."""

    def on_signal(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)  # also when started with SIGINT ignored (`cmd &`)
    began = time.monotonic()
    rclient = redis.Redis.from_url(redis_url, socket_connect_timeout=2)
    rclient.ping()
    try:
        print("command: " + shlex.join([Path(sys.executable).name, *sys.argv]))
        for line in machine_facts(rclient):
            print(line)
        others = idle_check()
        print(f"CPU busy before start (other processes): {others * 100:.0f}% of one core")
        if others > 0.25:
            print("  WARNING: the machine is not idle; every figure below is lowered by that load")
        yield rclient
        print(f"total run time {time.monotonic() - began:.0f} s")
    except KeyboardInterrupt:
        print("\ninterrupted: stopping the processes", file=sys.stderr)
        raise SystemExit(130) from None
    finally:
        stop_all()
        clean_up(rclient, keys_to_delete)


# ---------------------------------------------------------------- report


def machine_facts(rclient: redis.Redis) -> list[str]:
    model = "?"
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    versions = []
    for pkg in (
        "litestar",
        "uvicorn",
        "uvloop",
        "httptools",
        "msgspec",
        "redis",
        "hiredis",
        "httpx",
    ):
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions.append(f"{pkg} {metadata.version(pkg)}")
    info = rclient.info("server")
    mem_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    wrk = shutil.which("wrk")
    return [
        f"machine: {os.cpu_count()} logical cores ({len(os.sched_getaffinity(0))} usable), "
        f"{model}, {mem_gb:.0f} GiB, {platform.system()} {platform.release()}",
        f"python {platform.python_version()}; " + ", ".join(versions),
        f"redis-server {info['redis_version']} at {rclient.connection_pool.connection_kwargs.get('host')}"
        f":{rclient.connection_pool.connection_kwargs.get('port')}; wrk: {wrk or 'not installed'}",
        "load average at start: " + " ".join(f"{v:.2f}" for v in os.getloadavg()),
        code_version(),
    ]


def code_version() -> str:
    """The commit under test and the files of the app changed since (read-only git calls)."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    try:
        head = subprocess.run(
            ["git", "log", "-1", "--format=%h %cd", "--date=format:%Y-%m-%d %H:%M"],
            cwd=ROOT, env=env, capture_output=True, text=True, check=True, timeout=10,
        ).stdout.strip()  # fmt: skip
        changed = subprocess.run(
            ["git", "diff", "--name-only", "HEAD", "--", "domain", "service", "infra"],
            cwd=ROOT, env=env, capture_output=True, text=True, check=True, timeout=10,
        ).stdout.split()  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return "code: (git not available)"
    return f"code: commit {head}" + (
        f"; uncommitted changes in {', '.join(changed)}" if changed else ", no local changes"
    )


def idle_check(seconds: float = 1.0) -> float:
    """Cores' worth of CPU that other processes use right now (before anything starts)."""
    start, t0 = machine_busy_seconds(), time.monotonic()
    time.sleep(seconds)
    return (machine_busy_seconds() - start) / (time.monotonic() - t0)


def us_per_request(r: dict) -> float:
    return r["cpu"]["server_cpu_s"] / r["requests"] * 1e6 if r["requests"] else float("nan")


def fmt_row(name: str, r: dict) -> str:
    c = r["cpu"]
    us_per_req = us_per_request(r)
    mark = "*" if c["others"] > 0.25 else " "
    return (
        f"{mark}{name:<15} {r['client']:<13} {r['rps']:>8.0f} {r['p50_ms']:>7.2f} {r['p99_ms']:>7.2f} "
        f"{r['non_200']:>7} {c['server'] * 100:>6.0f}% {us_per_req:>7.0f} "
        f"{c['bots_cpu_s'] / max(r['requests'], 1) * 1e6:>7.0f} "
        f"{c['jobs_cpu_s'] / max(r['requests'], 1) * 1e6:>7.0f} "
        f"{c['client'] * 100:>6.0f}% {c['redis'] * 100:>6.0f}% {c['others'] * 100:>6.0f}%"
    )


HEADER = (
    f" {'scenario':<15} {'client':<13} {'req/s':>8} {'p50 ms':>7} {'p99 ms':>7} {'non-200':>7} "
    f"{'server':>7} {'us/req':>7} {'bots us':>7} {'jobs us':>7} {'client':>7} {'redis':>7} {'others':>7}"
)
CPU_NOTE = (
    "CPU columns: share of one core used during the window by the server processes, the load "
    "generator, redis-server and every other process on the machine (* = others above 25%: "
    "that row was measured on a busy machine); us/req = server CPU microseconds per request (the "
    "serving processes), bots us = the bot pool's (TEN_BOT_WORKERS) per request, jobs us = "
    "the `service.entrypoints.cli work` process's (--job-process) per request."
)


# ---------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/15")
    parser.add_argument("--workers", default="1,2", help="uvicorn worker counts, e.g. 1 or 1,2")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per scenario")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds before each window")
    parser.add_argument("--clients", type=int, default=64, help="concurrent connections")
    parser.add_argument("--procs", type=int, default=1, help="load-generator processes (POST)")
    parser.add_argument("--rounds", type=int, default=1, help="repeat the scenarios; medians")
    parser.add_argument("--pool", type=int, default=5, help="games made ahead per action client")
    parser.add_argument("--bots", default="random", help="level of the 3 bot seats")
    parser.add_argument(
        "--clock", type=float, default=0.0, help="games with a bank clock of this many s (0: none)"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-wrk", action="store_true", help="loadgen for GETs too")
    parser.add_argument(
        "--service-env", action="append", default=[], metavar="TEN_X=value",
        help="a setting for the service processes (repeatable), e.g. TEN_METRICS=false",
    )  # fmt: skip
    parser.add_argument(
        "--job-process", action="store_true",
        help="the queues' workers (archive, relay, webhooks) in a `service.entrypoints.cli work` process "
        "of their own, the service with TEN_JOB_WORKERS=false",
    )  # fmt: skip
    parser.add_argument("--no-client-check", action="store_true", help="skip the httpx check")
    args = parser.parse_args()
    worker_counts = [int(w) for w in args.workers.split(",")]
    use_wrk = not args.no_wrk and shutil.which("wrk") is not None

    keys_to_delete: list[str] = [f"{CEILING_PREFIX}{n}" for n in range(args.clients)]
    results: dict[int, dict[str, dict]] = {}
    with bench_session(args.redis_url, keys_to_delete) as rclient:
        print(
            f"Redis {args.redis_url}; archive: a temporary SQLite file (finished games archived "
            "by the workers)"
        )
        print(
            f"settings: {args.clients} clients, keep-alive HTTP/1.1 on loopback, {args.warmup:g} "
            f"s warm-up + {args.duration:g} s per scenario; uvicorn --loop uvloop --http "
            f"httptools --no-access-log; bots: {args.bots}"
        )
        archive = IDS_DIR / "archive.sqlite3"
        env = {
            "TEN_REDIS_URL": args.redis_url,
            "TEN_DATABASE_URL": f"sqlite+aiosqlite:///{archive}",
            "TEN_MIGRATE_ON_START": "true",
            **({"TEN_JOB_WORKERS": "false"} if args.job_process else {}),
            **dict(item.split("=", 1) for item in args.service_env),
        }
        for w_index, workers in enumerate(worker_counts):
            service = Server("service", "service.app:app", workers, env)
            if args.job_process:
                jobs = spawn([PY, "-m", "service.cli", "work"], service.env)
                JOB_PIDS[:] = [jobs.pid]
            if w_index == 0:
                game = mid_play_game(service.base, args.bots, args.seed)
                keys_to_delete += game_keys(game["id"])
                state_key, log_key, _ = game_keys(game["id"])
                blob = rclient.hget(state_key, "rec")
                version = rclient.hget(state_key, "v")
                mem_state = rclient.memory_usage(state_key, samples=0)
                mem_log = rclient.memory_usage(log_key, samples=0)
                events = rclient.xlen(log_key)
                pipe = rclient.pipeline(transaction=False)
                for n in range(args.clients):
                    pipe.hset(f"{CEILING_PREFIX}{n}", mapping={"v": version, "rec": blob})
                pipe.execute()
                print()
                print(
                    f"game in mid-play: {game['id']}, 4 players (1 human, 3 {args.bots} bots), "
                    f"version {game['version']}, draw pile {game['draw_pile'][0]} -> "
                    f"{game['draw_pile'][1]} after {game['actions']} human actions"
                )
                print(
                    f"Redis memory of that game: state {mem_state} B (MEMORY USAGE {state_key}; "
                    f"goal < 4096 B: {'met' if mem_state < 4096 else 'NOT met'}), event log "
                    f"{mem_log} B ({log_key}, {events} events, {mem_log / max(events, 1):.0f} B/event)"
                )
                print(
                    f"sizes: stored record {len(blob)} B msgpack; GET reply {game['get_bytes']} B; "
                    f"action reply {game['action_bytes']} B (mean of the set-up actions); ceiling "
                    "replies padded to the same sizes"
                )
            ceiling_env = {
                **env,
                "CEILING_READ_BYTES": str(game["get_bytes"]),
                "CEILING_WRITE_BYTES": str(game["action_bytes"]),
            }
            ceiling = Server("ceiling", "bench.ceiling_app:app", workers, ceiling_env)
            if w_index == 0:
                sizes = (
                    len(httpx.get(f"{ceiling.base}/ceiling/read/0").content),
                    len(httpx.post(f"{ceiling.base}/ceiling/write/0").content),
                )
                print(f"ceiling reply sizes: read {sizes[0]} B, write {sizes[1]} B")
                if not args.no_client_check:
                    print()
                    print("load-generator check (ceiling read, 1 worker, 2 s, one client process):")
                    for kind in ("httpx", "raw"):
                        r = run_loadgen(
                            "get", f"{ceiling.base}/ceiling/read/0", ceiling, rclient, args,
                            client=kind, duration=2, warmup=1,
                        )  # fmt: skip
                        print(
                            f"  {kind:<6} {r['rps']:>7.0f} req/s, client process "
                            f"{r['cpu']['client'] * 100:>3.0f}% CPU "
                            f"({r['client_cpu_s'] / max(r['requests'], 1) * 1e6:>5.0f} us/req), "
                            f"server {r['cpu']['server'] * 100:>3.0f}% CPU"
                        )
                    print(
                        "  (wrk is used for the GETs, loadgen/raw for the POSTs: see the client "
                        "column)"
                        if use_wrk
                        else "  (loadgen/raw is used for every scenario)"
                    )
            read_target = f"/v1/games/{game['id']}"
            runs: dict[str, list[dict]] = {}
            for _ in range(args.rounds):
                for name, server, kind, target, humans in (
                    ("read ceiling", ceiling, "get", "/ceiling/read/0", 1),
                    ("read service", service, "get", read_target, 1),
                    ("write ceiling", ceiling, "write", "", 1),
                    ("action service", service, "act", "", 1),
                    ("action humans", service, "act", "", 4),
                ):
                    if kind == "get" and use_wrk:
                        row = run_wrk(server.base + target, server, rclient, args)
                    else:
                        row = run_loadgen(
                            kind, server.base + target, server, rclient, args, procs=args.procs,
                            humans=humans,
                        )  # fmt: skip
                        keys_to_delete += [k for g in row["game_ids"] for k in game_keys(g)]
                    runs.setdefault(name, []).append(row)
            # the round with the median req/s of each scenario
            rows = {
                name: sorted(rs, key=lambda r: r["rps"])[len(rs) // 2] for name, rs in runs.items()
            }
            results[workers] = rows
            service.close()
            ceiling.close()
            for proc in list(_started):
                if proc.pid in JOB_PIDS:
                    stop(proc)
            print()
            rounds = f", median of {args.rounds} rounds" if args.rounds > 1 else ""
            print(f"uvicorn --workers {workers}{rounds}:")
            print(HEADER)
            for name, row in rows.items():
                print(fmt_row(name, row))
            if workers > 1:
                print(
                    "  CPU of each busy server process: "
                    + "; ".join(
                        f"{name} "
                        + "/".join(f"{p * 100:.0f}%" for p in row["cpu"]["server_processes"])
                        for name, row in rows.items()
                    )
                )
            if args.rounds > 1:
                for name, rs in runs.items():
                    print(f"  {name} req/s per round: " + ", ".join(f"{r['rps']:.0f}" for r in rs))
            act, humans = rows["action service"], rows["action humans"]
            for label, row in (("action service", act), ("action humans", humans)):
                print(
                    f"  {label}: {row['statuses']} statuses, {row['errors']} errors; "
                    f"{row['finished_games']} games finished, {row['creates']} created in the "
                    f"window (creates and the one GET per new game are not in the figures); "
                    f"replies {row['reply_bytes']:.0f} B on average"
                )
            print(f"  write ceiling replies {rows['write ceiling']['reply_bytes']:.0f} B")
            write = rows["write ceiling"]
            read_ratio = rows["read service"]["rps"] / rows["read ceiling"]["rps"]
            print(
                f"  service / ceiling in req/s: read {read_ratio * 100:.0f}% (goal >= 80%); "
                f"action {act['rps'] / write['rps'] * 100:.0f}% with 3 bots' moves in each, "
                f"{humans['rps'] / write['rps'] * 100:.0f}% humans only (goal >= 80%)"
            )
            cpu_read = us_per_request(rows["read ceiling"]) / us_per_request(rows["read service"])
            print(
                f"  the same from server CPU per request (less sensitive to other load): read "
                f"{cpu_read * 100:.0f}%; action {us_per_request(write) / us_per_request(act) * 100:.0f}%"
                f" with bots, {us_per_request(write) / us_per_request(humans) * 100:.0f}% humans only"
            )
        print()
        print(CPU_NOTE)


if __name__ == "__main__":
    main()
