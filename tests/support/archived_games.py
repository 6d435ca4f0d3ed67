"""Archived games to store and query (tests/integration/test_archive.py, test_ratings.py,
test_luck_ratings.py): a migrated throwaway archive database per dialect (SQLite, PostgreSQL)
with the event loop it lives in, and the rating tables' rows. The games are
tests/support/ended_games.py's."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import pytest
from sqlalchemy import func, select

from infra.archive import SqlArchive, make_engine, upgrade
from infra.archive.models import rated_games, rating_history, ratings
from service.history.ratings import Rating
from tests.support.archive import PG_SERVER
from tests.support.replayed import replay_archive
from tests.support.scratch import scratch_database

SERVERS = {"sqlite": "sqlite+aiosqlite:///archive.sqlite3", "postgresql": PG_SERVER}


DIALECTS = [
    pytest.param(kind, marks=pytest.mark.xdist_group(f"archive-{kind}")) for kind in SERVERS
]


T = TypeVar("T")


class Db:
    """A migrated throwaway database, an archive on it and the event loop it lives in."""

    def __init__(self, kind: str, runner: asyncio.Runner, url: str) -> None:
        self.kind = kind
        self.runner = runner
        self.url = url
        self.archive = SqlArchive(make_engine(url))
        # games the test archives inconsistent on purpose: their records do not replay
        self.unreplayable: set[str] = set()

    def run(self, body: Callable[[SqlArchive], Awaitable[T]]) -> T:
        return self.runner.run(body(self.archive))

    def count(self, table: Any) -> int:
        async def body(archive: SqlArchive) -> int:
            async with archive.engine.connect() as conn:
                return (await conn.execute(select(func.count()).select_from(table))).scalar_one()

        return self.run(body)


@contextmanager
def migrated_database(kind: str) -> Iterator[Db]:
    runner = asyncio.Runner()
    scratch = scratch_database(SERVERS[kind], prefix="ten_test")
    try:
        url = runner.run(scratch.__aenter__())
    except OSError as exc:
        runner.close()
        pytest.fail(f"{kind} is not reachable ({exc}); start it (see scripts/services)")
    try:
        upgrade(url)
        db = Db(kind, runner, url)
        try:
            yield db
            replay_archive(url, runner, frozenset(db.unreplayable))  # every other game replays
        finally:
            runner.run(db.archive.close())
    finally:
        runner.run(scratch.__aexit__(None, None, None))
        runner.close()


def snapshot(db: Db) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the rating tables, in a fixed order."""

    async def body(archive: SqlArchive) -> dict[str, list[tuple[Any, ...]]]:
        async with archive.engine.connect() as conn:
            return {
                "ratings": [
                    tuple(r) for r in await conn.execute(select(ratings).order_by("player_id"))
                ],
                "history": [
                    tuple(r)
                    for r in await conn.execute(select(rating_history).order_by("seq", "player_id"))
                ],
                "rated_games": [
                    tuple(r) for r in await conn.execute(select(rated_games).order_by("seq"))
                ],
            }

    return db.run(body)


def rating_order(db: Db) -> list[str]:
    return [row[1] for row in snapshot(db)["rated_games"]]


def stored_ratings(db: Db) -> dict[str, Rating]:
    return {
        pid: Rating(mu=mu, sigma=sigma, ordinal=ordinal, games=games)
        for pid, mu, sigma, ordinal, games, _ in snapshot(db)["ratings"]
    }
