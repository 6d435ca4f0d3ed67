"""Correspondence that calls the player back, on two replicas: from a move to the next
player's webhook and to the Web Push message reaching a push endpoint. Prints figures,
asserts nothing.

    .venv/bin/python bench/bench_correspondence.py [--games 1000] [--concurrency 32]
                                                   [--watched-every 20] [--no-kill]

A private redis-server; two service processes on it (one VAPID key, given to both); a
webhook receiver and a Web Push endpoint on loopback, in threads of this process (the push
endpoint decrypts every message with its subscription's keys: `tests/support/push.py`).
`--games` two-seat games with a deadline clock (24 h), created half on each replica; the
second seat's player of each subscribed to push. Every `--watched-every`-th game's second
player watches it (an event stream on the replica that is not killed). Then the first seat
of every game plays until the game waits on the second (the move that hands the turn over
is the one timed: from just before its POST to the webhook's and the push's arrival), games
spread over both replicas, `--concurrency` at once, each action with an Idempotency-Key;
halfway through, one replica is SIGKILLed and its games' moves go on at the other (a request
cut by the kill is sent again there with its key). Shown: p50/p95/max of both latencies,
notices sent to a watching player (the goal: 0), the turns handed over to a player not
watching and acknowledged that never got their webhook or push (lost: the goal 0), and
duplicates received.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from py_vapid import Vapid02

from tests.servers import RedisServer, ServiceProcess
from tests.support.push import PushEndpoint, serve
from tests.support.webhooks import SECRET

WAIT_AFTER = 120.0  # seconds to wait for the last notices (a bound: the run ends sooner)


class Hooks:
    """A webhook receiver: every `your_turn` it gets, with when it arrived."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.turns: list[tuple[str, int, str, float]] = []  # game, seat, webhook-id, at
        self.server = serve(self.answer)

    def answer(self, _path: str, headers: dict[str, str], body: bytes) -> int:
        at = time.time()
        message = json.loads(body)
        if message.get("type") == "your_turn":
            data = message["data"]
            wid = {k.lower(): v for k, v in headers.items()}["webhook-id"]
            with self.lock:
                self.turns.append((data["game_id"], data["seat"], wid, at))
        return 204

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hooks"


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class Run:
    def __init__(self, bases: list[str], replicas: list[ServiceProcess], push: PushEndpoint):
        self.bases = bases
        self.replicas = replicas
        self.dead: set[int] = set()
        self.push = push
        self.handed: dict[str, float] = {}  # game -> when its handing-over POST was first sent
        self.retried = 0
        self.sent = 0

    def base(self, slot: int) -> str:
        return self.bases[1 if slot in self.dead else slot]

    async def call(self, client: httpx.AsyncClient, slot: int, method: str, path: str, **kw):
        """The request on its replica; cut (the replica killed): again on the other, with
        the same Idempotency-Key."""
        for _ in range(20):
            try:
                return await client.request(method, self.base(slot) + path, **kw)
            except httpx.TransportError:
                self.retried += 1
                await asyncio.sleep(0.2)
        raise RuntimeError(f"{method} {path}: no replica answered")

    async def create(self, client, i: int, sem: asyncio.Semaphore) -> tuple[str, dict[int, str]]:
        async with sem:
            a, b = f"a{i}-{time.time_ns()}", f"b{i}-{time.time_ns()}"
            made = await self.call(
                client, i % 2, "POST", "/v1/push/subscriptions",
                json={"player_id": b, **self.push.subscription(f"/p/{i}")},
            )  # fmt: skip
            made.raise_for_status()
            body = {
                "players": [{"name": "A", "player_id": a}, {"name": "B", "player_id": b}],
                "clock": {"type": "deadline", "hours": 24},
                "starting_seat": 0,
            }
            created = await self.call(client, i % 2, "POST", "/v1/games", json=body)
            created.raise_for_status()
            game = created.json()
            return game["id"], {s["seat"]: s["token"] for s in game["seats"]}

    async def hand_over(self, client, i: int, game_id: str, token: str, sem, halfway) -> None:
        async with sem:
            step = 0
            headers = {"Authorization": f"Bearer {token}"}
            path = f"/v1/games/{game_id}"
            view = (await self.call(client, i % 2, "GET", path, headers=headers)).json()
            while view["status"] == "active" and view["to_act"] == 0:
                action = view["legal_actions"][0]
                key = {"Idempotency-Key": f"{game_id}-{step}"}
                sent = time.time()
                acted = await self.call(
                    client, i % 2, "POST", f"{path}/actions", json=action,
                    headers={**headers, **key},
                )  # fmt: skip
                acted.raise_for_status()
                step += 1
                self.sent += 1
                view = acted.json()["game"] if "game" in acted.json() else acted.json()
                if view.get("to_act") == 1:
                    self.handed[game_id] = sent
        halfway()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--watched-every", type=int, default=20)
    parser.add_argument("--no-kill", action="store_true")
    args = parser.parse_args()

    key = Vapid02()
    key.generate_keys()
    redis = RedisServer()
    hooks = Hooks()
    logs = Path(tempfile.mkdtemp(prefix="ten-bench-corr-"))
    env = {
        "TEN_REDIS_URL": redis.url,
        "TEN_WEBHOOK_URLS": hooks.url,
        "TEN_WEBHOOK_SECRET": SECRET,
        "TEN_PUSH_ALLOW_HTTP_LOOPBACK": "true",
        "TEN_VAPID_PRIVATE_KEY": key.private_pem().decode(),
        "TEN_BOT_WORKERS": "0",
        "TEN_LOG_LEVEL": "WARNING",
        "TEN_SSE_MAX_PER_CLIENT": "0",
    }
    replicas = [ServiceProcess(env, stdout=logs / f"replica{n}.log") for n in range(2)]
    bases = [r.base for r in replicas]
    public = httpx.get(f"{bases[0]}/v1/push/key").json()["public_key"]
    assert public == httpx.get(f"{bases[1]}/v1/push/key").json()["public_key"]
    push = PushEndpoint(public).start()
    run = Run(bases, replicas, push)
    limits = httpx.Limits(max_connections=args.concurrency + 8)
    streams: list[asyncio.Task] = []
    try:
        async with httpx.AsyncClient(timeout=60, limits=limits) as client:
            sem = asyncio.Semaphore(args.concurrency)
            t = time.perf_counter()
            games = await asyncio.gather(*(run.create(client, i, sem) for i in range(args.games)))
            print(f"{args.games} games created and their second players subscribed in "
                  f"{time.perf_counter() - t:.1f} s (two replicas)", flush=True)  # fmt: skip
            watched = {g for i, (g, _) in enumerate(games) if i % args.watched_every == 0}
            opened: dict[str, asyncio.Event] = {g: asyncio.Event() for g in watched}
            stream_client = httpx.AsyncClient(
                timeout=None, limits=httpx.Limits(max_connections=None)
            )

            async def watch(game_id: str, token: str) -> None:
                url = f"{bases[1]}/v1/games/{game_id}/events/stream"
                headers = {"Authorization": f"Bearer {token}"}
                with contextlib.suppress(httpx.HTTPError, asyncio.CancelledError):
                    async with stream_client.stream("GET", url, headers=headers) as response:
                        async for _ in response.aiter_raw():
                            opened[game_id].set()

            for game_id, tokens in games:
                if game_id in watched:
                    streams.append(asyncio.create_task(watch(game_id, tokens[1])))
            await asyncio.wait_for(asyncio.gather(*(e.wait() for e in opened.values())), 60)
            print(f"{len(watched)} second players watching their game (streams on replica 1)")

            done = [0]
            killed_at = [None]

            def halfway() -> None:
                done[0] += 1
                if not args.no_kill and done[0] == args.games // 2 and killed_at[0] is None:
                    killed_at[0] = time.time()
                    replicas[0].kill()
                    run.dead.add(0)
                    print(f"replica 0 SIGKILLed after {done[0]} games handed over", flush=True)

            t = time.perf_counter()
            await asyncio.gather(
                *(
                    run.hand_over(client, i, g, tk[0], sem, halfway)
                    for i, (g, tk) in enumerate(games)
                )
            )
            moved = time.perf_counter() - t
            print(f"{run.sent} actions in {moved:.1f} s; {len(run.handed)} turns handed over; "
                  f"{run.retried} requests sent again after the kill", flush=True)  # fmt: skip

            expected = {g for g in run.handed if g not in watched}
            index = {g: i for i, (g, _) in enumerate(games)}

            def missing() -> tuple[set[str], set[str]]:
                with hooks.lock:
                    hooked = {g for g, seat, _, _ in hooks.turns if seat == 1}
                with push.lock:
                    pushed_paths = {p.path for p in push.received}
                pushed = {g for g in expected if f"/p/{index[g]}" in pushed_paths}
                return expected - hooked, expected - pushed

            stop = time.monotonic() + WAIT_AFTER
            while any(missing()) and time.monotonic() < stop:
                await asyncio.sleep(0.25)
            await asyncio.sleep(2.0)  # anything late or duplicated arrives meanwhile
            for task in streams:
                task.cancel()
            await asyncio.gather(*streams, return_exceptions=True)
            await stream_client.aclose()
    finally:
        for replica in replicas:
            replica.stop()
        push.stop()
        redis.close()

    no_hook, no_push = missing()
    with hooks.lock:
        turns = list(hooks.turns)
    with push.lock:
        received = list(push.received)
    first_hook: dict[str, float] = {}
    hook_ids: dict[str, set[str]] = {}
    for g, seat, wid, at in turns:
        if seat == 1:
            first_hook[g] = min(at, first_hook.get(g, at))
            hook_ids.setdefault(g, set()).add(wid)
    by_path: dict[str, list[float]] = {}
    for p in received:
        by_path.setdefault(p.path, []).append(p.at)
    hook_lat = [first_hook[g] - run.handed[g] for g in expected if g in first_hook]
    push_lat = [min(by_path[f"/p/{index[g]}"]) - run.handed[g]
                for g in expected if f"/p/{index[g]}" in by_path]  # fmt: skip
    to_watching = sum(1 for g in watched if g in first_hook) + sum(
        len(by_path.get(f"/p/{index[g]}", [])) for g in watched
    )
    dup_push = sum(len(v) - 1 for v in by_path.values() if len(v) > 1)
    dup_hook = sum(1 for g, seat, _, _ in turns if seat == 1) - len(
        first_hook
    )  # deliveries beyond the first (same webhook-id: at least once)
    undecrypted = sum(1 for p in received if p.payload is None)
    unsigned = sum(1 for p in received if not p.signed)
    print()
    print(f"turns handed to a player not watching: {len(expected)}")
    print(f"move -> webhook   p50 {statistics.median(hook_lat):.3f} s  p95 {pct(hook_lat, 0.95):.3f} s"
          f"  max {max(hook_lat):.3f} s  ({len(hook_lat)} received)")  # fmt: skip
    print(f"move -> push      p50 {statistics.median(push_lat):.3f} s  p95 {pct(push_lat, 0.95):.3f} s"
          f"  max {max(push_lat):.3f} s  ({len(push_lat)} received, {undecrypted} not decrypted, "
          f"{unsigned} not signed with the service's key)")  # fmt: skip
    print(f"notices to a watching player: {to_watching} (of {len(watched)} watched turns)")
    print(f"lost (acknowledged, never told): webhook {len(no_hook)}, push {len(no_push)}")
    print(
        f"duplicates received: webhook deliveries {dup_hook} (ids per turn: "
        f"{max((len(v) for v in hook_ids.values()), default=0)} at most), pushes {dup_push}"
    )
    print(
        f"replica killed: {'no' if args.no_kill else 'yes, replica 0, SIGKILL, halfway'}; "
        f"logs in {logs}"
    )


if __name__ == "__main__":
    asyncio.run(main())
