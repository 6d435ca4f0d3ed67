"""A player's data in the SQL archive (`service.privacy.ports.ArchiveData`): their games read
by keyset pages (the index `ix_seats_player_history`), their erasure in one transaction,
the ledger's archive copy (`erasures`) and the archive's applied mark (`erasures_applied`,
one row, compare-and-set)."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, func, literal, or_, select, union, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.dialects.postgresql import aggregate_order_by
from sqlalchemy.ext.asyncio import AsyncConnection

from service.privacy.ports import ArchivedPlay, Erasure
from service.privacy.pseudonyms import Subject, event_json

from .errors import translate_errors
from .models import (
    erasures,
    erasures_applied,
    events,
    games,
    rating_history,
    ratings,
    results,
    reviews,
    seats,
)
from .repository import SqlArchive, archived_game

CHUNK = 500  # games per statement when their logs are rewritten
_INSERTS = {"postgresql": postgresql.insert, "sqlite": sqlite.insert}


class SqlPlayerData:
    def __init__(self, archive: SqlArchive) -> None:
        self.engine = archive.engine
        self._dialect = self.engine.dialect.name

    async def games_page(
        self, player_id: str, after: tuple[datetime, str] | None, limit: int
    ) -> list[ArchivedPlay]:
        query = select(games).join(seats, seats.c.game_id == games.c.id)
        query = query.where(seats.c.player_id == player_id)
        if after is not None:
            at, game_id = after
            query = query.where(or_(seats.c.finished_at > at,
                                    and_(seats.c.finished_at == at, seats.c.game_id > game_id)))  # fmt: skip
        query = query.order_by(seats.c.finished_at, seats.c.game_id).limit(limit)
        with translate_errors():
            async with self.engine.connect() as conn:
                rows = (await conn.execute(query)).all()
                ids = [row.id for row in rows]
                kept = await _rows_of(conn, ids)
        return [
            ArchivedPlay(
                game=archived_game(row, kept["seats"][row.id], kept["results"][row.id]),
                events=tuple(kept["events"][row.id]),
            )
            for row in rows
        ]

    async def erase_player(self, subject: Subject) -> int:
        pid, alias = subject.player_id, subject.pseudonym
        with translate_errors():
            async with self.engine.begin() as conn:
                found = (await conn.execute(
                    select(seats.c.game_id, seats.c.seat).where(seats.c.player_id == pid)
                )).all()  # fmt: skip
                by_game: dict[str, set[int]] = defaultdict(set)
                for row in found:
                    by_game[row.game_id].add(row.seat)
                changed = await _documents(conn, by_game, subject)
                for statement in (
                    update(seats).where(seats.c.player_id == pid).values(player_id=alias, name=alias),
                    update(results).where(results.c.player_id == pid).values(player_id=alias),
                    update(ratings).where(ratings.c.player_id == pid).values(player_id=alias),
                    update(rating_history).where(rating_history.c.player_id == pid)
                    .values(player_id=alias),
                ):  # fmt: skip
                    changed += (await conn.execute(statement)).rowcount
        return changed

    async def player_ids_page(self, after: str | None, limit: int) -> list[str]:
        # each table's first `limit` ids after `after`, read in id order from its index
        # (`ix_seats_player_history`, the ratings' key): a page costs its own rows, not the
        # whole union's (a scan of the archive in pages stays linear in its size)
        firsts = []
        for column in (seats.c.player_id, ratings.c.player_id):
            query = select(column.label("id")).where(column.is_not(None))
            if after is not None:
                query = query.where(column > after)
            firsts.append(query.distinct().order_by(column).limit(limit).subquery())
        ids = union(*(select(first.c.id) for first in firsts)).subquery()
        with translate_errors():
            async with self.engine.connect() as conn:
                rows = await conn.execute(select(ids.c.id).order_by(ids.c.id).limit(limit))
                return [row.id for row in rows]

    async def erasures(self) -> list[Erasure]:
        with translate_errors():
            async with self.engine.connect() as conn:
                rows = await conn.execute(select(erasures).order_by(erasures.c.erased_at))
                return [Erasure(digest=r.digest, pseudonym=r.pseudonym, at=r.erased_at)
                        for r in rows]  # fmt: skip

    async def record_erasures(self, entries: Sequence[Erasure]) -> None:
        if not entries:
            return
        with translate_errors():
            async with self.engine.begin() as conn:
                held = set((await conn.execute(select(erasures.c.digest))).scalars())
                new = {e.digest: e for e in entries if e.digest not in held}
                if new:
                    await conn.execute(erasures.insert(), [
                        {"digest": e.digest, "pseudonym": e.pseudonym, "erased_at": e.at}
                        for e in new.values()
                    ])  # fmt: skip

    async def applied(self) -> str | None:
        query = select(erasures_applied.c.mark).where(erasures_applied.c.id == 1)
        with translate_errors():
            async with self.engine.connect() as conn:
                return (await conn.execute(query)).scalar()

    async def swap_applied(self, expected: str | None, mark: str) -> bool:
        row = {"mark": mark, "marked_at": time.time()}
        if expected is None:  # no row yet: the insert of the one row, unless another did
            statement: Any = _INSERTS[self._dialect](erasures_applied).values(id=1, **row)
            statement = statement.on_conflict_do_nothing(index_elements=["id"])
        else:
            statement = update(erasures_applied).values(row).where(
                erasures_applied.c.id == 1, erasures_applied.c.mark == expected)  # fmt: skip
        with translate_errors():
            async with self.engine.begin() as conn:
                return (await conn.execute(statement)).rowcount == 1


async def _rows_of(conn: AsyncConnection, ids: list[str]) -> dict[str, dict[str, list[Any]]]:
    """The seats, results and events (each one's JSON as archived; on PostgreSQL the log
    joined by commas in one string) of the games `ids`, by game, in order."""
    kept: dict[str, dict[str, list[Any]]] = {
        "seats": defaultdict(list), "results": defaultdict(list), "events": defaultdict(list)
    }  # fmt: skip
    if not ids:
        return kept
    for name, table, order in (("seats", seats, seats.c.seat),
                               ("results", results, results.c.seat)):  # fmt: skip
        query = select(table).where(table.c.game_id.in_(ids)).order_by(table.c.game_id, order)
        for row in await conn.execute(query):
            kept[name][row.game_id].append(row)
    logs = kept["events"]
    if conn.dialect.name == "postgresql":  # one row a game: its log joined in seq order
        joined = func.string_agg(events.c.data, aggregate_order_by(literal(","), events.c.seq))
        query = select(events.c.game_id, joined).group_by(events.c.game_id)
    else:
        query = select(events.c.game_id, events.c.data).order_by(events.c.game_id, events.c.seq)
    for game_id, data in (await conn.execute(query.where(events.c.game_id.in_(ids)))).all():
        logs[game_id].append(data)
    return kept


async def _documents(conn: AsyncConnection, by_game: dict[str, set[int]], subject: Subject) -> int:
    """The logs and reviews of the player's games rewritten (`event_json`): the names of
    their seats and any copy of their id."""
    changed = 0
    ids = list(by_game)
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start : start + CHUNK]
        for table, key, column in ((events, (events.c.game_id, events.c.seq), events.c.data),
                                   (reviews, (reviews.c.game_id,), reviews.c.review)):  # fmt: skip
            query = select(*key, column).where(key[0].in_(chunk))
            if table is events:  # the names: game_started's; the id: wherever it is copied
                query = query.where(or_(events.c.type == "game_started",
                                        events.c.data.contains(subject.player_id)))  # fmt: skip
            new = []
            for row in (await conn.execute(query)).all():
                data = event_json(row[-1].encode(), by_game[row[0]], subject).decode()
                if data != row[-1]:
                    new.append({f"k{i}": v for i, v in enumerate(row[:-1])} | {"new": data})
            if new:  # one statement, executed for every row changed
                where = and_(*(k == bindparam(f"k{i}") for i, k in enumerate(key)))
                await conn.execute(
                    update(table).where(where).values({column.name: bindparam("new")}), new
                )
                changed += len(new)
    return changed
