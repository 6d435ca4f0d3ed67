"""Listing open games at the store level: one page (20 games) of the "open" listing among
1,000 / 10,000 / 100,000 open tables, on Redis and on the embedded store. Prints figures,
asserts nothing.

    .venv/bin/python bench/bench_lobby.py [--redis redis://127.0.0.1:6379/15]
                                          [--sizes 1000,10000,100000] [--pages 2000]

One listing per size (open 4-seat tables, the host seated, three seats open, created one
second apart). On Redis the keys are written as the store lays them out
(`infra/redis_layout.py`: each game's hash, the listing's sorted set) in pipelines of 500
games, under key prefixes and game ids of this run's, all deleted at the end (they also
expire after an hour). The embedded store (one per size) is filled through `create`.

Two kinds of page are timed, `--pages` of each per size, on one connection: the first page
(the newest games: what a lobby shows) and a page after a cursor drawn at random over the
whole listing (the (created_at, id) of a listed game, as a client paging deep sends). The
sizes and kinds take turns, in 10 rounds, so the machine's load drifts alike over them all.
Shown: the median and p99 microseconds per page, and pages per second (from the mean).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import secrets
import statistics
import sys
import time
from pathlib import Path

import msgspec
import redis

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from infra.memory_store import MemoryGameStore
from infra.redis_store import RedisGameStore
from service.core.model import OPEN_INDEX, GameRecord, Seat, Table
from service.core.ports import GameStore

PAGE = 20
START = 1_760_000_000.0
EXPIRY = 3600  # seconds: the bench's keys go by themselves if it is stopped half-way
BATCH = 500  # games per pipeline when filling (3 commands each)
ROUNDS = 10


def open_table(n: int, run: str) -> GameRecord:
    game_id = f"{run}{n:010d}"  # the cursor of a page after it: (START + n, this id)
    host = f"host-{n}"
    seats = (Seat(name=host, player_id=host), *(Seat(open=True) for _ in range(3)))
    return GameRecord(
        id=game_id,
        state=None,
        token_hashes=(None,) * 4,
        created_at=START + n,
        updated_at=START + n,
        player_ids=(host, None, None, None),
        verified=(False,) * 4,
        table=Table(seats=seats),
        host_id=host,
    )


KINDS = ("first page", "page after a cursor")


async def time_pages(store: GameStore, run: str, size: int, pages: int, kind: str) -> list[float]:
    """Seconds per page: the first page, or pages after cursors drawn over the listing
    (each the (created_at, id) of a listed game, as the last game of a previous page)."""
    rng = random.Random()
    spent = []
    for _ in range(pages):
        before = None
        if kind != "first page":
            n = rng.randrange(PAGE, size)
            before = (START + n, f"{run}{n:010d}")
        start = time.perf_counter()
        found = await store.list_games(OPEN_INDEX, before, PAGE)
        spent.append(time.perf_counter() - start)
        assert len(found) == PAGE, len(found)  # a bench fault, not a measure
    return spent


async def measure(name: str, stores: dict[int, tuple[GameStore, str]], pages: int) -> None:
    """Each size and kind of page in turn, ROUNDS times (the machine's load drifts alike
    over them all), then one line each."""
    spent: dict[tuple[int, str], list[float]] = {}
    for _ in range(ROUNDS):
        for size, (store, run) in stores.items():
            for kind in KINDS:
                timed = await time_pages(store, run, size, pages // ROUNDS, kind)
                spent.setdefault((size, kind), []).extend(timed)
    for (size, kind), timed in spent.items():
        median, mean = statistics.median(timed), statistics.fmean(timed)
        p99 = statistics.quantiles(timed, n=100)[98]
        print(
            f"{name:<7} {size:>7,} open  {kind:<19}  median {median * 1e6:6.1f} us/page "
            f"(p99 {p99 * 1e6:7.1f})  {1 / mean:7,.0f} pages/s"
        )


def fill_redis(client: redis.Redis, run: str, prefix: str, size: int) -> None:
    """A listing of `size` games, written as the Redis store lays them out, 1,000 commands
    or so per pipeline."""
    index_key = f"{prefix}{{{OPEN_INDEX}}}"
    for start in range(0, size, BATCH):
        pipe = client.pipeline(transaction=False)
        members = {}
        for n in range(start, min(start + BATCH, size)):
            record = open_table(n, run)
            key = f"{{game:{record.id}}}"
            pipe.hset(key, mapping={"v": record.version, "rec": msgspec.msgpack.encode(record)})
            pipe.expire(key, EXPIRY)
            members[record.id] = record.created_at
        pipe.zadd(index_key, members)
        pipe.expire(index_key, EXPIRY)
        pipe.execute()


def clean_redis(client: redis.Redis, run: str, prefix: str, size: int) -> None:
    client.delete(f"{prefix}{{{OPEN_INDEX}}}")
    for start in range(0, size, BATCH):
        ids = (f"{run}{n:010d}" for n in range(start, min(start + BATCH, size)))
        client.delete(*[f"{{game:{game_id}}}" for game_id in ids])


async def bench_redis(url: str, sizes: list[int], pages: int) -> None:
    """One listing per size, each under its own key prefix and game ids."""
    client = redis.Redis.from_url(url)
    token = secrets.token_hex(5)
    listings = {size: (f"{token}s{size}n", f"ten:bench-lobby:{token}:{size}:") for size in sizes}
    stores: dict[int, tuple[GameStore, str]] = {}
    try:
        started = time.perf_counter()
        for size, (run, prefix) in listings.items():
            fill_redis(client, run, prefix, size)
            stores[size] = (RedisGameStore(url, index_prefix=prefix), run)
        print(f"redis: {sum(sizes):,} tables written in {time.perf_counter() - started:.1f} s")
        await measure("redis", stores, pages)
    finally:
        for store, _ in stores.values():
            await store.close()
        for size, (run, prefix) in listings.items():
            clean_redis(client, run, prefix, size)
        client.close()


async def bench_memory(sizes: list[int], pages: int) -> None:
    stores: dict[int, tuple[GameStore, str]] = {}
    for size in sizes:
        store = MemoryGameStore()
        for n in range(size):
            await store.create(open_table(n, "m"), [], EXPIRY)
        stores[size] = (store, "m")
    await measure("memory", stores, pages)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/15")
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--pages", type=int, default=2000)
    args = parser.parse_args()
    sizes = sorted(int(size) for size in args.sizes.split(","))
    info = redis.Redis.from_url(args.redis).info("server")
    print(f"page of {PAGE}, {args.pages} pages of each kind; redis-server {info['redis_version']}")
    asyncio.run(bench_redis(args.redis, sizes, args.pages))
    asyncio.run(bench_memory(sizes, args.pages))


if __name__ == "__main__":
    main()
