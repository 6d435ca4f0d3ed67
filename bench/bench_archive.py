"""Archive speed on PostgreSQL: finished games archived per second, and leaderboard query
latency over 100,000 archived games. Prints figures, asserts nothing.

    .venv/bin/python bench/bench_archive.py [--server URL] [--games 300] [--concurrency 8]
                                            [--synthetic 100000] [--queries 200]

1. Archiving: `--games` whole 4-player bot games are simulated first (not timed), then
   archived through `SqlArchive.archive` (game + seats + results + the whole event log,
   one transaction each) by `--concurrency` tasks sharing one engine, into a throwaway
   migrated database. Three runs, each into a fresh database; the median run is shown.
   The same is done on a SQLite file for comparison.
2. Leaderboard: another throwaway database gets `--synthetic` games of synthetic results
   (4 seats, 10,000 player ids, 10% bot seats; random scores, busts, perfect colours) by
   COPY, without event logs: these are not real games, only rows shaped like them, loaded
   in seconds. After VACUUM ANALYZE (what autovacuum does to an insert-only table), each
   query runs `--queries` times through `SqlArchive`; p50 and p99 are shown.

Throwaway databases are created next to `--server` (default: the test server's `test`
database) and dropped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import msgspec
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `tests.integration.scratch`

from domain.bots.simulation import play_game
from infra.archive import SqlArchive, make_engine, upgrade_async
from service.core.model import GameRecord
from service.core.ports import StoredEvent
from service.games.use_cases import encode_events
from service.history.archiving import archive_game
from tests.support.scratch import scratch_database

PG_SERVER = os.environ.get("TEN_TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
SQLITE_SERVER = "sqlite+aiosqlite:///bench.sqlite3"
RUNS = 3
PLAYER_POOL = 10_000
COLORS = ("R", "B", "O", "G")

Job = tuple[GameRecord, list[StoredEvent], list[str | None]]


# ---------------------------------------------------------------- archiving


def simulate(games: int) -> list[Job]:
    rng = random.Random(7)
    jobs: list[Job] = []
    now = time.time()
    for i in range(games):
        sim = play_game(["random", "basic", "random", "basic"], f"bench-archive/{i}")
        record = GameRecord(
            id=f"{rng.getrandbits(80):020x}",
            state=sim.state,
            token_hashes=(None,) * 4,
            created_at=now - 600,
            updated_at=now - i,
        )
        players: list[str | None] = [f"player{n}" for n in rng.sample(range(1000), 3)]
        jobs.append((record, encode_events(sim.events), [*players, None]))  # seat 3: anonymous
    return jobs


async def archive_run(server: str, jobs: list[Job], concurrency: int) -> tuple[float, list[float]]:
    async with scratch_database(server, prefix="ten_bench") as url:
        await upgrade_async(url)
        archive = SqlArchive(make_engine(url, pool_size=concurrency))
        try:
            await archive.ping()
            queue = list(reversed(jobs))
            latencies: list[float] = []

            async def worker() -> None:
                while queue:
                    record, events, players = queue.pop()
                    start = time.perf_counter()
                    inserted = await archive_game(archive, record, events, players)
                    latencies.append(time.perf_counter() - start)
                    assert inserted

            start = time.perf_counter()
            await asyncio.gather(*[worker() for _ in range(concurrency)])
            elapsed = time.perf_counter() - start
        finally:
            await archive.close()
    return len(jobs) / elapsed, latencies


async def bench_archiving(args: argparse.Namespace) -> None:
    start = time.perf_counter()
    jobs = simulate(args.games)
    events = sum(len(e) for _, e, _ in jobs) / len(jobs)
    print(
        f"simulated {len(jobs)} 4-player games in {time.perf_counter() - start:.1f} s "
        f"(not timed; {events:.0f} events per game)"
    )
    for name, server in (("PostgreSQL", args.server), ("SQLite file", SQLITE_SERVER)):
        runs = [await archive_run(server, jobs, args.concurrency) for _ in range(RUNS)]
        rate, latencies = sorted(runs)[len(runs) // 2]
        p50, p99 = percentiles(latencies)
        print(
            f"archive -> {name:<11} concurrency {args.concurrency}: {rate:6.0f} games/s "
            f"({rate * events:,.0f} events/s; runs {', '.join(f'{r:.0f}' for r, _ in runs)}), "
            f"per game p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms"
        )


# ---------------------------------------------------------------- leaderboard


def synthetic_rows(games: int) -> tuple[list[tuple], list[tuple], list[tuple]]:
    """Rows shaped like archived 4-player games (no event log)."""
    rng = random.Random(11)
    base = datetime(2025, 1, 1, tzinfo=UTC)
    rules = msgspec.json.encode({"perfect_bonus": 1}).decode()
    deck = msgspec.json.encode(["R1"] * 120).decode()
    colors = msgspec.json.encode({c: {"points": 0, "run": []} for c in COLORS}).decode()
    game_rows, seat_rows, result_rows = [], [], []
    for i in range(games):
        game_id = f"{i:020x}"
        finished = base + timedelta(seconds=i * 300 + rng.randrange(300))
        game_rows.append(
            (game_id, 4, rules, f"seed{i}", deck, 1, finished - timedelta(minutes=20),
             finished, 300, 400, True)
        )  # fmt: skip
        players = rng.sample(range(PLAYER_POOL), 4)
        scores = [rng.randrange(0, 41) for _ in range(4)]
        top = max(scores)
        for seat in range(4):
            pid = None if rng.random() < 0.1 else f"player{players[seat]:05d}"
            rank = 1 + sum(1 for s in scores if s > scores[seat])
            seat_rows.append((game_id, seat, f"name{seat}", None, pid, finished))
            result_rows.append(
                (game_id, seat, pid, scores[seat], colors, rank, scores[seat] == top,
                 rng.randrange(11), rng.randrange(3), rng.randrange(40),
                 int(rng.random() < 0.05), rng.randrange(7))
            )  # fmt: skip
    return game_rows, seat_rows, result_rows


async def load_synthetic(url: str, games: int) -> float:
    start = time.perf_counter()
    game_rows, seat_rows, result_rows = synthetic_rows(games)
    dsn = make_url(url).set(drivername="postgresql").render_as_string(False)
    conn = await asyncpg.connect(dsn)
    try:
        async with conn.transaction():
            await conn.copy_records_to_table(
                "games",
                records=game_rows,
                columns=["id", "player_count", "rules", "seed", "deck", "schema_version",
                         "created_at", "finished_at", "version", "event_count", "ranked"],
            )  # fmt: skip
            await conn.copy_records_to_table(
                "seats",
                records=seat_rows,
                columns=["game_id", "seat", "name", "bot", "player_id", "finished_at"],
            )
            await conn.copy_records_to_table(
                "results",
                records=result_rows,
                columns=["game_id", "seat", "player_id", "score", "colors", "rank", "winner",
                         "currency", "bust", "cards", "perfect_colors", "busts"],
            )  # fmt: skip
        await conn.execute("VACUUM ANALYZE")
    finally:
        await conn.close()
    return time.perf_counter() - start


async def timed(queries: int, call: Callable[[], Awaitable[Any]]) -> tuple[float, float]:
    await call()  # warm: plan cache, pool, buffers
    samples = []
    for _ in range(queries):
        start = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - start)
    return percentiles(samples)


async def bench_leaderboard(args: argparse.Namespace) -> None:
    async with scratch_database(args.server, prefix="ten_bench") as url:
        await upgrade_async(url)
        took = await load_synthetic(url, args.synthetic)
        print(
            f"loaded {args.synthetic:,} synthetic games ({args.synthetic * 4:,} seats and "
            f"results, no events) by COPY in {took:.1f} s"
        )
        archive = SqlArchive(make_engine(url))
        try:
            cases: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
                ("leaderboard by wins, top 50", lambda: archive.leaderboard("wins")),
                ("leaderboard by mean score, top 50", lambda: archive.leaderboard("mean_score")),
                (
                    "leaderboard by wins, min 45 games, offset 1000",
                    lambda: archive.leaderboard("wins", min_games=45, offset=1000),
                ),
                ("player stats (one player)", lambda: archive.player_stats("player01234")),
                (
                    "player history, first page of 50",
                    lambda: archive.list_games(player_id="player01234"),
                ),
                ("all games, first page of 50", archive.list_games),
            ]
            for name, call in cases:
                p50, p99 = await timed(args.queries, call)
                print(f"{name:<44} p50 {p50 * 1000:7.2f} ms   p99 {p99 * 1000:7.2f} ms")
        finally:
            await archive.close()


def percentiles(samples: list[float]) -> tuple[float, float]:
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return statistics.median(samples), cuts[98]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", default=PG_SERVER, help="PostgreSQL server URL")
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--synthetic", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    await bench_archiving(args)
    await bench_leaderboard(args)


if __name__ == "__main__":
    asyncio.run(main())
