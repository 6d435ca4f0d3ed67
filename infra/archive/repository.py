"""`SqlArchive`: ended games (finished, aborted or abandoned) in SQL (PostgreSQL or
SQLite), the `GameArchive` port.

Writes: `unit()` is the unit of work (`service.history.archive.ArchiveUnit`, `unit.SqlUnit`),
one transaction (SQLite: BEGIN IMMEDIATE, so writers queue up front) committed by
`commit()` and rolled back otherwise; what is written, and when a game is rated, is
`service.history.archiving`'s.

Reads: listings are newest first by (finished_at, id) with keyset cursors (`cursors`: an
index range scan per page, stable while games are added); per-player figures aggregate
`results` through an index holding every column they read, of the seats that count in
ranked games unless told otherwise (`results.ranked` is a copy of the seat's: the game is
ranked and the seat was not taken over). Their queries: `queries`; a failure of the
database: `errors`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

from sqlalchemy import case, func, select, text, true
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncEngine

from service.core.ports import StoredEvent
from service.history.archive import (
    ARCHIVED_STATUSES,
    ArchivedGame,
    ExportedGame,
    ExportFilter,
    GameSummary,
    LeaderboardOrder,
    LeaderboardRow,
    PlayerStats,
    RatingChange,
)
from service.history.ratings import PRIOR, Rating

from .cursors import decode_cursor, encode_cursor
from .database import make_engine, sqlite_twin
from .errors import refused_data, translate_errors
from .models import events as events_table
from .models import games, results, seats
from .models import ratings as ratings_table
from .models import reviews as reviews_table
from .queries import (
    archived_game,
    board_columns,
    export_page_query,
    from_row,
    game_parts,
    games_page_query,
    ranked_figures,
    seat_summaries,
)
from .ratings import current_ratings
from .ratings import history as rating_history
from .unit import OnGreenlet, OnThread, SqlUnit, ended, immediate

MAX_LIMIT = 500


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
        refuses, PermanentFailure (`refused_data`)."""
        with translate_errors(), refused_data():
            if self._writer is not None:
                async with self._one_writer():
                    steps = OnThread(await asyncio.to_thread(immediate, self._writer))
                    try:
                        yield SqlUnit(steps, self._insert_game)
                    finally:
                        await steps(ended)
                return
            async with self.engine.connect() as conn:
                if self._dialect == "sqlite":
                    await conn.execution_options(sqlite_immediate=True)
                transaction = await conn.begin()
                try:
                    yield SqlUnit(OnGreenlet(conn), self._insert_game)
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
        with translate_errors(), refused_data():
            async with self.engine.begin() as conn:
                inserted = await conn.execute(self._insert_review, row)
        return inserted.rowcount == 1

    # ------------------------------------------------------------------ reads

    async def get_review(self, game_id: str) -> bytes | None:
        """A finished game's review as it was kept (JSON), or None."""
        query = select(reviews_table.c.review).where(reviews_table.c.game_id == game_id)
        with translate_errors():
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
        after = decode_cursor(cursor) if cursor is not None else None
        query = games_page_query(player_id, since, until, after, limit + 1)
        if status is not None:
            query = query.where(games.c.status == status)
        if ranked is not None:
            query = query.where(games.c.ranked == ranked)
        with translate_errors():
            async with self.engine.connect() as conn:
                page = (await conn.execute(query)).all()
                more = len(page) > limit
                page = page[:limit]
                by_game = await seat_summaries(conn, [row.id for row in page])
        # the row's columns are GAME_SUMMARY_COLUMNS: GameSummary's fields
        items = [
            from_row(
                GameSummary,
                row,
                ranked=bool(row.ranked),
                unranked_reasons=tuple(row.unranked_reasons or ()),
                seats=tuple(by_game[row.id]),
            )
            for row in page
        ]
        next_cursor = encode_cursor(page[-1].finished_at, page[-1].id) if more else None
        return items, next_cursor

    async def get_game(self, game_id: str) -> ArchivedGame | None:
        """The archived game with its seats and results, or None."""
        with translate_errors():
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
        return archived_game(game, seat_rows, result_rows)

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
        with translate_errors():
            async with self.engine.connect() as conn:
                rows = (await conn.execute(query)).all()
        return [StoredEvent(row.seq, row.data.encode()) for row in rows]

    async def export_page(
        self, which: ExportFilter, after: tuple[datetime, str] | None, limit: int
    ) -> list[ExportedGame]:
        """A page of whole games (seats, results, log) oldest first by (finished_at, id),
        after the key `after`: four queries a page, whatever the archive's size."""
        query = export_page_query(which, after, limit)
        with translate_errors():
            async with self.engine.connect() as conn:
                rows = (await conn.execute(query)).all()
                ids = [row.id for row in rows]
                if not ids:
                    return []
                parts = await game_parts(conn, ids)
        return [
            (archived_game(row, parts.seats[row.id], parts.results[row.id]), parts.events[row.id])
            for row in rows
        ]

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
        with translate_errors():
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
        played, wins, mean = board_columns()
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
        with translate_errors():
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
        with translate_errors():
            async with self.engine.connect() as conn:
                rows = (await conn.execute(page)).all()
                figures = await ranked_figures(conn, [row.player_id for row in rows])
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
        with translate_errors():
            async with self.engine.connect() as conn:
                return await current_ratings(conn, player_ids)

    async def rating_history(
        self, player_id: str, *, before: int | None = None, limit: int = 50
    ) -> list[RatingChange]:
        """A player's rating changes newest first (seq < `before`, when given)."""
        if not 1 <= limit <= MAX_LIMIT:
            raise ValueError(f"limit must be between 1 and {MAX_LIMIT}")
        with translate_errors():
            async with self.engine.connect() as conn:
                return await rating_history(conn, player_id, before, limit)

    async def ping(self) -> None:
        """Raise StoreUnavailable when the database cannot answer."""
        with translate_errors():
            async with self.engine.connect() as conn:
                await conn.execute(text("SELECT 1"))
