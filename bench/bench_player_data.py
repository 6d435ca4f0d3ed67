"""A player's data at scale: a player with 10,000 archived games (and their rating
history), exported through the real HTTP app (a uvicorn process of its own, the embedded
store, the SQL archive) and then erased. Prints the export's time, lines and bytes, the server process's
peak memory during the export (VmHWM, reset before it), and the erasure's time.

    .venv/bin/python bench/bench_player_data.py                      # SQLite, 10,000 games
    .venv/bin/python bench/bench_player_data.py --database-url postgresql://postgres@127.0.0.1:5432/test
    .venv/bin/python bench/bench_player_data.py --games 1000         # smaller

The games are inserted fast: a few games played by the engine (tests/support/player_data.py)
repeated under new ids, written by `executemany` in batches, each rated for the player.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
from sqlalchemy import insert

from infra.archive import make_engine, upgrade_async
from infra.archive.models import events, games, rated_games, rating_history, ratings, results, seats
from infra.archive.rows import archive_rows
from service.history.archiving import archival
from tests.servers import ServiceProcess
from tests.support.player_data import OTHER, SUBJECT, game
from tests.support.scratch import scratch_database

API_KEY = "bench-platform-key"
HEADERS = {"X-API-Key": API_KEY}
TEMPLATES = 8
BATCH = 250


def templates() -> list:
    """A few finished games of the player, as the archive keeps them."""
    kept = []
    for i in range(TEMPLATES):
        record, stored = game(i)
        kept.append(archive_rows(archival(record, stored, record.player_ids)))
    return kept


def clone(rows, i: int, at: datetime) -> dict[str, list[dict]]:
    """The rows of one template under game id `i`, ended at `at`."""
    game_id = f"{i:020x}"
    out: dict[str, list[dict]] = {"games": [{**rows.game, "id": game_id, "created_at": at,
                                             "finished_at": at}]}  # fmt: skip
    out["seats"] = [{**s, "game_id": game_id, "finished_at": at} for s in rows.seats]
    out["results"] = [{**r, "game_id": game_id} for r in rows.results]
    out["events"] = [{**e, "game_id": game_id} for e in rows.events]
    out["rated_games"] = [{"seq": i + 1, "game_id": game_id}]
    out["rating_history"] = [
        {"player_id": pid, "seq": i + 1, "game_id": game_id, "finished_at": at, "rank": 1 + k,
         "rated_seats": 2, "mu_before": 25.0, "sigma_before": 8.3, "mu": 25.1, "sigma": 8.2,
         "ordinal": 0.5, "games": i + 1}
        for k, pid in enumerate((SUBJECT, OTHER))
    ]  # fmt: skip
    return out


async def insert_games(
    url: str,
    count: int,
    *,
    seated: Callable[[int], dict[str, str]] | None = None,
    logs: bool = True,
) -> float:
    """`count` games of the subject and the other player, each rated for both; `seated`:
    the ids game i seats instead of theirs (bench_reconcile's many players); without
    `logs`, no events."""
    started = time.perf_counter()
    rows = templates()
    engine = make_engine(url)
    base = datetime(2025, 1, 1, tzinfo=UTC)
    tables = {"games": games, "seats": seats, "results": results, "events": events,
              "rated_games": rated_games, "rating_history": rating_history}  # fmt: skip
    rated = {SUBJECT, OTHER} if seated is None else set()
    async with engine.begin() as conn:
        for start in range(0, count, BATCH):
            batch: dict[str, list[dict]] = {name: [] for name in tables}
            for i in range(start, min(count, start + BATCH)):
                ids = {} if seated is None else seated(i)
                rated.update(ids.values())
                for name, kept in clone(
                    rows[i % TEMPLATES], i, base + timedelta(minutes=i)
                ).items():
                    batch[name] += [{**r, "player_id": ids.get(r["player_id"], r["player_id"])}
                                    if ids and "player_id" in r else r for r in kept]  # fmt: skip
            for name, table in tables.items():
                if logs or table is not events:
                    await conn.execute(insert(table), batch[name])
        held = sorted(rated)
        for start in range(0, len(held), BATCH):
            await conn.execute(insert(ratings), [
                {"player_id": pid, "mu": 30.0, "sigma": 2.0, "ordinal": 24.0, "games": count,
                 "updated_at": base} for pid in held[start : start + BATCH]
            ])  # fmt: skip
    await engine.dispose()
    return time.perf_counter() - started


def reset_peak(pid: int) -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # VmHWM back to the current RSS


def memory(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process, in MiB."""
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    fields = dict(line.split(":", 1) for line in status)
    return int(fields["VmRSS"].split()[0]) // 1024, int(fields["VmHWM"].split()[0]) // 1024


def export(base: str, pid: int) -> None:
    reset_peak(pid)
    before, _ = memory(pid)
    started = time.perf_counter()
    lines = size = archived = 0
    url = f"{base}/v1/players/{SUBJECT}/data"
    with httpx.stream("GET", url, headers=HEADERS, timeout=600) as response:
        assert response.status_code == 200, response.status_code
        for line in response.iter_lines():
            lines += 1
            size += len(line)
            archived += line.startswith('{"kind":"archived_game"')
    took = time.perf_counter() - started
    _, peak = memory(pid)
    print(f"export: {lines:,} lines ({archived:,} archived games), {size / 2**20:,.1f} MiB "
          f"in {took:.1f} s ({archived / took:,.0f} games/s); server RSS {before} MiB before, "
          f"peak {peak} MiB during (+{peak - before} MiB)")  # fmt: skip


def run(url: str, count: int) -> None:
    inserted = asyncio.run(insert_games(url, count))
    print(f"inserted {count:,} archived games in {inserted:.1f} s")
    env = {"TEN_API_KEYS": API_KEY, "TEN_DATABASE_URL": url, "TEN_PRIVACY_KEY": "bench-key",
           "TEN_MIGRATE_ON_START": "false"}  # fmt: skip
    server = ServiceProcess(env)
    try:
        export(server.base, server.proc.pid)
        started = time.perf_counter()
        erased = httpx.delete(f"{server.base}/v1/players/{SUBJECT}/data", headers=HEADERS,
                              timeout=600)  # fmt: skip
        took = time.perf_counter() - started
        print(f"erasure: {took:.1f} s: {erased.json()}")
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--database-url", default="sqlite+aiosqlite:///bench.sqlite3",
                        help="the server a throwaway database is made on")  # fmt: skip
    args = parser.parse_args()
    runner = asyncio.Runner()
    context = scratch_database(args.database_url, prefix="ten_bench")
    url = runner.run(context.__aenter__())
    try:
        runner.run(upgrade_async(url))
        run(url, args.games)
    finally:
        runner.run(context.__aexit__(None, None, None))
        runner.close()


if __name__ == "__main__":
    main()
