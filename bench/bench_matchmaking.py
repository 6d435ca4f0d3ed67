"""Matchmaking, simulated: tickets arriving over time (Poisson) at the real service, in process
over HTTP (the embedded store, or Redis with `--redis`), with ratings drawn like a real
ladder. Prints figures, asserts nothing.

    .venv/bin/python bench/bench_matchmaking.py [--tickets 200 2000] [--seconds 300]
                                                [--redis redis://127.0.0.1:6391/0] [--seed 1]
                                                [--scaling 250 1000 4000]

`--redis`: a Redis of the bench's own (its matchmaking keys are deleted before each run).

The clock is simulated: the app's matchmaking reads a clock the bench sets (the service's
`now`, `Matchmaking.set_clock`), and the bench runs the matchmaker's step of every pool
(`Matchmaker.step`, the handler its leased job runs) once per simulated second, so hours of
waiting take minutes and nothing sleeps (the simulated clock runs days ahead of the wall
clock, so the app's own worker finds no pool due: every step is the bench's). Tickets are created and read over HTTP with the
platform's key; the games are made by the lobby's create, for real.

The ladder: each player's rating (`mu`, stored in the archive before the run) is drawn from
a normal around the default rating with the ladder's spread (`service.history.ratings`: 25
and 25/3). A ticket is live (80%) or correspondence, rated (80%) or casual, accepts one of a
few size sets ({2}, {2,3}, {3,4}, {4}, {2..5}, {5}), asks for bots after 60 s one time in
four, and one in ten brings a party of one. `--seconds` of arrivals, then as long again
without arrivals (the waits of the last tickets count too).

Shown per run: tables made (with bots), the median and p95 wait of the matched tickets, the
share of rated tables whose rating spread (highest minus lowest ticket rating) is within one
sigma of the ladder's, tickets lost (not matched, not waiting, not expired) or matched twice
(a ticket whose game does not seat it, or a game made that no ticket names), and the step's
time against the tickets waiting in its pool. Then the steps' time on pools of 250, 1,000 and
4,000 tickets arrived at once, that cannot be paired (the pairing's cost alone), then that
all pair (a step makes at most `MAX_TABLES` tables, the next one runs at once).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis
from litestar.testing import TestClient
from sqlalchemy import insert
from sqlalchemy.ext.asyncio import create_async_engine

from infra.archive.models import ratings as ratings_table
from service.core.settings import (
    ArchiveSettings,
    IdentitySettings,
    ObservabilitySettings,
    RedisSettings,
    Settings,
)
from service.entrypoints.api.app import create_app
from service.history.ratings import MU, SIGMA

KEY = "bench-platform-key-0123456789"
PLATFORM = {"X-API-Key": KEY}
TICKETS = "/v1/matchmaking/tickets"
POOLS = ("live:rated", "live:casual", "correspondence:rated", "correspondence:casual")
# the simulated clock runs this far ahead of the wall clock: the app's own matchmaker worker
# claims its jobs on the wall clock and finds no pool due, so every step is the bench's
AHEAD = 10 * 86400.0
SIZES = ([2], [2, 3], [3, 4], [4], [2, 3, 4, 5], [5])


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Clock:
    def __init__(self, start: float) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


def settings(tmp: Path, redis_url: str | None) -> Settings:
    return Settings(
        archive=ArchiveSettings(
            database_url=f"sqlite+aiosqlite:///{tmp}/archive.sqlite3", migrate_on_start=True
        ),
        redis=RedisSettings(url=redis_url),
        observability=ObservabilitySettings(log_format="json", log_level="WARNING"),
        identity=IdentitySettings(api_keys=(KEY,)),
    )


async def seed_ratings(url: str, ladder: dict[str, float]) -> None:
    """Each player's rating, written into the archive's ratings (migrated at the app's start)."""
    engine = create_async_engine(url)
    at = datetime.now(UTC)
    rows = [
        {"player_id": p, "mu": mu, "sigma": 2.0, "ordinal": mu - 6.0, "games": 30, "updated_at": at}
        for p, mu in ladder.items()
    ]
    async with engine.begin() as conn:
        await conn.execute(insert(ratings_table), rows)
    await engine.dispose()


def forget(redis_url: str | None) -> None:
    """A run starts with no ticket: the matchmaking keys of a Redis (the bench's own) go."""
    if redis_url is None:
        return
    client = redis.Redis.from_url(redis_url)
    for pattern in ("{ten:mm:*", "{ten:q:matchmaking}*"):
        keys = list(client.scan_iter(match=pattern, count=1000))
        for i in range(0, len(keys), 500):
            client.delete(*keys[i : i + 500])
    client.close()


def run(n: int, seconds: float, redis_url: str | None, seed: int) -> None:
    rng = random.Random(seed)
    tag = f"b{seed}x{n}"
    tickets: list[dict] = []  # what the bench asked, with the ticket's id
    arrivals, t = [], 0.0
    while len(arrivals) < n:
        t += rng.expovariate(n / seconds)
        arrivals.append(t)
    players = [f"{tag}p{i}" for i in range(2 * n)]
    ladder = {p: rng.gauss(MU, SIGMA) for p in players}
    forget(redis_url)
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(settings(Path(tmp), redis_url))
        with TestClient(app) as client:
            portal = client.blocking_portal
            portal.call(seed_ratings, f"sqlite+aiosqlite:///{tmp}/archive.sqlite3", ladder)
            mm = app.state.matchmaking
            clock = Clock(time.time() + AHEAD)
            start = clock.now
            mm.set_clock(clock)
            made: list[str] = []
            create = mm.matchmaker.create_game

            async def counted(command):  # every game the matchmaker makes, counted
                answer = await create(command)
                made.append(answer.record.id)
                return answer

            mm.matchmaker.create_game = counted
            steps: list[tuple[int, float]] = []  # (waiting in the pool before, seconds)

            def step_all() -> None:
                for pool in POOLS:
                    waiting = len(portal.call(mm.store.pool, pool, 100_000))
                    began = time.perf_counter()
                    portal.call(mm.matchmaker.step, pool)
                    steps.append((waiting, time.perf_counter() - began))

            next_player = 0
            wall = time.perf_counter()
            for second in range(int(2 * seconds)):
                clock.now = start + second
                while arrivals and arrivals[0] <= second:
                    arrivals.pop(0)
                    holder = players[next_player]
                    next_player += 1
                    ask = {
                        "mode": "live" if rng.random() < 0.8 else "correspondence",
                        "rated": rng.random() < 0.8,
                        "sizes": rng.choice(SIZES),
                        "name": holder[-12:],
                        "player_id": holder,
                    }
                    if rng.random() < 0.25:
                        ask["fill_bots_after"] = 60
                    if rng.random() < 0.1 and min(ask["sizes"]) >= 2:
                        partner = players[next_player]
                        next_player += 1
                        ask["party"] = [{"player_id": partner, "name": partner[-12:]}]
                    answer = client.post(TICKETS, json=ask, headers=PLATFORM)
                    assert answer.status_code == 201, answer.text
                    tickets.append({**ask, "id": answer.json()["id"]})
                step_all()
            wall = time.perf_counter() - wall
            shown = [client.get(f"{TICKETS}/{t['id']}", headers=PLATFORM).json() for t in tickets]
            games = {}
            for game_id in {s["game_id"] for s in shown if s["game_id"]}:
                games[game_id] = client.get(f"/v1/games/{game_id}", headers=PLATFORM).json()
    report(n, seconds, tickets, shown, games, made, steps, wall, redis_url)


def report(n, seconds, tickets, shown, games, made, steps, wall, redis_url) -> None:
    status = Counter(s["status"] for s in shown)
    matched = [s for s in shown if s["status"] == "matched"]
    waits = [s["waited"] for s in matched]
    by_game: dict[str, list[dict]] = defaultdict(list)
    for s in matched:
        by_game[s["game_id"]].append(s)
    wrong = 0  # a ticket its game does not seat, or a seat two tickets hold
    for game_id, members in by_game.items():
        seats = [s["seat"] for s in members]
        humans = sum(1 + len(s["party"] or []) for s in members)
        names = games[game_id]["players"]
        wrong += len(seats) != len(set(seats))
        wrong += humans != sum(1 for p in names if p["bot"] is None)
    strays = len(set(made) - set(by_game))  # a game made that no ticket names
    rated = [m for m in by_game.values() if m[0]["rated"] and len(m) > 1]
    spreads = [max(s["rating"] for s in m) - min(s["rating"] for s in m) for m in rated]
    within = sum(1 for x in spreads if x <= SIGMA)
    bots = sum(1 for g in games.values() if any(p["bot"] for p in g["players"]))
    lost = n - status["matched"] - status["waiting"] - status["expired"]
    print(f"\n{n} tickets over {seconds:.0f} simulated s (then {seconds:.0f} s more), "
          f"{'Redis' if redis_url else 'embedded store'}, clock simulated; {wall:.1f} s of wall time")  # fmt: skip
    print(f"  tables {len(by_game)} ({bots} with bots), tickets {dict(status)}")
    print(f"  wait of the matched: median {statistics.median(waits):.1f} s, "
          f"p95 {percentile(waits, 0.95):.1f} s")  # fmt: skip
    print(f"  rated tables of 2+ tickets within one sigma ({SIGMA:.2f}) of spread: "
          f"{within}/{len(spreads)} = {100 * within / max(1, len(spreads)):.1f}%")  # fmt: skip
    print(f"  lost {lost}, matched twice {wrong + strays} (games made {len(set(made))}, "
          f"named by tickets {len(by_game)})")  # fmt: skip
    buckets: dict[str, list[float]] = defaultdict(list)
    for waiting, took in steps:
        edge = next(e for e in (0, 10, 50, 200, 1000, 10**9) if waiting <= e)
        buckets[f"<= {edge}" if edge < 10**9 else "> 1000"].append(took)
    for name, took in buckets.items():
        print(f"  step with {name:>7} waiting: median {1000 * statistics.median(took):6.2f} ms, "
              f"p95 {1000 * percentile(took, 0.95):6.2f} ms ({len(took)} steps)")  # fmt: skip


def scaling(redis_url: str | None, sizes: list[int]) -> None:
    """The steps on a pool of N waiting tickets: none of which can sit together (ratings 3
    apart, each window 2.1 wide at once: the pairing's cost alone), then all of which can
    (one rating, tables of 2: N/2 games made, `MAX_TABLES` a step)."""
    for apart, title in ((3.0, "nothing to pair (ratings 3 apart, windows at their narrowest)"),
                         (0.0, "everything pairs (one rating, tables of 2: N/2 games made)")):  # fmt: skip
        print(f"\nthe steps, {title}:")
        for n in sizes:
            ladder = {f"s{n}p{i}": MU + apart * (i - n / 2) for i in range(n)}
            forget(redis_url)
            with tempfile.TemporaryDirectory() as tmp:
                app = create_app(settings(Path(tmp), redis_url))
                with TestClient(app) as client:
                    portal = client.blocking_portal
                    portal.call(seed_ratings, f"sqlite+aiosqlite:///{tmp}/archive.sqlite3", ladder)
                    mm = app.state.matchmaking
                    clock = Clock(time.time() + AHEAD)
                    mm.set_clock(clock)
                    for player in ladder:
                        ask = {"mode": "live", "sizes": [2], "name": "x", "player_id": player}
                        assert client.post(TICKETS, json=ask, headers=PLATFORM).status_code == 201
                    took, made = [], 0
                    while True:  # a step makes MAX_TABLES at most, then asks for the next
                        began = time.perf_counter()
                        again = portal.call(mm.matchmaker.step, "live:rated")
                        took.append(time.perf_counter() - began)
                        made += mm.matchmaker.last.tables
                        if again != clock.now:
                            break
                    left = len(portal.call(mm.store.pool, "live:rated", 100_000))
                    print(f"  {n:>5} waiting: {1000 * sum(took):8.1f} ms in {len(took)} step(s) "
                          f"(longest {1000 * max(took):.1f} ms), {made} tables made, "
                          f"{left} left waiting")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tickets", type=int, nargs="*", default=[200, 2000])
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--redis", default=None)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--scaling", type=int, nargs="*", default=[250, 1000, 4000])
    args = parser.parse_args()
    for n in args.tickets:
        run(n, args.seconds, args.redis, args.seed)
    if args.scaling:
        scaling(args.redis, args.scaling)


if __name__ == "__main__":
    asyncio.set_event_loop_policy(None)
    main()
