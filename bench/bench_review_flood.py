"""A flood of review requests against a game with an expert: `python bench/bench_review_flood.py`.

One service process (uvicorn, the embedded store, a temporary archive, TEN_BOT_WORKERS=1 by
default) per setting of the per-caller bound (`--pending 3,0`: TEN_MAX_PENDING_REVIEWS; 0
is none, only TEN_REVIEW_QUEUE bounds them). In each:
- quiet: one human plays a game against expert bots (`--experts`, `--moves` actions,
  a new game when one ends); the latency of each action, whose reply carries the experts'
  moves computed in the bot pool;
- flood: the same player plays again while one client (127.0.0.1) asks for the reviews of
  `--flood` finished games within a second, and another client (from 127.0.0.2: another
  caller) asks for one review and polls it (every 0.1 s) until it is answered. The player
  plays until every review accepted is computed (and at least `--moves` actions).
Prints the flooder's answers (202 accepted, 429 refused), the other client's time to its
review (goal: within 5 s), the moves' p50/p99 quiet and in the flood and their ratio (goal:
the flood's p99 no more than twice the quiet one). No assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.servers import ServiceProcess

FOUR_BASIC = {"players": [{"name": f"B{i}", "bot": "basic"} for i in range(4)]}


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


async def finished_games(client: httpx.AsyncClient, count: int) -> list[str]:
    ids = []
    for _ in range(count):
        r = await client.post("/v1/games", json=FOUR_BASIC)
        r.raise_for_status()
        ids.append(r.json()["id"])
    return ids


async def play(
    client: httpx.AsyncClient, experts: int, moves: int, until: asyncio.Event | None, seed: int
) -> list[float]:
    """The latency (ms) of each action of a human against `experts` expert bots: `moves` of
    them, and on until `until` is set."""
    rng = random.Random(seed)
    players = [{"name": "human"}] + [{"name": f"E{i}", "bot": "expert"} for i in range(experts)]
    took: list[float] = []
    while len(took) < moves or (until is not None and not until.is_set()):
        r = await client.post("/v1/games", json={"players": players})
        r.raise_for_status()
        game = r.json()
        headers = {"Authorization": f"Bearer {game['seats'][0]['token']}"}
        view = (await client.get(f"/v1/games/{game['id']}", headers=headers)).json()
        while view["status"] != "finished" and view.get("legal_actions"):
            if len(took) >= moves and (until is None or until.is_set()):
                return took
            started = time.perf_counter()
            r = await client.post(
                f"/v1/games/{game['id']}/actions",
                json=rng.choice(view["legal_actions"]),
                headers=headers,
            )
            took.append((time.perf_counter() - started) * 1000)
            r.raise_for_status()
            view = r.json()
    return took


async def reviewed(client: httpx.AsyncClient, game_id: str) -> int:
    """The review's status: 200 computed, 202 waiting, 429 refused; any other fails."""
    r = await client.get(f"/v1/games/{game_id}/review")
    if r.status_code not in (200, 202, 429):
        raise RuntimeError(f"review of {game_id}: {r.status_code} {r.text[:300]}")
    return r.status_code


async def flood(base: str, ids: list[str], experts: int, moves: int) -> dict:
    flooded, asked = ids[:-1], ids[-1]
    done = asyncio.Event()
    answers: Counter[int] = Counter()
    other = httpx.AsyncHTTPTransport(local_address="127.0.0.2")
    async with (
        httpx.AsyncClient(base_url=base, timeout=60) as flooder,
        httpx.AsyncClient(base_url=base, timeout=60, transport=other) as asker,
        httpx.AsyncClient(base_url=base, timeout=60) as player,
    ):

        async def flood_them() -> list[str]:
            accepted = []
            gap = 1.0 / len(flooded)
            for game_id in flooded:
                r = await flooder.get(f"/v1/games/{game_id}/review")
                answers[r.status_code] += 1
                if r.status_code == 202:
                    accepted.append(game_id)
                await asyncio.sleep(gap)
            return accepted

        async def ask() -> float:
            await asyncio.sleep(0.2)  # the flood under way
            started = time.monotonic()
            while await reviewed(asker, asked) != 200:
                await asyncio.sleep(0.1)
            return time.monotonic() - started

        async def all_computed(accepted: list[str]) -> float:
            started = time.monotonic()
            for game_id in accepted:
                while await reviewed(flooder, game_id) != 200:
                    await asyncio.sleep(0.25)
            return time.monotonic() - started

        async def flooder_then_wait() -> float:
            return await all_computed(await flood_them())

        moving = asyncio.create_task(play(player, experts, moves, done, seed=2))
        waited, drained = await asyncio.gather(ask(), flooder_then_wait())
        done.set()
        took = await moving
    return {"answers": dict(answers), "asked": waited, "drained": drained, "moves": took}


async def measured(base: str, args: argparse.Namespace) -> tuple[list[float], dict]:
    """The quiet moves, then the flood's figures."""
    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        ids = await finished_games(client, args.flood + 1)
        quiet = await play(client, args.experts, args.moves, None, seed=1)
    return quiet, await flood(base, ids, args.experts, args.moves)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pending", default="3,0", help="TEN_MAX_PENDING_REVIEWS values")
    parser.add_argument("--flood", type=int, default=100)
    parser.add_argument("--experts", type=int, default=2)
    parser.add_argument("--moves", type=int, default=150)
    parser.add_argument("--bot-workers", default="1")
    args = parser.parse_args()
    for pending in args.pending.split(","):
        with tempfile.TemporaryDirectory(prefix="ten-review-flood-") as tmp:
            env = {
                "TEN_DATABASE_URL": f"sqlite+aiosqlite:///{tmp}/archive.sqlite3",
                "TEN_MIGRATE_ON_START": "true",
                "TEN_BOT_WORKERS": args.bot_workers,
                "TEN_MAX_PENDING_REVIEWS": pending,
                "TEN_LOG_LEVEL": "WARNING",
            }
            server = ServiceProcess(env, stdout=Path(tmp) / "service.log")
            base = f"http://127.0.0.1:{server.port}"

            try:
                quiet, flooded = asyncio.run(measured(base, args))
            finally:
                server.stop()
        moves = flooded["moves"]
        ratio = pct(moves, 0.99) / pct(quiet, 0.99)
        print(
            f"TEN_MAX_PENDING_REVIEWS={pending} TEN_BOT_WORKERS={args.bot_workers}: "
            f"{args.flood} review requests in ~1 s from one client"
        )
        print(f"  flooder's answers {flooded['answers']}; its accepted reviews all computed "
              f"{flooded['drained']:.1f} s after its flood")  # fmt: skip
        print(f"  another client's review answered in {flooded['asked']:.2f} s (goal < 5 s)")
        print(
            f"  moves vs {args.experts} expert(s): quiet p50 {pct(quiet, 0.5):.1f} ms "
            f"p99 {pct(quiet, 0.99):.1f} ms ({len(quiet)}); flood p50 {pct(moves, 0.5):.1f} ms "
            f"p99 {pct(moves, 0.99):.1f} ms ({len(moves)}); p99 ratio {ratio:.2f} (goal <= 2)"
        )


if __name__ == "__main__":
    main()
