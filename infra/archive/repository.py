"""`SqlArchive`: ended games (finished, aborted or abandoned) in SQL (PostgreSQL or
SQLite), the `GameArchive` port.

Writes: `unit()` is the unit of work (`service.history.archive.ArchiveUnit`), one transaction
(SQLite: BEGIN IMMEDIATE, so writers queue up front) committed by `commit()` and rolled
back otherwise. Each of its steps is one synchronous function of SQLAlchemy Core on a
`Connection` (`_add_game`, `ratings.hold`, ...), the same code on both databases, run by the
unit's `_Steps`: on PostgreSQL through `AsyncConnection.run_sync` (asyncpg's own I/O), on
a SQLite file in one thread hop on a synchronous engine of the same file
(`database.sqlite_twin`; through aiosqlite each statement costs three or four hops to its
thread and back); what is written, and when a game is rated, is
`service.history.archiving`'s. Its `add_game` inserts a game with its seats, results and
events (`rows.archive_rows`), the game row first with INSERT ... ON CONFLICT DO NOTHING: of
several units racing on one game, PostgreSQL makes the others wait on the primary key until
the first commits and then skip; a unit that inserted nothing writes nothing more and
answers False. The ratings' part is `ratings` (held, saved, read in rating order and
replaced).

Reads: listings are newest first by (finished_at, id) with keyset cursors (an index range
scan per page, stable while games are added); per-player figures aggregate `results`
through an index holding every column they read, of the seats that count in ranked games
unless told otherwise (`results.ranked` is a copy of the seat's: the game is ranked and
the seat was not taken over).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager, suppress
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import msgspec
from sqlalchemy import Select, case, func, insert, literal, select, text, true, tuple_
from sqlalchemy import exc as sa_exc
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from domain.game.cards import COLORS
from service.core.ports import StoredEvent, StoreUnavailable
from service.history.archive import (
    ARCHIVED_STATUSES,
    Archival,
    ArchivedGame,
    ArchivedResult,
    ArchivedSeat,
    ColorScore,
    GameRating,
    GameSummary,
    InvalidCursor,
    LeaderboardOrder,
    LeaderboardRow,
    PlayerStats,
    RankedGame,
    RatingChange,
    SeatSummary,
)
from service.history.ratings import PRIOR, Rating
from service.jobs.worker import PermanentFailure

from .database import make_engine, sqlite_twin
from .models import events as events_table
from .models import games, results, seats
from .models import ratings as ratings_table
from .models import reviews as reviews_table
from .ratings import current_ratings, ranked_games
from .ratings import history as rating_history
from .ratings import hold as hold_ratings
from .ratings import replace as replace_ratings
from .ratings import save as save_ratings
from .rows import ArchiveRows, archive_rows

MAX_LIMIT = 500
_S = TypeVar("_S", bound=msgspec.Struct)
_T = TypeVar("_T")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_cursor_decoder = msgspec.json.Decoder(tuple[int, int, str])
_CURSOR_VERSION = 1

_PG_INSERT_EVENTS = text(
    "INSERT INTO events (game_id, seq, type, data) "
    "SELECT :game_id, e.seq, e.type, e.data FROM unnest("
    "CAST(:seqs AS integer[]), CAST(:types AS varchar[]), CAST(:datas AS text[])"
    ") AS e(seq, type, data)"
)

_SQLITE_INSERT_EVENTS = "INSERT INTO events (game_id, seq, type, data) VALUES (?, ?, ?, ?)"

_GAME_SUMMARY_COLUMNS = (
    games.c.id,
    games.c.status,
    games.c.ranked,
    games.c.unranked_reason,
    games.c.unranked_reasons,
    games.c.player_count,
    games.c.created_at,
    games.c.finished_at,
    games.c.version,
    games.c.event_count,
)


class SqlArchive:
    """The archive on an AsyncEngine (see `database.make_engine`); the schema comes from the
    Alembic migrations (`infra.archive.migrate.upgrade`)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self._dialect = engine.dialect.name
        dialects = {"postgresql": postgresql.insert, "sqlite": sqlite.insert}
        if self._dialect not in dialects:
            raise ValueError(f"the archive runs on PostgreSQL or SQLite, not {self._dialect}")
        self._insert_game = dialects[self._dialect](games).on_conflict_do_nothing(
            index_elements=[games.c.id]
        )
        self._insert_review = dialects[self._dialect](reviews_table).on_conflict_do_nothing(
            index_elements=[reviews_table.c.game_id]
        )
        # a SQLite file: the unit of work's engine (None: the unit runs on `engine`)
        self._writer = sqlite_twin(engine)
        self._writing: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None

    @classmethod
    def from_url(cls, url: str | None = None, **engine_kwargs: Any) -> SqlArchive:
        """An archive on its own engine (`url` as for `database.database_url`)."""
        return cls(make_engine(url, **engine_kwargs))

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.dispose()
        await self.engine.dispose()

    # ------------------------------------------------------------------ writes

    @asynccontextmanager
    async def unit(self) -> AsyncIterator[SqlUnit]:
        """A unit of work: one transaction, kept when the unit commits, rolled back when it
        ends otherwise. A connection failure is StoreUnavailable; a value the database
        refuses, PermanentFailure (`_refused_data`)."""
        with _translate_errors(), _refused_data():
            if self._writer is not None:
                async with self._one_writer():
                    steps = _OnThread(await asyncio.to_thread(_immediate, self._writer))
                    try:
                        yield SqlUnit(steps, self._insert_game)
                    finally:
                        await steps(_ended)
                return
            async with self.engine.connect() as conn:
                if self._dialect == "sqlite":
                    await conn.execution_options(sqlite_immediate=True)
                transaction = await conn.begin()
                try:
                    yield SqlUnit(_OnGreenlet(conn), self._insert_game)
                finally:
                    if transaction.is_active:
                        await transaction.rollback()

    def _one_writer(self) -> asyncio.Lock:
        """The SQLite writer's units of this process, one at a time (SQLite has one writer
        anyway): a unit waiting for the write lock waits here, not in a worker thread, so
        the units never take every thread while the one holding the lock waits for one."""
        loop = asyncio.get_running_loop()
        if self._writing is None or self._writing[0] is not loop:
            self._writing = (loop, asyncio.Lock())
        return self._writing[1]

    async def save_review(self, game_id: str, review: bytes, at: datetime) -> bool:
        """Keep a finished game's review (its JSON); False when one is kept already (the
        first one stays: a review is written once)."""
        row = {"game_id": game_id, "review": review.decode(), "reviewed_at": at}
        with _translate_errors(), _refused_data():
            async with self.engine.begin() as conn:
                inserted = await conn.execute(self._insert_review, row)
        return inserted.rowcount == 1

    # ------------------------------------------------------------------ reads

    async def get_review(self, game_id: str) -> bytes | None:
        """A finished game's review as it was kept (JSON), or None."""
        query = select(reviews_table.c.review).where(reviews_table.c.game_id == game_id)
        with _translate_errors():
            async with self.engine.connect() as conn:
                review = (await conn.execute(query)).scalar()
        return None if review is None else review.encode()

    async def list_games(
        self,
        *,
        player_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        status: str | None = None,
        ranked: bool | None = None,
        cursor: str | None = None,
        limit: int = 50,
    ) -> tuple[list[GameSummary], str | None]:
        """Archived games, newest first by (finished_at, id): `player_id` sat in them,
        `since <= finished_at < until`, of that `status` ("finished", "aborted" or
        "abandoned") and `ranked` or not (None: any). Returns a page and the cursor of the
        next one (None after the last)."""
        if status is not None and status not in ARCHIVED_STATUSES:
            raise ValueError(f"status must be one of {', '.join(ARCHIVED_STATUSES)}")
        if not 1 <= limit <= MAX_LIMIT:
            raise ValueError(f"limit must be between 1 and {MAX_LIMIT}")
        for name, value in (("since", since), ("until", until)):
            if value is not None and value.utcoffset() is None:
                raise ValueError(f"{name} must be timezone-aware")
        after = _decode_cursor(cursor) if cursor is not None else None
        query = _games_page_query(player_id, since, until, after, limit + 1)
        if status is not None:
            query = query.where(games.c.status == status)
        if ranked is not None:
            query = query.where(games.c.ranked == ranked)
        with _translate_errors():
            async with self.engine.connect() as conn:
                page = (await conn.execute(query)).all()
                more = len(page) > limit
                page = page[:limit]
                by_game = await _seat_summaries(conn, [row.id for row in page])
        # the row's columns are _GAME_SUMMARY_COLUMNS: GameSummary's fields
        items = [
            _from_row(
                GameSummary,
                row,
                ranked=bool(row.ranked),
                unranked_reasons=tuple(row.unranked_reasons or ()),
                seats=tuple(by_game[row.id]),
            )
            for row in page
        ]
        next_cursor = _encode_cursor(page[-1].finished_at, page[-1].id) if more else None
        return items, next_cursor

    async def get_game(self, game_id: str) -> ArchivedGame | None:
        """The archived game with its seats and results, or None."""
        with _translate_errors():
            async with self.engine.connect() as conn:
                game = (await conn.execute(select(games).where(games.c.id == game_id))).first()
                if game is None:
                    return None
                seat_rows = (
                    await conn.execute(
                        select(seats).where(seats.c.game_id == game_id).order_by(seats.c.seat)
                    )
                ).all()
                result_rows = (
                    await conn.execute(
                        select(results).where(results.c.game_id == game_id).order_by(results.c.seat)
                    )
                ).all()
        return _from_row(
            ArchivedGame,
            game,
            ranked=bool(game.ranked),
            unranked_reasons=tuple(game.unranked_reasons or ()),
            deck=tuple(game.deck),
            seats=tuple(_from_row(ArchivedSeat, s, ranked=bool(s.ranked)) for s in seat_rows),
            results=tuple(
                _from_row(
                    ArchivedResult,
                    r,
                    colors={
                        color: ColorScore(points=c["points"], run=tuple(c["run"]))
                        for color, c in sorted(r.colors.items(), key=_color_order)
                    },
                    winner=bool(r.winner),
                    resigned=bool(r.resigned),
                )
                for r in result_rows
            ),
        )

    async def events(
        self, game_id: str, after: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        """The game's events with seq > `after`, in order (at most `limit`); each one's
        JSON exactly as it was archived. Empty for an unknown game."""
        table = events_table
        query = (
            select(table.c.seq, table.c.data)
            .where(table.c.game_id == game_id, table.c.seq > after)
            .order_by(table.c.seq)
        )
        if limit is not None:
            query = query.limit(limit)
        with _translate_errors():
            async with self.engine.connect() as conn:
                rows = (await conn.execute(query)).all()
        return [StoredEvent(row.seq, row.data.encode()) for row in rows]

    async def player_stats(self, player_id: str, *, ranked_only: bool = True) -> PlayerStats:
        """Games, wins (shared wins count), mean and best score, busts per game and
        perfect colours of a player id, over their ranked games (`ranked_only`: the seats
        that count, not one a bot took over) or every finished one; zeros and None for a
        player without games."""
        query = select(
            func.count().label("games"),
            func.coalesce(func.sum(case((results.c.winner, 1), else_=0)), 0).label("wins"),
            func.avg(results.c.score).label("mean_score"),
            func.max(results.c.score).label("best_score"),
            func.coalesce(func.sum(results.c.busts), 0).label("busts"),
            func.coalesce(func.sum(results.c.perfect_colors), 0).label("perfect_colors"),
        ).where(results.c.player_id == player_id)
        if ranked_only:
            query = query.where(results.c.ranked == true())
        with _translate_errors():
            async with self.engine.connect() as conn:
                row = (await conn.execute(query)).one()
                rated = await current_ratings(conn, [player_id])
        played = int(row.games)
        return PlayerStats(
            player_id=player_id,
            ranked_only=ranked_only,
            games=played,
            wins=int(row.wins),
            mean_score=float(row.mean_score) if played else None,
            best_score=int(row.best_score) if played else None,
            busts=int(row.busts),
            bust_rate=int(row.busts) / played if played else None,
            perfect_colors=int(row.perfect_colors),
            rating=rated.get(player_id, PRIOR),
        )

    async def leaderboard(
        self,
        by: LeaderboardOrder = "wins",
        *,
        ranked_only: bool = True,
        min_games: int = 1,
        offset: int = 0,
        limit: int = 50,
    ) -> list[LeaderboardRow]:
        """Players with at least `min_games` archived games (ranked ones only, their seats
        that count, unless `ranked_only` is False: every finished game), best first.

        by="wins": most wins, then the higher mean score, then player id;
        by="mean_score": the higher mean score, then more games, then player id;
        by="rating": the higher ordinal, then player id, of the players with at least
        `min_games` rated games (ranked games only, whatever `ranked_only` says)."""
        if by not in ("wins", "mean_score", "rating"):
            raise ValueError('by must be "wins", "mean_score" or "rating"')
        if min_games < 1 or offset < 0 or not 1 <= limit <= MAX_LIMIT:
            raise ValueError(f"min_games >= 1, offset >= 0, limit between 1 and {MAX_LIMIT}")
        if by == "rating":
            return await self._rating_board(min_games, offset, limit)
        played, wins, mean = _board_columns()
        order = (
            (wins.desc(), mean.desc(), results.c.player_id)
            if by == "wins"
            else (mean.desc(), played.desc(), results.c.player_id)
        )
        counted = results.c.player_id.is_not(None)
        if ranked_only:
            counted = counted & (results.c.ranked == true())
        query = (
            select(results.c.player_id, played, wins, mean)
            .where(counted)
            .group_by(results.c.player_id)
            .having(func.count() >= min_games)
            .order_by(*order)
            .offset(offset)
            .limit(limit)
        )
        with _translate_errors():
            async with self.engine.connect() as conn:
                rows = (await conn.execute(query)).all()
        return [
            LeaderboardRow(
                position=offset + i,
                player_id=row.player_id,
                games=int(row.games),
                wins=int(row.wins),
                mean_score=float(row.mean_score),
            )
            for i, row in enumerate(rows, start=1)
        ]

    async def _rating_board(self, min_games: int, offset: int, limit: int) -> list[LeaderboardRow]:
        """The leaderboard by rating: a page of `ratings` by ordinal, with each player's
        ranked figures."""
        page = (
            select(ratings_table)
            .where(ratings_table.c.games >= min_games)
            .order_by(ratings_table.c.ordinal.desc(), ratings_table.c.player_id)
            .offset(offset)
            .limit(limit)
        )
        with _translate_errors():
            async with self.engine.connect() as conn:
                rows = (await conn.execute(page)).all()
                figures = await _ranked_figures(conn, [row.player_id for row in rows])
        return [
            LeaderboardRow(
                position=offset + i,
                player_id=row.player_id,
                **figures[row.player_id],
                rating=Rating(mu=row.mu, sigma=row.sigma, ordinal=row.ordinal, games=row.games),
            )
            for i, row in enumerate(rows, start=1)
        ]

    async def ratings(self, player_ids: Sequence[str]) -> dict[str, Rating]:
        """The current rating of each of `player_ids` that has one."""
        with _translate_errors():
            async with self.engine.connect() as conn:
                return await current_ratings(conn, player_ids)

    async def rating_history(
        self, player_id: str, *, before: int | None = None, limit: int = 50
    ) -> list[RatingChange]:
        """A player's rating changes newest first (seq < `before`, when given)."""
        if not 1 <= limit <= MAX_LIMIT:
            raise ValueError(f"limit must be between 1 and {MAX_LIMIT}")
        with _translate_errors():
            async with self.engine.connect() as conn:
                return await rating_history(conn, player_id, before, limit)

    async def ping(self) -> None:
        """Raise StoreUnavailable when the database cannot answer."""
        with _translate_errors():
            async with self.engine.connect() as conn:
                await conn.execute(text("SELECT 1"))


def _immediate(engine: Engine) -> Connection:
    """A connection of the SQLite writer in its transaction, the write lock taken."""
    conn = engine.connect()
    try:
        conn.execution_options(sqlite_immediate=True).begin()
    except BaseException:
        conn.close()
        raise
    return conn


def _ended(conn: Connection) -> None:
    """The end of a unit on `_OnThread`: rolled back unless committed, the connection back."""
    try:
        if conn.in_transaction():
            conn.rollback()
    finally:
        conn.close()


class _OnGreenlet:
    """A unit's steps on an async connection (`AsyncConnection.run_sync`)."""

    def __init__(self, conn: AsyncConnection) -> None:
        self._conn = conn

    async def __call__(self, step: Callable[..., _T], *args: Any) -> _T:
        return await self._conn.run_sync(step, *args)


class _OnThread:
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
    each method one step (`_OnGreenlet`, `_OnThread`)."""

    def __init__(self, steps: _OnGreenlet | _OnThread, insert_game: Any) -> None:
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


def _board_columns() -> tuple[Any, Any, Any]:
    """A leaderboard row's figures over grouped `results`: games, wins, mean score."""
    return (
        func.count().label("games"),
        func.sum(case((results.c.winner, 1), else_=0)).label("wins"),
        func.avg(results.c.score).label("mean_score"),
    )


async def _ranked_figures(conn: AsyncConnection, player_ids: list[str]) -> dict[str, Any]:
    """Games, wins and mean score of each player over the seats of theirs that count in
    ranked games (a rated player has one at least)."""
    rows = await conn.execute(
        select(results.c.player_id, *_board_columns())
        .where(results.c.player_id.in_(player_ids), results.c.ranked == true())
        .group_by(results.c.player_id)
    )
    return {
        row.player_id: {
            "games": int(row.games),
            "wins": int(row.wins),
            "mean_score": float(row.mean_score),
        }
        for row in rows
    }


def _from_row(cls: type[_S], row: Any, **computed: Any) -> _S:
    """A record Struct from a row: each field from the column of its name, but those given
    (`computed`) and those with no column (their defaults)."""
    columns = row._mapping
    fields = cls.__struct_fields__
    taken = {f: columns[f] for f in fields if f not in computed and f in columns}
    return cls(**taken, **computed)


def _color_order(item: tuple[str, Any]) -> tuple[int, str]:
    """The rules' colour order (JSONB keeps object keys in its own order)."""
    color = item[0]
    return (COLORS.index(color) if color in COLORS else len(COLORS), color)


# SQLSTATEs of a server that cannot answer now: a connection exception (class 08), and
# PostgreSQL shutting down or starting up (57P01 admin_shutdown, 57P02 crash_shutdown, 57P03
# cannot_connect_now: "the database system is starting up"), which SQLAlchemy's asyncpg
# dialect raises as a bare DBAPIError, not an OperationalError
_UNAVAILABLE_STATES = ("08", "57P01", "57P02", "57P03")


def _sqlstate(exc: sa_exc.DBAPIError) -> str:
    return getattr(exc.orig, "sqlstate", None) or getattr(exc.orig, "pgcode", None) or ""


@contextmanager
def _translate_errors() -> Iterator[None]:
    """Connection-level failures become StoreUnavailable (the API answers 503).

    Besides the error classes and SQLSTATEs of a server that cannot answer, any error on a
    connection SQLAlchemy found broken and invalidated (`connection_invalidated`): a
    session PostgreSQL ends in the middle of a query can leave asyncpg's protocol mid-way,
    and the next step on it fails as asyncpg's InternalClientError ("cannot switch to
    state 12; another operation (2) is in progress"), an InternalError with no SQLSTATE
    (sqlalchemy/sqlalchemy#13241, MagicStack/asyncpg#1069)."""
    try:
        yield
    except (sa_exc.OperationalError, sa_exc.InterfaceError, sa_exc.TimeoutError, OSError) as exc:
        raise StoreUnavailable(f"the archive database is unavailable: {exc}") from exc
    except sa_exc.DBAPIError as exc:
        if exc.connection_invalidated or _sqlstate(exc).startswith(_UNAVAILABLE_STATES):
            raise StoreUnavailable(f"the archive database is unavailable: {exc}") from exc
        raise


@contextmanager
def _refused_data() -> Iterator[None]:
    """A value the database refuses (a data exception, SQLSTATE class 22: PostgreSQL refuses
    a NUL character in a text, a number out of range) will be refused again: the job is
    poisoned (`service.jobs.worker`)."""
    try:
        yield
    except sa_exc.DBAPIError as exc:
        if isinstance(exc, sa_exc.DataError) or _sqlstate(exc).startswith("22"):
            raise PermanentFailure(f"the archive database refused the game: {exc.orig}") from exc
        raise


def _micros(at: datetime) -> int:
    return (at - _EPOCH) // _MICROSECOND


def _encode_cursor(finished_at: datetime, game_id: str) -> str:
    raw = msgspec.json.encode((_CURSOR_VERSION, _micros(finished_at), game_id))
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _decode_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        version, micros, game_id = _cursor_decoder.decode(raw)
    except (binascii.Error, ValueError, msgspec.DecodeError) as exc:
        raise InvalidCursor("not a cursor of this listing") from exc
    if version != _CURSOR_VERSION or not isinstance(game_id, str) or "\x00" in game_id:
        raise InvalidCursor("not a cursor of this listing")
    try:
        return _EPOCH + micros * _MICROSECOND, game_id
    except OverflowError as exc:
        raise InvalidCursor("not a cursor of this listing") from exc


def _typed_key(key: tuple[datetime, str]) -> tuple[Any, Any]:
    return literal(key[0], games.c.finished_at.type), literal(key[1], games.c.id.type)


def _games_page_query(
    player_id: str | None,
    since: datetime | None,
    until: datetime | None,
    after: tuple[datetime, str] | None,
    limit: int,
) -> Select[Any]:
    """`list_games`' query: game summaries newest first, from the key `after` on."""
    query: Select[Any]
    if player_id is None:
        at, game_id = games.c.finished_at, games.c.id
        query = select(*_GAME_SUMMARY_COLUMNS)
    else:  # the player's seats, in the (player_id, finished_at, game_id) index order
        at, game_id = seats.c.finished_at, seats.c.game_id
        query = (
            select(*_GAME_SUMMARY_COLUMNS)
            .select_from(seats)
            .join(games, games.c.id == seats.c.game_id)
            .where(seats.c.player_id == player_id)
        )
    if since is not None:
        query = query.where(at >= since)
    if until is not None:
        query = query.where(at < until)
    if after is not None:
        query = query.where(tuple_(at, game_id) < tuple_(*_typed_key(after)))
    return query.order_by(at.desc(), game_id.desc()).limit(limit)


async def _seat_summaries(
    conn: AsyncConnection, game_ids: list[str]
) -> dict[str, list[SeatSummary]]:
    """The seats (with their results: none in an aborted or abandoned game) of each of
    `game_ids`, in seat order."""
    by_game: dict[str, list[SeatSummary]] = {game_id: [] for game_id in game_ids}
    if not game_ids:
        return by_game
    seat_rows = await conn.execute(
        select(
            seats.c.game_id,
            seats.c.seat,
            seats.c.name,
            seats.c.bot,
            seats.c.player_id,
            seats.c.ranked,
            seats.c.unranked_reason,
            results.c.score,
            results.c.rank,
            results.c.winner,
        )
        .outerjoin(
            results,
            (results.c.game_id == seats.c.game_id) & (results.c.seat == seats.c.seat),
        )
        .where(seats.c.game_id.in_(game_ids))
        .order_by(seats.c.game_id, seats.c.seat)
    )
    for s in seat_rows:
        by_game[s.game_id].append(
            SeatSummary(
                seat=s.seat,
                name=s.name,
                bot=s.bot,
                player_id=s.player_id,
                ranked=bool(s.ranked),
                unranked_reason=s.unranked_reason,
                score=s.score,
                rank=s.rank,
                winner=None if s.winner is None else bool(s.winner),
            )
        )
    return by_game
