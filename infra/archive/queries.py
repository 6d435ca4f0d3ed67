"""The queries of the archive's reads (`SqlArchive`) and the records built from their rows:
a page of the listing of games, the seats of its games, the leaderboard's figures, a page
of the bulk export (whole games with their logs)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, TypeVar

import msgspec
from sqlalchemy import Select, case, func, literal, select, true, tuple_
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.game.cards import COLORS
from service.core.ports import StoredEvent
from service.history.archive import (
    ArchivedGame,
    ArchivedResult,
    ArchivedSeat,
    ArchivedTable,
    ColorScore,
    ExportFilter,
    SeatSummary,
)

from .models import events, games, results, seats

_S = TypeVar("_S", bound=msgspec.Struct)

GAME_SUMMARY_COLUMNS = (
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


def board_columns() -> tuple[Any, Any, Any]:
    """A leaderboard row's figures over grouped `results`: games, wins, mean score."""
    return (
        func.count().label("games"),
        func.sum(case((results.c.winner, 1), else_=0)).label("wins"),
        func.avg(results.c.score).label("mean_score"),
    )


async def ranked_figures(conn: AsyncConnection, player_ids: list[str]) -> dict[str, Any]:
    """Games, wins and mean score of each player over the seats of theirs that count in
    ranked games (a rated player has one at least)."""
    rows = await conn.execute(
        select(results.c.player_id, *board_columns())
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


def from_row(cls: type[_S], row: Any, **computed: Any) -> _S:
    """A record Struct from a row: each field from the column of its name, but those given
    (`computed`) and those with no column (their defaults)."""
    columns = row._mapping
    fields = cls.__struct_fields__
    taken = {f: columns[f] for f in fields if f not in computed and f in columns}
    return cls(**taken, **computed)


def color_order(item: tuple[str, Any]) -> tuple[int, str]:
    """The rules' colour order (JSONB keeps object keys in its own order)."""
    color = item[0]
    return (COLORS.index(color) if color in COLORS else len(COLORS), color)


def _typed_key(key: tuple[datetime, str]) -> tuple[Any, Any]:
    return literal(key[0], games.c.finished_at.type), literal(key[1], games.c.id.type)


def games_page_query(
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
        query = select(*GAME_SUMMARY_COLUMNS)
    else:  # the player's seats, in the (player_id, finished_at, game_id) index order
        at, game_id = seats.c.finished_at, seats.c.game_id
        query = (
            select(*GAME_SUMMARY_COLUMNS)
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


async def seat_summaries(
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


def archived_game(game: Any, seat_rows: Sequence[Any], result_rows: Sequence[Any]) -> ArchivedGame:
    """An archived game from its row and those of its seats and results (in seat order)."""
    return from_row(
        ArchivedGame,
        game,
        ranked=bool(game.ranked),
        unranked_reasons=tuple(game.unranked_reasons or ()),
        deck=tuple(game.deck),
        tournament=(
            None
            if game.tournament_id is None
            else ArchivedTable(
                id=game.tournament_id, round=game.tournament_round, table=game.tournament_table
            )
        ),
        seats=tuple(from_row(ArchivedSeat, s, ranked=bool(s.ranked)) for s in seat_rows),
        results=tuple(
            from_row(
                ArchivedResult,
                r,
                colors={
                    color: ColorScore(points=c["points"], run=tuple(c["run"]))
                    for color, c in sorted(r.colors.items(), key=color_order)
                },
                winner=bool(r.winner),
                resigned=bool(r.resigned),
            )
            for r in result_rows
        ),
    )


def export_page_query(
    which: ExportFilter, after: tuple[datetime, str] | None, limit: int
) -> Select[Any]:
    """The bulk export's page: whole game rows oldest first by (finished_at, id), after the
    key `after` (an index range scan on `ix_games_finished`, or the player's seats')."""
    query: Select[Any]
    if which.player_id is None:
        at, game_id = games.c.finished_at, games.c.id
        query = select(games)
    else:
        at, game_id = seats.c.finished_at, seats.c.game_id
        query = (
            select(games)
            .select_from(seats)
            .join(games, games.c.id == seats.c.game_id)
            .where(seats.c.player_id == which.player_id)
        )
    if which.game_ids is not None:
        query = query.where(games.c.id.in_(which.game_ids))
    if which.since is not None:
        query = query.where(at >= which.since)
    if which.until is not None:
        query = query.where(at < which.until)
    if after is not None:
        query = query.where(tuple_(at, game_id) > tuple_(*_typed_key(after)))
    return query.order_by(at, game_id).limit(limit)


class GameParts(msgspec.Struct, frozen=True, kw_only=True):
    seats: dict[str, list[Any]]
    results: dict[str, list[Any]]
    events: dict[str, list[StoredEvent]]


async def game_parts(conn: AsyncConnection, game_ids: list[str]) -> GameParts:
    """The seats, results and logs of `game_ids`, each in order, by game."""
    parts = GameParts(
        seats={g: [] for g in game_ids},
        results={g: [] for g in game_ids},
        events={g: [] for g in game_ids},
    )
    for table, into in ((seats, parts.seats), (results, parts.results)):
        rows = await conn.execute(
            select(table)
            .where(table.c.game_id.in_(game_ids))
            .order_by(table.c.game_id, table.c.seat)
        )
        for row in rows:
            into[row.game_id].append(row)
    logged = await conn.execute(
        select(events.c.game_id, events.c.seq, events.c.data)
        .where(events.c.game_id.in_(game_ids))
        .order_by(events.c.game_id, events.c.seq)
    )
    by_game = parts.events
    for game_id, seq, data in logged.all():  # unpacked rows: the hot loop of the export
        by_game[game_id].append(StoredEvent(seq, data.encode()))
    return parts
