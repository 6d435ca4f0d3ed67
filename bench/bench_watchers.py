"""Event streams at scale (issue 15): thousands of SSE streams on one service process.

Starts its own redis-server (or a 3-node Cluster with `--cluster`) and one service process
(`uvicorn service.app:app`, one worker), creates `--games` two-seat games, opens `--streams`
streams (stream i follows game i mod games) from this one client process (raw asyncio
sockets: HTTP/1.1, chunked, SSE parsed by hand), then plays actions at `--rate` per second for
`--seconds` and prints:
- streams opened, refused (status, problem code, Retry-After), ended early;
- every stream got every event of its game in order, once (checked against the log);
- the delay from an action's response (at the player) to its events at the watchers,
  p50/p99/max over every (stream, event) pair;
- the service's memory per stream (RSS after the streams opened minus before, / streams);
- the Redis connections (`connected_clients`, every node, minus this call's own) and the
  Pub/Sub ones (`CLIENT LIST TYPE pubsub`);
- reads and actions per second of `--probe` closed-loop clients before the streams open and
  after the play, the streams still open (the ratio: what they cost the rest of the API);
- tracebacks in the service's log.

`--ask N --cap C`: ask N streams of a process capped at C (TEN_SSE_MAX_STREAMS); `--restart`:
stop Redis mid-play, start it again, reconnect every ended stream with Last-Event-ID.
Bounded: every wait has a deadline, and the script stops its servers whatever happens.

    .venv/bin/python bench/bench_watchers.py --streams 10000 --games 100
    .venv/bin/python bench/bench_watchers.py --streams 2000 --games 100 --cluster
    .venv/bin/python bench/bench_watchers.py --streams 10000 --ask 20000 --cap 10000
    .venv/bin/python bench/bench_watchers.py --streams 5000 --games 100 --restart
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import re
import resource
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.servers import RedisClusterNodes, RedisServer, ServiceProcess, redis_connections

_ID = re.compile(rb"^id: (\d+)\r\n", re.M)
OPEN_AT_ONCE = 200  # connections being opened concurrently


class SSE(asyncio.Protocol):
    """One stream on a raw socket: the status, then the chunked body parsed into SSE blocks;
    every event's seq and arrival time kept."""

    def __init__(self, game: str, path: str, last: int | None = None) -> None:
        self.game, self.path, self.last = game, path, last
        self.head = True
        self.status = 0
        self.headers = b""
        self.buf = bytearray()
        self.body = bytearray()
        self.size = -1
        self.seqs: list[int] = []
        self.arrived: list[float] = []
        self.reconnect: str | None = None
        self.started = asyncio.get_running_loop().create_future()
        self.closed = asyncio.Event()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport) -> None:
        self.transport = transport
        resume = "" if self.last is None else f"Last-Event-ID: {self.last}\r\n"
        transport.write(f"GET {self.path} HTTP/1.1\r\nHost: bench\r\n{resume}\r\n".encode())

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        self.buf += data
        if self.head:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            self.status = int(self.buf[9:12])
            self.headers = bytes(self.buf[:end])
            del self.buf[: end + 4]
            self.head = False
            if self.status != 200:
                self.started.set_result(self.status)
                self.transport.close()
                return
        self._chunks()
        self._blocks(now)

    def _chunks(self) -> None:
        buf = self.buf
        while True:
            if self.size < 0:
                end = buf.find(b"\r\n")
                if end < 0:
                    return
                self.size = int(buf[:end], 16)
                del buf[: end + 2]
            if len(buf) < self.size + 2:
                return
            self.body += buf[: self.size]
            del buf[: self.size + 2]
            self.size = -1

    def _blocks(self, now: float) -> None:
        end = self.body.rfind(b"\r\n\r\n")
        if end < 0:
            return
        done = bytes(self.body[: end + 4])
        del self.body[: end + 4]
        for match in _ID.finditer(done):
            self.seqs.append(int(match.group(1)))
            self.arrived.append(now)
        if b"event: reconnect" in done:
            self.reconnect = json.loads(
                done.split(b"event: reconnect\r\ndata: ")[1].split(b"\r\n")[0]
            )["reason"]
        if not self.started.done():
            self.started.set_result(200)

    def connection_lost(self, exc) -> None:
        if not self.started.done():
            self.started.set_result(-1)
        self.closed.set()


async def open_streams(port: int, games: list[dict], count: int, after=None) -> list[SSE]:
    loop = asyncio.get_running_loop()
    gate = asyncio.Semaphore(OPEN_AT_ONCE)

    async def one(i: int) -> SSE:
        game = games[i % len(games)]["id"]
        path = f"/v1/games/{game}/events/stream"
        async with gate:
            stream = SSE(game, path)
            try:
                await loop.create_connection(lambda: stream, "127.0.0.1", port)
                await asyncio.wait_for(asyncio.shield(stream.started), 60)
            except (OSError, TimeoutError):
                stream.status = -1
            return stream

    return await asyncio.gather(*(one(i) for i in range(count)))


class Player:
    """Plays the games: the seat to act reads its legal actions (a read), then acts."""

    def __init__(self, http: httpx.AsyncClient, games: list[dict]) -> None:
        self.http, self.games = http, games
        # seq -> when the action that made it was sent, and when its response came
        self.acked: dict[str, dict[int, tuple[float, float]]] = {g["id"]: {} for g in games}
        self.reads: list[float] = []
        self.acts: list[float] = []
        self.failed = 0
        self.rng = random.Random(15)

    async def step(self, game: dict) -> None:
        if game.get("status") == "finished":
            return
        token = game["tokens"][game["to_act"]]
        headers = {"Authorization": f"Bearer {token}"}
        start = time.perf_counter()
        view = await self.http.get(f"/v1/games/{game['id']}", headers=headers)
        self.reads.append(time.perf_counter() - start)
        if view.status_code != 200:
            self.failed += 1
            return
        seen = view.json()
        if not seen["legal_actions"]:  # not this seat's turn any more
            game["to_act"], game["status"] = seen["to_act"], seen["status"]
            return
        action = self.rng.choice(seen["legal_actions"])
        key = {"Idempotency-Key": f"{game['id']}-{seen['version']}"}
        for _ in range(30):  # a Redis restart: the same key until it is answered
            start = time.perf_counter()
            try:
                acted = await self.http.post(
                    f"/v1/games/{game['id']}/actions", json=action, headers={**headers, **key}
                )
            except httpx.TransportError:
                acted = None
            now = time.perf_counter()
            if acted is not None and acted.status_code == 200:
                break
            self.failed += 1
            await asyncio.sleep(0.5)
        else:
            return
        self.acts.append(now - start)
        body = acted.json()
        game["to_act"], game["status"] = body["to_act"], body["status"]
        for event in body["events"]:
            self.acked[game["id"]].setdefault(event["seq"], (start, now))

    async def play(self, rate: float, seconds: float, workers: int = 8) -> None:
        order = list(self.games)
        deadline = time.perf_counter() + seconds
        interval = workers / rate

        async def worker(w: int) -> None:
            mine = order[w::workers]  # each game played by one worker
            i = 0
            while mine and time.perf_counter() < deadline:
                tick = time.perf_counter()
                await self.step(mine[i % len(mine)])
                i += 1
                await asyncio.sleep(max(0.0, interval - (time.perf_counter() - tick)))

        await asyncio.gather(*(worker(w) for w in range(workers)))


async def probe(base: str, games: list[dict], seconds: float, clients: int) -> tuple[float, float]:
    """Closed-loop reads and actions per second (`clients` each), on games of their own."""
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        own = [await create_game(http) for _ in range(clients)]
        player = Player(http, own)
        deadline = time.perf_counter() + seconds

        async def loop_reads(game: dict) -> int:
            n = 0
            while time.perf_counter() < deadline:
                await http.get(f"/v1/games/{game['id']}")
                n += 1
            return n

        async def loop_acts(game: dict) -> int:
            n = 0
            while time.perf_counter() < deadline and game.get("status") != "finished":
                await player.step(game)
                n += 1
            return n

        reads = sum(await asyncio.gather(*(loop_reads(g) for g in own)))
        deadline = time.perf_counter() + seconds
        acts = sum(await asyncio.gather(*(loop_acts(g) for g in own)))
    return reads / seconds, acts / seconds


async def create_game(http: httpx.AsyncClient) -> dict:
    created = await http.post("/v1/games", json={"players": [{"name": "a"}, {"name": "b"}]})
    assert created.status_code == 201, created.text
    body = created.json()
    return {
        "id": body["id"],
        "tokens": {s["seat"]: s["token"] for s in body["seats"]},
        "to_act": body["to_act"],
        "status": body["status"],
    }


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def percentiles(values: list[float]) -> str:
    if not values:
        return "none"
    values = sorted(values)
    at = lambda q: values[min(len(values) - 1, int(q * len(values)))] * 1000  # noqa: E731
    return f"p50 {at(0.5):.1f} ms, p99 {at(0.99):.1f} ms, max {values[-1] * 1000:.1f} ms"


def check_streams(streams: list[SSE], logs: dict[str, list[int]]) -> tuple[int, list[str]]:
    """Streams that got exactly their game's log, in order, once; what went wrong else."""
    ok, wrong = 0, []
    for s in streams:
        if s.seqs == logs[s.game]:
            ok += 1
        elif len(wrong) < 5:
            wrong.append(f"{s.game}: got {len(s.seqs)} events, log {len(logs[s.game])}")
    return ok, wrong


def delays(streams: list[SSE], player: Player, which: int) -> list[float]:
    """Event at the watcher minus the action's request sent (0) or its response (1)."""
    found = []
    for s in streams:
        acked = player.acked[s.game]
        for seq, at in zip(s.seqs, s.arrived, strict=True):
            if seq in acked:
                found.append(at - acked[seq][which])
    return found


async def logs_of(http: httpx.AsyncClient, games: list[dict]) -> dict[str, list[int]]:
    found = {}
    for game in games:
        for _ in range(40):  # a 503 on a pooled connection Redis dropped: again
            response = await http.get(f"/v1/games/{game['id']}/events", params={"limit": 1000})
            if response.status_code == 200:
                break
            await asyncio.sleep(0.25)
        found[game["id"]] = [e["seq"] for e in response.json()["events"]]
    return found


async def restart(args, redis: RedisServer, streams: list[SSE]) -> None:
    """Stop Redis a third into the play, start it again two seconds later."""
    await asyncio.sleep(args.seconds / 3)
    stopped = time.perf_counter()
    await asyncio.to_thread(redis.shutdown)
    await asyncio.sleep(2)
    ended = sum(s.closed.is_set() for s in streams)
    reasons: dict[str, int] = {}
    for s in streams:
        reasons[str(s.reconnect)] = reasons.get(str(s.reconnect), 0) + 1
    await asyncio.to_thread(redis.start)
    print(
        f"Redis stopped for {time.perf_counter() - stopped:.1f} s: {ended} of {len(streams)} "
        f"streams ended by then, their last events {reasons}"
    )


async def resume(parts: list[SSE], port: int, gate: asyncio.Semaphore) -> None:
    """Reconnect the stream `parts[0]` with Last-Event-ID each time it ends early (after 2-6
    s, as the `retry` it was told), each reconnection appended to `parts`."""
    stream = parts[0]
    loop = asyncio.get_running_loop()
    while True:
        await parts[-1].closed.wait()
        if parts[-1].reconnect is None:
            return  # ended after game_finished
        await asyncio.sleep(random.uniform(2, 6))
        seen = [seq for part in parts for seq in part.seqs]
        again = SSE(stream.game, stream.path, seen[-1] if seen else None)
        async with gate:
            with contextlib.suppress(OSError):
                await loop.create_connection(lambda s=again: s, "127.0.0.1", port)
            await asyncio.wait_for(asyncio.shield(again.started), 60)
        if again.status == 200:
            parts.append(again)


async def run(args) -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    print(
        f"open files: {hard}; streams {args.streams}, asked {args.ask or args.streams}, "
        f"games {args.games}, cap {args.cap}, {'cluster' if args.cluster else 'standalone'}"
    )
    tmp = Path(tempfile.mkdtemp(prefix="ten-bench-watchers-"))
    cluster = RedisClusterNodes() if args.cluster else None
    redis = None if cluster else RedisServer("--appendonly", "yes", "--appendfsync", "always")
    nodes = cluster.nodes if cluster else [redis]
    env = {
        "TEN_REDIS_URL": cluster.url if cluster else redis.url,
        "TEN_DATABASE_URL": f"sqlite+aiosqlite:///{tmp / 'archive.sqlite3'}",
        "TEN_MIGRATE_ON_START": "true",
        "TEN_SSE_MAX_STREAMS": str(args.cap),
        "TEN_SSE_MAX_PER_CLIENT": "0",
        "TEN_LOG_FORMAT": "json",
        "TEN_IDLE_TTL": "86400",
    }
    if cluster:
        env["TEN_REDIS_CLUSTER"] = "true"
    service = ServiceProcess(env, stdout=tmp / "service.log")
    try:
        await scenario(args, service, nodes, redis)
    finally:
        service.stop()
        if cluster:
            cluster.close()
        else:
            redis.close()
        log = service.log()
        print(
            f"service log: {log.count('Traceback')} tracebacks, "
            f"{log.count('event streams: the game store is unavailable')} store-failure lines, "
            f"{len(log.splitlines())} lines"
        )


async def scenario(args, service: ServiceProcess, nodes, redis) -> None:
    port = int(service.base.rsplit(":", 1)[1])
    async with httpx.AsyncClient(base_url=service.base, timeout=60) as http:
        games = [await create_game(http) for _ in range(args.games)]
        base_reads, base_acts = await probe(service.base, games, args.probe_seconds, args.probe)
        print(
            f"without streams: {base_reads:,.0f} reads/s, {base_acts:,.0f} actions/s "
            f"({args.probe} closed-loop clients)"
        )
        before = rss_kb(service.proc.pid)
        t0 = time.perf_counter()
        asked = await open_streams(port, games, args.ask or args.streams)
        opened = [s for s in asked if s.status == 200]
        refused = [s for s in asked if s.status not in (200, -1)]
        print(
            f"{len(asked)} streams asked in {time.perf_counter() - t0:.1f} s: {len(opened)} "
            f"open, {len(refused)} refused, {sum(s.status == -1 for s in asked)} failed to connect"
        )
        if refused:
            kinds: dict[str, int] = {}
            for s in refused:
                retry = b"retry-after" in s.headers.lower()
                problem = b"application/problem+json" in s.headers
                key = f"{s.status} problem+json={problem} Retry-After={retry}"
                kinds[key] = kinds.get(key, 0) + 1
            print(f"  refusals: {kinds}")
        await asyncio.sleep(1)
        after = rss_kb(service.proc.pid)
        print(
            f"service RSS {before / 1024:.0f} MiB -> {after / 1024:.0f} MiB: "
            f"{(after - before) / max(len(opened), 1):.1f} KiB per stream"
        )
        total, pubsub = redis_connections(nodes)
        print(
            f"Redis connections with the streams open: {total} (pubsub {pubsub}), over "
            f"{len(nodes)} node(s), this script's probes included"
        )
        player = Player(http, games)
        if args.restart:
            gate = asyncio.Semaphore(OPEN_AT_ONCE)
            clients = [[s] for s in opened]
            resumed = [asyncio.create_task(resume(parts, port, gate)) for parts in clients]
            await asyncio.gather(player.play(args.rate, args.seconds), restart(args, redis, opened))
            await asyncio.sleep(8)  # the last reconnections (retry 2-6 s) catch up
            logs = await logs_of(http, games)
            ok = reconnected = 0
            for task in resumed:
                task.cancel()
            await asyncio.gather(*resumed, return_exceptions=True)
            for parts in clients:
                ok += [q for part in parts for q in part.seqs] == logs[parts[0].game]
                reconnected += len(parts) > 1
            print(
                f"after the restart: {ok} of {len(opened)} clients have every event of their "
                f"game once, in order, across their reconnections ({reconnected} reconnected)"
            )
            print(f"actions: {len(player.acts)} acknowledged, {player.failed} tries refused or cut")
            return
        during = asyncio.create_task(probe(service.base, games, args.probe_seconds, args.probe))
        await player.play(args.rate, args.seconds)
        reads, acts = await during
        await asyncio.sleep(2)
        logs = await logs_of(http, games)
        ok, wrong = check_streams(opened, logs)
        print(
            f"played {len(player.acts)} actions in {args.seconds:.0f} s "
            f"({len(player.acts) / args.seconds:.0f}/s), {player.failed} refused"
        )
        print(
            f"streams with every event of their game once, in order: {ok} of {len(opened)} {wrong}"
        )
        print(
            f"delivery delay, action response -> event at the watcher: "
            f"{percentiles(delays(opened, player, 1))}"
        )
        print(
            f"delivery delay, action request sent -> event at the watcher: "
            f"{percentiles(delays(opened, player, 0))}"
        )
        print(
            f"player's action latency {percentiles(player.acts)}; read {percentiles(player.reads)}"
        )
        print(
            f"with streams: {reads:,.0f} reads/s ({reads / base_reads:.0%} of without), "
            f"{acts:,.0f} actions/s ({acts / base_acts:.0%})"
        )
        total, pubsub = redis_connections(nodes)
        print(f"Redis connections after the play: {total} (pubsub {pubsub})")
        for s in opened:
            s.transport.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--streams", type=int, default=10_000)
    parser.add_argument("--ask", type=int, default=0, help="streams asked (default: --streams)")
    parser.add_argument("--cap", type=int, default=10_000, help="TEN_SSE_MAX_STREAMS")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--rate", type=float, default=20.0, help="actions per second")
    parser.add_argument("--seconds", type=float, default=20.0, help="of play")
    parser.add_argument("--probe", type=int, default=4, help="closed-loop clients of the probe")
    parser.add_argument("--probe-seconds", type=float, default=3.0)
    parser.add_argument("--cluster", action="store_true")
    parser.add_argument("--restart", action="store_true")
    asyncio.run(bounded(run(parser.parse_args()), 840))


async def bounded(work, seconds: float) -> None:
    """The run, stopped after `seconds`; what every task was waiting on is printed then."""
    task = asyncio.create_task(work)
    done, _ = await asyncio.wait([task], timeout=seconds)
    if not done:
        for other in asyncio.all_tasks():
            if other is not asyncio.current_task():
                other.print_stack(limit=4)
        task.cancel()
    await asyncio.gather(task, return_exceptions=not done)


if __name__ == "__main__":
    main()
