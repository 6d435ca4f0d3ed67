"""The lobby's requests next to the read ceiling: server CPU per request, in-process.

Run: `.venv/bin/python bench/bench_lobby_http.py [--tables 1000,10000]` (Redis at 127.0.0.1:6379
db 13, flushed at start and at the end; prints figures, asserts nothing; about a minute).

The service app and the ceiling app (`bench/ceiling_app.py`) are driven as ASGI in this
process (no sockets, no uvicorn: the same for every row) and the CPU each request costs is
measured in turns (`breakdown_http.interleaved`: rounds of 150 calls of each case, medians),
so the machine's load weighs on every row alike. Rows:

- read ceiling: `GET /ceiling/read/{n}` (HGET one game record, decode, JSON reply);
- getGame: `GET /v1/games/{id}` of a table;
- listGames: one page of 20 public open tables, with N open tables in the lobby (N from
  `--tables`): the first page, and a page after a cursor from the middle;
- joinGame: `POST /v1/games/{id}/seats` on tables of five open seats made ahead (a fresh
  table after every five joins, the fifth join starting the game);

and each row's share of the read ceiling (ceiling CPU / row CPU: 100% = as cheap as the
ceiling's read).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

os.environ["TEN_REDIS_URL"] = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/13")
os.environ.setdefault("TEN_DATABASE_URL", f"sqlite+aiosqlite:///{tempfile.mkdtemp()}/a.sqlite3")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.breakdown_http import Asgi, interleaved
from service.core.settings import Settings
from service.entrypoints.api.app import create_app

OPEN5 = json.dumps({"players": [{"open": True}] * 5}).encode()


async def started(app) -> None:
    inbox: asyncio.Queue = asyncio.Queue()
    outbox: asyncio.Queue = asyncio.Queue()
    await inbox.put({"type": "lifespan.startup"})
    scope = {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}
    asyncio.get_running_loop().create_task(app(scope, inbox.get, outbox.put))
    assert (await outbox.get())["type"] == "lifespan.startup.complete"


async def fill_lobby(client: Asgi, total: int, made: int) -> int:
    """Open tables until the lobby holds `total` (through the API: the listings as served)."""
    while made < total:
        status, _ = await client.request("POST", "/v1/games", OPEN5)
        assert status == 201, status
        made += 1
    return made


async def main(sizes: list[int]) -> None:
    import redis.asyncio as aioredis

    raw = aioredis.Redis.from_url(os.environ["TEN_REDIS_URL"])
    await raw.flushdb()
    app = create_app(Settings.from_env())
    await started(app)
    client = Asgi(app)
    _, body = await client.request("POST", "/v1/games", OPEN5)
    table_id = json.loads(body)["id"]
    os.environ["CEILING_READ_BYTES"] = str(
        len((await client.request("GET", f"/v1/games/{table_id}"))[1])
    )
    from bench import ceiling_app

    await started(ceiling_app.app)
    ceiling = Asgi(ceiling_app.app)
    await raw.hset(
        "{bench:ceil}:0", mapping={"v": 0, "rec": await raw.hget(f"{{game:{table_id}}}", "rec")}
    )
    joinable: list[str] = []

    async def ceil_read() -> None:
        await ceiling.request("GET", "/ceiling/read/0")

    async def get_table() -> None:
        await client.request("GET", f"/v1/games/{table_id}")

    async def join() -> None:
        if not joinable:
            _, made = await client.request("POST", "/v1/games", OPEN5)
            joinable.extend([json.loads(made)["id"]] * 5)
        status, _ = await client.request(
            "POST", f"/v1/games/{joinable.pop()}/seats", b'{"name":"Bench"}'
        )
        assert status == 201, status

    made = 1
    print(f"CPU us per request, in-process, in turns (load average {os.getloadavg()[0]:.2f})")
    for size in sizes:
        made = await fill_lobby(client, size, made)
        status, page = await client.request("GET", "/v1/games?limit=20")
        assert status == 200, (status, page[:300])
        middle = json.loads(page)["next_cursor"]
        for _ in range(size // 40):  # walk to the middle of the listing
            _, page = await client.request("GET", f"/v1/games?limit=20&cursor={middle}")
            middle = json.loads(page)["next_cursor"] or middle

        async def first_page() -> None:
            await client.request("GET", "/v1/games?limit=20")

        async def later_page(cursor: str = middle) -> None:
            await client.request("GET", f"/v1/games?limit=20&cursor={cursor}")

        turns = await interleaved(
            {
                "read ceiling": (ceil_read, None),
                "getGame (a table)": (get_table, None),
                f"listGames, first page of 20 ({size} open)": (first_page, None),
                f"listGames, a middle page ({size} open)": (later_page, None),
                "joinGame": (join, None),
            },
            rounds=8,
            per_round=60,
        )
        ceiling_us = turns["read ceiling"]
        for name, us in turns.items():
            print(f"  {name:48} {us:8.1f} us  {ceiling_us / us * 100:5.0f}% of the read ceiling")
    await raw.flushdb()
    await raw.aclose()


if __name__ == "__main__":
    import uvloop

    parser = argparse.ArgumentParser()
    parser.add_argument("--tables", default="1000,10000")
    uvloop.run(main([int(n) for n in parser.parse_args().tables.split(",")]))
