"""The archive's unit of work (`service.history.archive.ArchiveUnit`): `SqlUnit`, one
transaction on one connection, opened by `SqlArchive.unit`.

Each of its steps is one synchronous function of SQLAlchemy Core on a `Connection`
(`_add_game`, `ratings.hold`, ...), the same code on both databases, run on PostgreSQL
through `AsyncConnection.run_sync` (`OnGreenlet`: asyncpg's own I/O), on a SQLite file in
one thread hop on a synchronous engine of the same file (`OnThread`, `database.sqlite_twin`;
through aiosqlite each statement costs three or four hops to its thread and back). Its
`add_game` inserts a game with its seats, results and events (`rows.archive_rows`), the
game row first with INSERT ... ON CONFLICT DO NOTHING: of several units racing on one game,
PostgreSQL makes the others wait on the primary key until the first commits and then skip;
a unit that inserted nothing writes nothing more and answers False. The ratings' part is
`ratings` (held, saved, read in rating order and replaced).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from typing import Any, TypeVar

from sqlalchemy import insert, text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.ext.asyncio import AsyncConnection

from service.history.archive import Archival, GameRating, RankedGame
from service.history.ratings import Rating

from .models import results, seats
from .ratings import hold as hold_ratings
from .ratings import is_rated, ranked_games
from .ratings import replace as replace_ratings
from .ratings import save as save_ratings
from .rows import ArchiveRows, archive_rows

_T = TypeVar("_T")

_PG_INSERT_EVENTS = text(
    "INSERT INTO events (game_id, seq, type, data) "
    "SELECT :game_id, e.seq, e.type, e.data FROM unnest("
    "CAST(:seqs AS integer[]), CAST(:types AS varchar[]), CAST(:datas AS text[])"
    ") AS e(seq, type, data)"
)

_SQLITE_INSERT_EVENTS = "INSERT INTO events (game_id, seq, type, data) VALUES (?, ?, ?, ?)"


def immediate(engine: Engine) -> Connection:
    """A connection of the SQLite writer in its transaction, the write lock taken."""
    conn = engine.connect()
    try:
        conn.execution_options(sqlite_immediate=True).begin()
    except BaseException:
        conn.close()
        raise
    return conn


def ended(conn: Connection) -> None:
    """The end of a unit on `OnThread`: rolled back unless committed, the connection back."""
    try:
        if conn.in_transaction():
            conn.rollback()
    finally:
        conn.close()


class OnGreenlet:
    """A unit's steps on an async connection (`AsyncConnection.run_sync`)."""

    def __init__(self, conn: AsyncConnection) -> None:
        self._conn = conn

    async def __call__(self, step: Callable[..., _T], *args: Any) -> _T:
        return await self._conn.run_sync(step, *args)


class OnThread:
    """A unit's steps on a synchronous connection, each in one hop to a worker thread. A
    step whose caller is cancelled is waited for all the same (a connection is never used
    by two threads at once: the unit's end comes after it)."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    async def __call__(self, step: Callable[..., _T], *args: Any) -> _T:
        running = asyncio.ensure_future(asyncio.to_thread(step, self._conn, *args))
        try:
            return await asyncio.shield(running)
        except asyncio.CancelledError:
            with suppress(BaseException):
                await running
            raise


class SqlUnit:
    """`service.history.archive.ArchiveUnit` on one connection in a transaction (`SqlArchive.unit`):
    each method one step (`OnGreenlet`, `OnThread`)."""

    def __init__(self, steps: OnGreenlet | OnThread, insert_game: Any) -> None:
        self._steps = steps
        self._insert_game = insert_game

    async def add_game(self, archival: Archival) -> bool:
        """Insert the game, its seats, results and log; False when it is there already
        (nothing is written)."""
        return await self._steps(_add_game, self._insert_game, archive_rows(archival))

    async def ratings_of(self, player_ids: Sequence[str]) -> dict[str, Rating]:
        return await self._steps(hold_ratings, player_ids)

    async def save_ratings(self, rated: GameRating) -> None:
        await self._steps(save_ratings, rated)

    async def is_rated(self, game_id: str) -> bool:
        return await self._steps(is_rated, game_id)

    async def ranked_games(self) -> list[RankedGame]:
        return await self._steps(ranked_games)

    async def replace_ratings(
        self, rated: Sequence[GameRating], ratings: Mapping[str, Rating]
    ) -> None:
        await self._steps(replace_ratings, rated, ratings)

    async def commit(self) -> None:
        await self._steps(Connection.commit)


def _add_game(conn: Connection, insert_game: Any, rows: ArchiveRows) -> bool:
    inserted = conn.execute(insert_game, rows.game)
    if inserted.rowcount != 1:
        return False  # already archived: nothing else is written
    conn.execute(insert(seats), rows.seats)
    if rows.results:  # none for an aborted or abandoned game
        conn.execute(insert(results), rows.results)
    if conn.dialect.name != "postgresql":
        # the driver's executemany (sqlite3's loop in C) instead of SQLAlchemy's parameters
        # built row by row: less CPU per game, whose events are hundreds
        conn.exec_driver_sql(
            _SQLITE_INSERT_EVENTS,
            [(r["game_id"], r["seq"], r["type"], r["data"]) for r in rows.events],
        )
        return True
    # one statement with three arrays instead of a row per event: more games a second
    conn.execute(
        _PG_INSERT_EVENTS,
        {
            "game_id": rows.game["id"],
            "seqs": [r["seq"] for r in rows.events],
            "types": [r["type"] for r in rows.events],
            "datas": [r["data"] for r in rows.events],
        },
    )
    return True
