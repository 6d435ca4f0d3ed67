"""The queries of the archive's reads (`SqlArchive`) and the records built from their rows:
a page of the listing of games, the seats of its games, the leaderboard's figures."""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypeVar

import msgspec
from sqlalchemy import Select, case, func, literal, select, true, tuple_
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.game.cards import COLORS
from service.history.archive import SeatSummary

from .models import games, results, seats

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
