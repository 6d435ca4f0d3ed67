"""A closed-loop HTTP/1.1 load generator (asyncio, keep-alive), one process of `bench_http.py`.

Each of `--clients` tasks holds one keep-alive connection and sends its next request as soon
as the previous reply is read. Requests that complete in the window `[--start-at,
--start-at + --duration]` (wall clock) are counted; everything before is warm-up. Prints
one JSON object on stdout: counts, statuses, latencies (us) of the window, own CPU seconds.

Scenarios (`--scenario`):
- `get URL`           GET the same URL (e.g. a game in mid-play, or the read ceiling)
- `act BASE`          each client plays its own 4-player game (1 human seat, 3 bots; with
                      `--humans 4` four human seats and no bot) through
                      `POST BASE/v1/games/{id}/actions`, picking a random action from the
                      `legal_actions` of the previous reply (with several human seats, the
                      next seat's legal actions are computed here from the reply's public
                      view, `domain.game.legal.legal_actions`, and it acts with that seat's
                      token); a finished game is replaced by one from a pool created before
                      the window (or created on the spot; creates are counted apart, never in
                      the action figures)
- `write BASE`        `POST BASE/ceiling/write/{n}`, client n on its own key (`--key-offset`)

Clients (`--client`):
- `httpx`  httpx.AsyncClient (HTTP/1.1 keep-alive), one per task
- `raw`    a minimal HTTP/1.1 client on asyncio streams (Content-Length replies only): the
           same requests for a fraction of httpx's CPU, for when httpx is the bottleneck
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository's domain/
from domain.game.engine import HIDDEN
from domain.game.legal import legal_actions
from domain.game.model import Auction, GameState
from domain.game.views import PublicView

ACTION_HEADERS = {"Content-Type": "application/json"}
_decode = msgspec.json.decode
_encode = msgspec.json.encode
IDS_FILE = None  # --ids-file: where the ids of the games created are appended


class RawConnection:
    """One keep-alive HTTP/1.1 connection; just enough protocol for this benchmark."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(
        self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
    ) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        lines = [f"{method} {path} HTTP/1.1", f"Host: {self.host}:{self.port}"]
        for name, value in (headers or {}).items():
            lines.append(f"{name}: {value}")
        if body or method == "POST":
            lines.append(f"Content-Length: {len(body)}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode()
        self.writer.write(head + body)
        assert self.reader is not None
        raw = await self.reader.readuntil(b"\r\n\r\n")
        status = int(raw[9:12])
        length = None
        close = False
        for line in raw.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            lname = name.strip().lower()
            if lname == b"content-length":
                length = int(value)
            elif lname == b"connection" and value.strip().lower() == b"close":
                close = True
        if length is None:
            raise RuntimeError("reply without Content-Length")
        data = await self.reader.readexactly(length) if length else b""
        if close:
            await self.close()
        return status, data

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None
            self.reader = None


class Client:
    """`request(conn, method, path, body, headers) -> (status, body)`; one `connection()` per
    task: a RawConnection, or an httpx.AsyncClient of one connection (one shared client with
    a pool of 64 is several times slower still: its pool bookkeeping grows with the pool)."""

    def __init__(self, kind: str, base: str) -> None:
        self.kind, self.base = kind, base
        parts = urlsplit(base)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.opened: list = []

    def connection(self):
        if self.kind == "raw":
            return RawConnection(self.host, self.port)
        import httpx

        conn = httpx.AsyncClient(
            base_url=self.base,
            http1=True,
            http2=False,
            timeout=30,
            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
        )
        self.opened.append(conn)
        return conn

    async def request(self, conn, method, path, body=b"", headers=None) -> tuple[int, bytes]:
        if self.kind == "raw":
            return await conn.request(method, path, body, headers)
        r = await conn.request(method, path, content=body or None, headers=headers)
        return r.status_code, r.content

    async def close(self) -> None:
        for conn in self.opened:
            await conn.aclose()


class Stats:
    def __init__(self, start_at: float, end_at: float) -> None:
        self.start_at, self.end_at = start_at, end_at
        self.latencies: list[int] = []
        self.statuses: Counter[int] = Counter()
        self.creates = 0
        self.create_statuses: Counter[int] = Counter()
        self.errors: Counter[str] = Counter()
        self.finished_games = 0
        self.reply_bytes = 0

    def in_window(self, now: float) -> bool:
        return self.start_at <= now <= self.end_at

    def record(self, began: float, status: int, size: int = 0) -> None:
        now = time.time()
        if self.in_window(now):
            self.latencies.append(int((now - began) * 1e6))
            self.statuses[status] += 1
            self.reply_bytes += size


CLOCK: dict | None = None  # act: the time control of the games made (--clock)


def create_body(bots: str, humans: int = 1) -> bytes:
    players = [{"name": f"human{i}"} for i in range(humans)]
    players += [{"name": f"bot{i}", "bot": bots} for i in range(4 - humans)]
    body: dict = {"players": players}
    if CLOCK is not None:
        body["clock"] = CLOCK
    return _encode(body)


def next_move(view: dict) -> tuple[int | None, list]:
    """The seat to act and its legal actions (JSON-ready), from a reply's view."""
    seat = view["to_act"]
    if seat is None or view["status"] == "finished":
        return None, []
    if view.get("seat") == seat and view.get("legal_actions") is not None:
        return seat, view["legal_actions"]
    return seat, msgspec.to_builtins(legal_actions(information_state(view), seat))


def information_state(view: dict) -> GameState:
    """The game as its players know it (`domain.game.engine.information_state`), from a
    reply's public view: what `legal_actions` reads (the pile's order is not in the view)."""
    public = msgspec.convert(view, PublicView)
    auction = public.auction
    return GameState(
        rules=public.rules,
        seed="",
        draw_pile=(HIDDEN,) * public.draw_pile_size,
        players=public.players,
        starting_seat=public.starting_seat,
        active_seat=public.active_seat,
        phase=public.phase,
        drawn=public.drawn,
        tableau=public.tableau,
        market=public.market,
        discard=public.discard,
        supply_currency=public.supply.currency,
        supply_bust=public.supply.bust,
        auction=None
        if auction is None
        else Auction(
            card=auction.card,
            bidders=auction.bidders,
            turn=auction.bidders.index(auction.to_act),
            high_bid=auction.high_bid,
            high_bidder=auction.high_bidder,
        ),
        final_queue=public.final_queue,
        version=public.version,
        results=public.results,
    )


async def create_game(client: Client, conn, stats: Stats, bots: str, ids: list[str], humans=1):
    status, data = await client.request(
        conn, "POST", "/v1/games", create_body(bots, humans), ACTION_HEADERS
    )
    if stats.in_window(time.time()):
        stats.creates += 1
        stats.create_statuses[status] += 1
    if status != 201:
        raise RuntimeError(f"create game: {status} {data[:200]!r}")
    game = _decode(data)
    ids.append(game["id"])
    if IDS_FILE is not None:  # at once: the caller deletes these games even if we are killed
        IDS_FILE.write(game["id"] + "\n")
        IDS_FILE.flush()
    return {
        "id": game["id"],
        "tokens": {s["seat"]: s["token"] for s in game["seats"]},
        "status": game["status"],
    }


async def act_client(client, n, stats, args, ids, rng) -> None:
    await asyncio.sleep(n * args.stagger)  # connect one by one: every worker gets its share
    conn = client.connection()
    pool = [
        await create_game(client, conn, stats, args.bots, ids, args.humans)
        for _ in range(args.pool)
    ]
    game = pool.pop()
    seat, legal = None, None
    while time.time() < stats.end_at:
        if game["status"] == "finished":
            stats.finished_games += 1
            game = (
                pool.pop()
                if pool
                else await create_game(client, conn, stats, args.bots, ids, args.humans)
            )
            legal = None
        if not legal:  # a fresh game: read it once (not counted)
            token = next(iter(game["tokens"].values()))
            headers = {"Authorization": f"Bearer {token}"}
            status, data = await client.request(
                conn, "GET", f"/v1/games/{game['id']}", b"", headers
            )
            if status != 200:  # gone (someone else's clean-up of a shared database?)
                stats.errors[f"GET game {status}"] += 1
                if args.verbose:
                    print(f"GET {status}: {data[:300]!r}", file=sys.stderr)
                game["status"] = "finished"
                continue
            view = _decode(data)
            game["status"] = view["status"]
            seat, legal = next_move(view)
            if not legal:
                game["status"] = "finished"
                continue
        headers = {**ACTION_HEADERS, "Authorization": f"Bearer {game['tokens'][seat]}"}
        body = _encode(rng.choice(legal))
        began = time.time()
        try:
            status, data = await client.request(
                conn, "POST", f"/v1/games/{game['id']}/actions", body, headers
            )
        except Exception as exc:  # counted, and the connection is dropped
            stats.errors[type(exc).__name__] += 1
            conn = client.connection()
            legal = None
            continue
        stats.record(began, status, len(data))
        if status == 200:
            view = _decode(data)
            game["status"] = view["status"]
            seat, legal = next_move(view)
        else:
            legal = None  # re-read the game before the next action
            if args.verbose:
                print(f"action {status}: {data[:300]!r}", file=sys.stderr)


async def simple_client(client, n, stats, args) -> None:
    await asyncio.sleep(n * args.stagger)
    conn = client.connection()
    if args.scenario == "get":
        method, path, body, headers = "GET", args.path, b"", {}
    else:
        method, path = "POST", f"/ceiling/write/{args.key_offset + n}"
        body, headers = b'{"type":"draw"}', {**ACTION_HEADERS, "Authorization": "Bearer x.0.y"}
    while time.time() < stats.end_at:
        began = time.time()
        try:
            status, data = await client.request(conn, method, path, body, headers)
        except Exception as exc:
            stats.errors[type(exc).__name__] += 1
            conn = client.connection()
            continue
        stats.record(began, status, len(data))


async def main_async(args) -> dict:
    parts = urlsplit(args.url)
    base = f"{parts.scheme}://{parts.netloc}"
    args.path = parts.path or "/"
    client = Client(args.client, base)
    stats = Stats(args.start_at, args.start_at + args.duration)
    ids: list[str] = []
    rng = random.Random(args.seed)
    if args.scenario == "act":
        tasks = [act_client(client, n, stats, args, ids, rng) for n in range(args.clients)]
    else:
        tasks = [simple_client(client, n, stats, args) for n in range(args.clients)]
    cpu = [0.0, 0.0]

    async def cpu_marks() -> None:
        await asyncio.sleep(max(0.0, stats.start_at - time.time()))
        cpu[0] = time.process_time()
        await asyncio.sleep(max(0.0, stats.end_at - time.time()))
        cpu[1] = time.process_time()

    await asyncio.gather(cpu_marks(), *tasks)
    await client.close()
    return {
        "requests": len(stats.latencies),
        "duration": args.duration,
        "latencies_us": stats.latencies,
        "statuses": {str(k): v for k, v in stats.statuses.items()},
        "errors": dict(stats.errors),
        "creates": stats.creates,
        "create_statuses": {str(k): v for k, v in stats.create_statuses.items()},
        "finished_games": stats.finished_games,
        "reply_bytes": stats.reply_bytes,
        "client_cpu_s": cpu[1] - cpu[0],
        "game_ids": ids,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", choices=["get", "act", "write"])
    parser.add_argument("url", help="the URL to GET, or the base URL for act / write")
    parser.add_argument("--client", choices=["httpx", "raw"], default="httpx")
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--start-at", type=float, help="wall-clock start of the window")
    parser.add_argument("--warmup", type=float, default=2.0, help="if no --start-at")
    parser.add_argument("--key-offset", type=int, default=0, help="write: first key number")
    parser.add_argument("--pool", type=int, default=3, help="act: games per client made ahead")
    parser.add_argument("--bots", default="random", help="act: the bots' level")
    parser.add_argument(
        "--clock", type=float, default=0.0, help="act: a bank clock of this many seconds (0: none)"
    )
    parser.add_argument(
        "--humans", type=int, default=1, help="act: human seats of the 4 (the rest are bots)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--stagger", type=float, default=0.005, help="seconds between two clients' first request"
    )
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--ids-file", help="act: append the id of every game created here")
    args = parser.parse_args()
    global CLOCK  # noqa: PLW0603 - one setting for the whole process, read by create_body
    if args.clock > 0:
        CLOCK = {"type": "bank", "initial_seconds": args.clock, "increment_seconds": 10}
    global IDS_FILE  # noqa: PLW0603 - one per process
    if args.ids_file:
        IDS_FILE = open(args.ids_file, "a")  # noqa: SIM115 - open for the whole run
    if args.start_at is None:
        args.start_at = time.time() + args.warmup
    try:
        import uvloop
    except ImportError:
        result = asyncio.run(main_async(args))
    else:
        result = uvloop.run(main_async(args))
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
