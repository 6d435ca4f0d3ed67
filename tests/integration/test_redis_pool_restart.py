"""The pooled connections of a Redis client (`infra.redis_client.connect`) after Redis was
restarted (SIGKILL or SHUTDOWN): none fails its next command. Without the health check, each
connection pooled before the restart failed once ("Connection closed by server."), seconds
or minutes later, whenever it was next taken: a 503 long after Redis was back (bench/soak.py
found one 15 s after)."""

from __future__ import annotations

import asyncio

import pytest

from infra.redis_client import HEALTH_CHECK_SECONDS, connect
from tests.servers import RedisServer


@pytest.mark.parametrize("how", ["kill", "shutdown"])
def test_connections_pooled_before_a_restart_serve_after_it(how: str) -> None:
    server = RedisServer("--appendonly", "yes")

    async def body() -> list[BaseException]:
        client = connect(server.url, max_connections=20)
        try:
            # ten connections in the pool, each used once
            await asyncio.gather(*[client.blpop(["nothing"], timeout=0.1) for _ in range(10)])
            server.kill() if how == "kill" else server.shutdown()
            server.start()
            await asyncio.sleep(HEALTH_CHECK_SECONDS + 0.2)  # idle past the check's interval
            failures: list[BaseException] = []
            for _ in range(5):
                got = await asyncio.gather(
                    *[client.set("k", "v") for _ in range(10)], return_exceptions=True
                )
                failures += [g for g in got if isinstance(g, BaseException)]
            return failures
        finally:
            await client.aclose()

    try:
        assert asyncio.run(body()) == []
    finally:
        server.close()
