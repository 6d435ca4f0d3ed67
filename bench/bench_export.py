"""The archive's bulk export (`GET /v1/archive/export`, docs/records.md) over an archive of
`--games` games: time, the server's peak memory, and every record replayed. Prints
figures, asserts nothing.

    .venv/bin/python bench/bench_export.py [--dialect postgresql|sqlite|both] [--games 100000]
                                           [--templates 40] [--server URL] [--keep FILE]

1. Fill (not the measure): `--templates` whole bot games of 1 to 5 seats are simulated and
   archived in memory (`service.history.archiving.archival`), then copied with new ids, end
   times a few seconds apart and player ids from a pool of 5,000 into a throwaway migrated
   database (PostgreSQL: COPY; SQLite: executemany on the file), every row of them: games,
   seats, results and whole event logs.
2. Export: a service process (`uvicorn service.app:app`, one worker) on that database; the
   whole archive is streamed over HTTP with the platform's API key and written to a file.
   Shown: wall time, records and bytes a second, the server's peak resident memory
   (VmHWM) before and after the export, with the size of the archive for scale.
3. Replay: every exported record is checked with the engine as `python -m service.cli
   records check` does (`service.entrypoints.record_check.check_one`), in a pool of
   processes; shown: time and the number that failed (expected 0).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sqlite3
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import msgspec
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `tests.support`, `tests.servers`

from domain.bots.simulation import play_game
from infra.archive import upgrade
from infra.archive.rows import ArchiveRows, archive_rows
from service.core.model import GameRecord
from service.entrypoints.record_check import check_one
from service.games.use_cases import encode_events
from service.history.archiving import archival
from tests.servers import ServiceProcess
from tests.support.scratch import scratch_database

PG_SERVER = os.environ.get("TEN_TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
SQLITE_SERVER = "sqlite+aiosqlite:///bench.sqlite3"
API_KEY = "bench-export-key-0123456789abcdef"
PLAYERS = 5_000
BATCH = 2_000  # games a batch of the fill
BASE = datetime(2025, 1, 1, tzinfo=UTC)
TABLES = ("games", "seats", "results", "events")


def templates(count: int) -> list[ArchiveRows]:
    """Whole bot games of 1 to 5 seats, as the archive's rows."""
    made = []
    now = time.time()
    for i in range(count):
        n = 1 + i % 5
        sim = play_game([random.Random(i).choice(("random", "basic")) for _ in range(n)], f"x/{i}")
        record = GameRecord(
            id=f"t{i:019x}",
            state=sim.state,
            token_hashes=(None,) * n,
            created_at=now - 600,
            updated_at=now,
        )
        kept = archival(record, encode_events(sim.events), [None] * n)
        made.append(archive_rows(kept))
    return made


Batch = dict[str, tuple[list[str], list[tuple[Any, ...]]]]


class Template(msgspec.Struct):
    """A game's rows with their columns, JSON already text: only the id, the times and the
    player ids change from copy to copy."""

    game: dict[str, Any]
    seats: list[dict[str, Any]]
    results: list[dict[str, Any]]
    events: list[tuple[int, str, str]]


def template(rows: ArchiveRows) -> Template:
    def texts(row: dict[str, Any]) -> dict[str, Any]:
        return {c: _json(v) if c in JSON_COLUMNS else v for c, v in row.items()}

    return Template(
        game=texts(rows.game),
        seats=rows.seats,
        results=[texts(r) for r in rows.results],
        events=[(e["seq"], e["type"], e["data"]) for e in rows.events],
    )


def batches(rows: list[ArchiveRows], games: int, when: Any) -> Iterator[Batch]:
    """The copies, `BATCH` games at a time: new id, end time and player ids; `when` writes
    an instant as the database takes it."""
    rng = random.Random(5)
    made = [template(r) for r in rows]
    game_cols, seat_cols, result_cols = (
        list(made[0].game),
        list(made[0].seats[0]),
        list(made[0].results[0]),
    )
    event_cols = ["game_id", "seq", "type", "data"]
    batch: dict[str, list[tuple[Any, ...]]] = {t: [] for t in TABLES}
    for i in range(games):
        t = made[i % len(made)]
        game_id = f"{i:020x}"
        ended = BASE + timedelta(seconds=7 * i)
        end = when(ended)
        game = {
            **t.game,
            "id": game_id,
            "finished_at": end,
            "created_at": when(ended - timedelta(minutes=20)),
        }
        batch["games"].append(tuple(game[c] for c in game_cols))
        ids = {s["seat"]: f"player{rng.randrange(PLAYERS):05d}" for s in t.seats}
        if len(set(ids.values())) < len(ids):  # one id in one seat at most
            ids = {seat: f"{pid}-{seat}" for seat, pid in ids.items()}
        for s in t.seats:
            seat = {**s, "game_id": game_id, "player_id": ids[s["seat"]], "finished_at": end}
            batch["seats"].append(tuple(seat[c] for c in seat_cols))
        for r in t.results:
            result = {**r, "game_id": game_id, "player_id": ids[r["seat"]]}
            batch["results"].append(tuple(result[c] for c in result_cols))
        batch["events"].extend((game_id, *e) for e in t.events)
        if (i + 1) % BATCH == 0 or i + 1 == games:
            columns = {
                "games": game_cols,
                "seats": seat_cols,
                "results": result_cols,
                "events": event_cols,
            }
            yield {table: (columns[table], batch[table]) for table in TABLES}
            batch = {t: [] for t in TABLES}


def _json(value: Any) -> str:
    return msgspec.json.encode(value).decode()


JSON_COLUMNS = {"rules", "deck", "unranked_reasons", "colors"}


async def fill_postgresql(url: str, rows: list[ArchiveRows], games: int) -> None:
    dsn = make_url(url).set(drivername="postgresql").render_as_string(False)
    conn = await asyncpg.connect(dsn)
    try:
        for batch in batches(rows, games, lambda at: at):
            async with conn.transaction():
                for table in TABLES:
                    columns, records = batch[table]
                    await conn.copy_records_to_table(table, records=records, columns=columns)
        await conn.execute("VACUUM ANALYZE")
    finally:
        await conn.close()


def sqlite_time(at: datetime) -> str:
    """SQLAlchemy's UTC text of an instant on SQLite (infra.archive.models.UTCDateTime)."""
    return at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


def fill_sqlite(url: str, rows: list[ArchiveRows], games: int) -> None:
    db = sqlite3.connect(make_url(url).database)
    db.execute("PRAGMA synchronous = OFF")
    try:
        for batch in batches(rows, games, sqlite_time):
            with db:
                for table in TABLES:
                    columns, records = batch[table]
                    marks = ", ".join("?" * len(columns))
                    db.executemany(
                        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", records
                    )
        db.execute("ANALYZE")
    finally:
        db.close()


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def export(url: str, out: Path) -> dict[str, float]:
    env = {"TEN_DATABASE_URL": url, "TEN_API_KEYS": API_KEY, "TEN_MIGRATE_ON_START": "false"}
    server = ServiceProcess(env, stdout=out.with_suffix(".log"))
    try:
        with httpx.Client(base_url=server.base, timeout=600) as client:
            client.get("/v1/archive/games/", headers={"X-API-Key": API_KEY})  # warm
            before = peak_rss_mib(server.proc.pid)
            start = time.perf_counter()
            records = size = 0
            with (
                out.open("wb") as sink,
                client.stream("GET", "/v1/archive/export", headers={"X-API-Key": API_KEY}) as got,
            ):
                got.raise_for_status()
                last = b""
                for chunk in got.iter_bytes():
                    sink.write(chunk)
                    size += len(chunk)
                    records += chunk.count(b"\n")
                    last = (last + chunk)[-4096:]
            took = time.perf_counter() - start
            end = msgspec.json.decode(last.splitlines()[-1])  # the trailer, no record
            records -= 1
            if end != {"type": "end", "count": records, "complete": True}:
                raise SystemExit(f"the export did not end whole: {end}")
            after = peak_rss_mib(server.proc.pid)
    finally:
        server.stop()
    return {
        "records": records,
        "bytes": size,
        "seconds": took,
        "rss_before": before,
        "rss_after": after,
    }


def check_lines(lines: list[bytes]) -> int:
    return sum(check_one(line) is not None for line in lines)


def replay(path: Path, processes: int) -> tuple[int, int, float]:
    """(records, failures, seconds) of checking every line of `path`."""
    start = time.perf_counter()
    records = failures = 0
    with ProcessPoolExecutor(processes) as pool, path.open("rb") as lines:
        pending = []
        chunk: list[bytes] = []
        for line in lines:
            if line.startswith(b'{"type":"end"'):  # the export's trailer (checked on export)
                continue
            chunk.append(line)
            if len(chunk) == 500:
                pending.append(pool.submit(check_lines, chunk))
                records += len(chunk)
                chunk = []
            if len(pending) >= 4 * processes:  # a bounded backlog
                failures += pending.pop(0).result()
        if chunk:
            pending.append(pool.submit(check_lines, chunk))
            records += len(chunk)
        failures += sum(f.result() for f in pending)
    return records, failures, time.perf_counter() - start


async def run(dialect: str, args: argparse.Namespace, rows: list[ArchiveRows]) -> None:
    server = args.server or (PG_SERVER if dialect == "postgresql" else SQLITE_SERVER)
    async with scratch_database(server, prefix="ten_bench_export") as url:
        await asyncio.to_thread(upgrade, url)
        start = time.perf_counter()
        if dialect == "postgresql":
            await fill_postgresql(url, rows, args.games)
        else:
            await asyncio.to_thread(fill_sqlite, url, rows, args.games)
        print(f"[{dialect}] filled {args.games:,} games in {time.perf_counter() - start:.0f} s")
        with tempfile.TemporaryDirectory(prefix="ten-bench-export-") as tmp:
            out = Path(args.keep) if args.keep else Path(tmp) / "export.ndjson"
            got = await asyncio.to_thread(export, url, out)
            mib = got["bytes"] / 2**20
            print(
                f"[{dialect}] export: {got['records']:,.0f} records, {mib:,.0f} MiB in "
                f"{got['seconds']:.1f} s ({got['records'] / got['seconds']:,.0f} records/s, "
                f"{mib / got['seconds']:.1f} MiB/s); server peak RSS {got['rss_before']:.0f} MiB "
                f"before, {got['rss_after']:.0f} MiB after"
            )
            records, failures, took = await asyncio.to_thread(replay, out, args.processes)
            print(
                f"[{dialect}] replay: {records:,} records checked in {took:.1f} s with "
                f"{args.processes} processes ({records / took:,.0f}/s): {failures} failed"
            )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dialect", choices=("postgresql", "sqlite", "both"), default="both")
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--templates", type=int, default=40)
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--server", help="the database server (default: the test servers)")
    parser.add_argument("--keep", help="write the export here (default: a temporary file)")
    args = parser.parse_args()
    rows = templates(args.templates)
    events = sum(len(r.events) for r in rows) / len(rows)
    print(f"{args.templates} template games, {events:.0f} events a game on average")
    for dialect in ("postgresql", "sqlite") if args.dialect == "both" else (args.dialect,):
        await run(dialect, args, rows)


if __name__ == "__main__":
    asyncio.run(main())
