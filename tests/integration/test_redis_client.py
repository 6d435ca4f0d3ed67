"""`infra.redis_client`'s connections against a frozen Redis (SIGSTOP: it accepts a
connection and answers nothing): a failed health check connects again once and fails, one
PING's and one handshake's timeout later, instead of connecting again and again (each new
connection's handshake asking for a health check of its own) for as long as the stall lasts."""

from __future__ import annotations

import asyncio

import pytest
from redis import exceptions as redis_errors

from infra.redis_client import connect
from tests.servers import RedisServer


def test_a_health_check_against_a_frozen_redis_fails_instead_of_reconnecting_for_good() -> None:
    async def body(server: RedisServer) -> None:
        client = connect(server.url, socket_timeout=0.5, socket_connect_timeout=0.5)
        conn = client.connection_pool.make_connection()
        try:
            await conn.connect()
            with server.frozen():
                conn.next_health_check = -1  # due: the next command would PING first
                async with asyncio.timeout(60):  # a guard: it fails in about a second
                    with pytest.raises((redis_errors.ConnectionError, redis_errors.TimeoutError)):
                        await conn.check_health()
            await conn.disconnect()
            await conn.connect()  # Redis runs again: the connection works again
            await conn.send_command("PING")
            assert await conn.read_response() in (b"PONG", "PONG")
        finally:
            await conn.disconnect()
            await client.aclose()

    server = RedisServer()
    try:
        asyncio.run(body(server))
    finally:
        server.close()
