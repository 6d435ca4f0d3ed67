"""Redis stopped and started again under 200 event streams (issue 15; the 5,000-stream version
is bench/bench_watchers.py --restart): every stream ends cleanly with a `reconnect` event
(reason `store_unavailable`), the process logs it once and no traceback; once Redis is back,
every client that reconnects with Last-Event-ID gets the rest of its game, missing nothing
and repeating nothing."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random

import httpx

from tests.servers import RedisServer, ServiceProcess, wait_until
from tests.support.replicas import replica_env
from tests.support.streams import DECK, AsyncTable, Stream, open_streams, pool

STREAMS, GAMES = 200, 4


async def last_block(stream: Stream) -> dict | None:
    """Read the stream to its end: the data of its `reconnect` event, if it sent one."""
    reconnect = None
    while (block := await stream.block(timeout=20)) is not None:
        if block.get("event") == "reconnect":
            assert block.get("id") is None  # Last-Event-ID stays the last event's
            reconnect = json.loads(block.get("data"))
    return reconnect


async def step_until_done(table: AsyncTable, rng: random.Random) -> None:
    """One action, sent again (same Idempotency-Key) while Redis is coming back."""
    for _ in range(40):
        try:
            await table.step(rng)
            return
        except (AssertionError, httpx.TransportError):
            await asyncio.sleep(0.25)
    raise AssertionError("the action was never applied")


async def log_of(table: AsyncTable) -> list:
    for _ in range(40):
        with contextlib.suppress(AssertionError):
            return await table.log()
        await asyncio.sleep(0.25)
    raise AssertionError("the log was never served")


async def reconnect(http: httpx.AsyncClient, request: httpx.Request) -> httpx.Response:
    """Open the stream; a 503 (a pooled connection Redis dropped) is sent again, and so is a
    request on a kept-alive connection the server closed as it was sent (idle past uvicorn's
    keep-alive timeout while the client waited: "Server disconnected without sending a
    response", or reset: a read error), as any client must expect of a pooled connection."""
    for _ in range(40):
        try:
            response = await http.send(request, stream=True)
        except (httpx.RemoteProtocolError, httpx.ReadError):
            continue
        if response.status_code == 200:
            return response
        await response.aread()
        assert response.status_code == 503, response.text
        assert response.json()["code"] == "store_unavailable"
        await asyncio.sleep(0.25)
    raise AssertionError("the stream was never served again")


async def scenario(base: str, redis: RedisServer) -> None:
    async with pool(base) as http:
        tables = [await AsyncTable.create(http, 2, DECK) for _ in range(GAMES)]
        opened = await open_streams([http], [t.id for t in tables], STREAMS)
        rng = random.Random("faults/watchers")
        for table in tables:
            await table.step(rng)
        seen: dict[int, list] = {}
        for i, (_, _, stream) in enumerate(opened):
            log = await tables[i % GAMES].log()
            seen[i] = await stream.events(len(log))
        await asyncio.to_thread(redis.shutdown)
        ends = await asyncio.gather(*(last_block(s) for _, _, s in opened))
        assert all(end is not None and end["reason"] == "store_unavailable" for end in ends)
        for _, response, _ in opened:
            await response.aclose()
        await asyncio.to_thread(redis.start)
        for table in tables:
            await step_until_done(table, rng)
        logs = [await log_of(table) for table in tables]  # pooled connections Redis dropped: 503s
        for i, (game_id, _, _) in enumerate(opened):  # reconnect with Last-Event-ID
            headers = {"Last-Event-ID": str(seen[i][-1]["seq"])}
            request = http.build_request(
                "GET", f"/v1/games/{game_id}/events/stream", headers=headers
            )
            response = await reconnect(http, request)
            stream = Stream(response)
            log = logs[i % GAMES]
            seen[i] += await stream.events(len(log) - len(seen[i]))
            assert seen[i] == log, i
            await response.aclose()


def test_streams_end_cleanly_when_redis_stops_and_resume_missing_nothing(private_redis, tmp_path):
    env = replica_env(
        private_redis.url, str(tmp_path / "archive.sqlite3"), TEN_SSE_MAX_PER_CLIENT="0"
    )
    service = ServiceProcess(env, stdout=tmp_path / "service.log")
    try:
        asyncio.run(asyncio.wait_for(scenario(service.base, private_redis), 120))
        wait_until(lambda: "event streams" in service.log(), 5, "the store failure logged")
        log = service.log()
        assert log.count("event streams: the game store is unavailable") == 1, log[-3000:]
        assert "Traceback" not in log
    finally:
        service.stop()
