"""Fixtures of the fault tests: a private redis-server (or PostgreSQL cluster) per test, never
the shared one, so a test can stop, kill and restart it; service processes pointed at it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.servers import PostgresServer, RedisServer


@pytest.fixture
def private_redis() -> Iterator[RedisServer]:
    """A redis-server of this test alone, persisting to an append-only file fsynced on every
    write (what the Helm chart's README asks of production), on a free loopback port."""
    server = RedisServer("--appendonly", "yes", "--appendfsync", "always")
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def private_postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL cluster of this test alone (`initdb` in a temporary directory)."""
    server = PostgresServer()
    try:
        yield server
    finally:
        server.close()
