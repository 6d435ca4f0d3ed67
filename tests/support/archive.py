"""The archive service over real processes and servers (tests/integration/test_archive_service.py,
the webhooks and lobby tests): service processes started together, a Redis logical database
of the test's own for the archive queue, a throwaway migrated PostgreSQL archive."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import redis
from sqlalchemy import func, pool, select

from infra.archive import make_engine, upgrade
from infra.archive.models import events as events_table
from infra.archive.models import games, results, seats
from tests.servers import ServiceProcess
from tests.support.replayed import replay_archive
from tests.support.scratch import scratch_database

PG_SERVER = os.environ.get("TEN_TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")


# the documented Redis layout (infra/queues.py): the archive queue's jobs, and all its keys
OUTBOX_KEY = "{ten:q:archive}:jobs"
QUEUE_KEYS = [
    f"{{ten:q:{queue}}}:{part}"
    for queue in ("archive", "relay", "webhooks", "reviews", "tournaments", "bulk")
    for part in ("jobs", "due", "token", "fails", "quarantine", "why", "done")
]


CLAIM_KEY = "ten:test:archive-service:claim"


@contextlib.contextmanager
def servers(
    tmp_path: Path, *envs: dict[str, str], cwd: Path | None = None
) -> Iterator[list[ServiceProcess]]:
    """Start one process per env at once (they start, and migrate, concurrently); each one's
    output goes to a log file (`server.log()`, read when a check fails)."""
    started: list[ServiceProcess] = []
    try:
        for i, env in enumerate(envs):
            log = tmp_path / f"server-{i}-{secrets.token_hex(3)}.log"
            started.append(ServiceProcess(env, stdout=log, cwd=cwd, wait=False))
        deadline = time.monotonic() + 30
        for server in started:
            server.wait_healthy(deadline)
        yield started
    finally:
        for server in started:
            server.stop()


@contextlib.contextmanager
def claim_redis_db(redis_url: str) -> Iterator[tuple[str, redis.Redis]]:
    """A Redis logical database no other test of this module uses meanwhile (a claim key
    with an expiry); its outbox starts empty. Yields its URL and a client."""
    parts = urlsplit(redis_url)
    taken = parts.path.strip("/") or "0"
    token = secrets.token_hex(8)
    for db in range(15, 0, -1):
        if str(db) == taken:
            continue
        client = redis.Redis.from_url(parts._replace(path=f"/{db}").geturl())
        if client.set(CLAIM_KEY, token, nx=True, ex=600):
            break
        client.close()
    else:
        pytest.fail("no free Redis logical database to isolate the archive outbox in")
    try:
        client.delete(*QUEUE_KEYS)  # left by an interrupted run of this module
        yield parts._replace(path=f"/{db}").geturl(), client
    finally:
        client.delete(*QUEUE_KEYS)
        games_left = list(client.scan_iter(match="{game:*", count=1000))  # finished: kept 24 h
        for i in range(0, len(games_left), 500):
            client.delete(*games_left[i : i + 500])
        if client.get(CLAIM_KEY) == token.encode():
            client.delete(CLAIM_KEY)
        client.close()


@contextlib.contextmanager
def in_process_replicas(
    kind: str, settings: Callable[[str | None], Any], request: pytest.FixtureRequest, left: str
) -> Iterator[tuple[Any, Any]]:
    """(the client a test drives, the client it reads from): one in-process app on the
    embedded store (`settings(None)`), or two on one Redis database of the test's own
    (`settings(url)`; the keys matching `left`, the capability's own, deleted afterwards)."""
    from litestar.testing import TestClient

    from service.entrypoints.api.app import create_app

    if kind == "memory":
        with TestClient(create_app(settings(None))) as client:
            yield client, client
        return
    with claim_redis_db(request.getfixturevalue("redis_url")) as (url, raw):
        try:
            one, two = create_app(settings(url)), create_app(settings(url))
            with TestClient(one) as first, TestClient(two) as second:
                yield first, second
        finally:
            found = list(raw.scan_iter(match=left, count=1000))
            if found:
                raw.delete(*found)


class ArchiveDb:
    """A throwaway archive database, read directly (never through the service)."""

    def __init__(self, url: str, runner: asyncio.Runner) -> None:
        self.url = url
        self.runner = runner
        self.engine = make_engine(url, poolclass=pool.NullPool)

    def counts(self, ids: list[str]) -> dict[str, tuple[int, int, int, int]]:
        """Per game id: rows in games, seats, results, events."""

        async def body() -> dict[str, tuple[int, int, int, int]]:
            found: dict[str, list[int]] = {game_id: [0, 0, 0, 0] for game_id in ids}
            async with self.engine.connect() as conn:
                for i, (table, column) in enumerate(
                    (
                        (games, games.c.id),
                        (seats, seats.c.game_id),
                        (results, results.c.game_id),
                        (events_table, events_table.c.game_id),
                    )
                ):
                    rows = await conn.execute(
                        select(column, func.count())
                        .select_from(table)
                        .where(column.in_(ids))
                        .group_by(column)
                    )
                    for game_id, count in rows:
                        found[game_id][i] = count
            return {game_id: tuple(c) for game_id, c in found.items()}  # type: ignore[misc]

        return self.runner.run(body())

    def total_games(self) -> int:
        async def body() -> int:
            async with self.engine.connect() as conn:
                return (await conn.execute(select(func.count()).select_from(games))).scalar_one()

        return self.runner.run(body())


@contextlib.contextmanager
def sqlite_database(path: Path) -> Iterator[ArchiveDb]:
    """The SQLite archive at `path` (the embedded default's file), read directly."""
    runner = asyncio.Runner()
    db = ArchiveDb(f"sqlite+aiosqlite:///{path}", runner)
    try:
        yield db
        if path.exists():
            replay_archive(db.url, runner)  # every game the service archived replays
    finally:
        runner.run(db.engine.dispose())
        runner.close()


@contextlib.contextmanager
def pg_database(*, migrate: bool = True) -> Iterator[ArchiveDb]:
    """A throwaway PostgreSQL database (dropped afterwards), migrated unless told not to."""
    runner = asyncio.Runner()
    scratch = scratch_database(PG_SERVER, prefix="ten_svc_test")
    try:
        url = runner.run(scratch.__aenter__())
    except OSError as exc:
        runner.close()
        pytest.fail(f"PostgreSQL is not reachable ({exc}); start it (see scripts/services)")
    try:
        if migrate:
            upgrade(url)
        db = ArchiveDb(url, runner)
        try:
            yield db
            replay_archive(url, runner)  # every game the service archived replays
        finally:
            runner.run(db.engine.dispose())
    finally:
        runner.run(scratch.__aexit__(None, None, None))
        runner.close()


def served_on(
    setup: str, stack: contextlib.ExitStack, tmp_path: Path, request: pytest.FixtureRequest
) -> tuple[httpx.Client, ArchiveDb]:
    """A service process as `setup` says, with a client on it and its archive database:
    "redis+postgresql" (a Redis database of its own, a throwaway PostgreSQL database the
    service migrates at start) or "embedded+sqlite" (the embedded default, configured with
    nothing at all: the in-process store and ./ten-archive.sqlite3 in its working
    directory, migrated at start)."""
    if setup == "redis+postgresql":
        url, _ = stack.enter_context(claim_redis_db(request.getfixturevalue("redis_url")))
        db = stack.enter_context(pg_database(migrate=False))
        env = {"TEN_REDIS_URL": url, "TEN_DATABASE_URL": db.url, "TEN_MIGRATE_ON_START": "true"}
        (server,) = stack.enter_context(servers(tmp_path, env))
    else:
        workdir = tmp_path / "embedded"
        workdir.mkdir()
        (server,) = stack.enter_context(servers(tmp_path, {}, cwd=workdir))
        db = stack.enter_context(sqlite_database(workdir / "ten-archive.sqlite3"))
    return stack.enter_context(httpx.Client(base_url=server.base, timeout=10)), db
