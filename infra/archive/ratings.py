"""The ratings in SQL: updated in the transaction that archives a rated game, read, and
rebuilt from the archive. The rule (who is rated, the model) is `service.ratings`.

Exactly once: `SqlArchive.archive` calls `rate_game` only when its INSERT of the game row
inserted it (ON CONFLICT DO NOTHING), in the same transaction; a second archiver of the
same game inserts nothing and rates nothing (and `rated_games.game_id` is unique).

No lost update: the game's players' rows are created if missing (INSERT ... ON CONFLICT DO
NOTHING) and then locked (PostgreSQL: SELECT ... FOR UPDATE), both in player id order, so
two games with players in common wait for each other instead of deadlocking, and the
second reads what the first wrote. SQLite serializes writers (BEGIN IMMEDIATE).

The order: `rated_games.seq` is drawn after the rows are locked, so of two games with a
player in common the one that rated first has the lower seq; replaying the games in seq
order (`rebuild`) gives every player the same games in the same order, hence the same
numbers. Games archived before the ratings existed (no `rated_games` row) go first, by
their end then id.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from itertools import groupby
from typing import Any

from sqlalchemy import bindparam, delete, insert, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from service.archive import RatingChange
from service.ratings import PRIOR, RatedSeat, Rating, SeatFacts, SeatOutcome, rate, rated_table
from service.ratings import replay as replay_ratings

from .models import games, rated_games, rating_history, ratings, results, seats

_INSERTS = {"postgresql": postgresql.insert, "sqlite": sqlite.insert}
# the archive's order: ratings' rows first (as `rate_game` takes them), then the others
_PG_LOCK = "LOCK TABLE ratings, rated_games, rating_history IN EXCLUSIVE MODE"


def table_of_rows(
    seat_rows: Sequence[dict[str, Any]], result_rows: Sequence[dict[str, Any]]
) -> list[RatedSeat]:
    """The rated seats of a game about to be archived (`rows.archive_rows`' rows)."""
    ranks = {r["seat"]: r["rank"] for r in result_rows}
    return rated_table(
        SeatFacts(
            player_id=s["player_id"], bot=s["bot"], counts=s["ranked"], rank=ranks.get(s["seat"])
        )
        for s in sorted(seat_rows, key=lambda s: s["seat"])
    )


async def rate_game(
    conn: AsyncConnection, game_id: str, finished_at: datetime, table: Sequence[RatedSeat]
) -> None:
    """Rate the game just inserted in `conn`'s transaction (see the module docstring)."""
    dialect = conn.dialect.name
    players = sorted(s.player_id for s in table)
    prior = [_rating_row(pid, PRIOR, finished_at) for pid in players]
    await conn.execute(_INSERTS[dialect](ratings).on_conflict_do_nothing(), prior)
    query = select(ratings).where(ratings.c.player_id.in_(players)).order_by(ratings.c.player_id)
    if dialect == "postgresql":
        query = query.with_for_update()
    current = {row.player_id: _rating(row) for row in await conn.execute(query)}
    seq = (
        await conn.execute(insert(rated_games).returning(rated_games.c.seq), {"game_id": game_id})
    ).scalar_one()
    outcomes = rate(current, table)
    await conn.execute(
        _UPDATE_RATING,
        [
            {**_values(o.after), "at": finished_at, "pid": o.player_id}
            for o in sorted(outcomes, key=lambda o: o.player_id)
        ],
    )
    await _write(conn, [(seq, game_id, finished_at, outcomes)])


async def _write(
    conn: AsyncConnection, rated: Sequence[tuple[int, str, datetime, list[SeatOutcome]]]
) -> None:
    """The history rows of rated games (seq, game id, end, outcomes)."""
    history = [
        {
            "player_id": o.player_id,
            "seq": seq,
            "game_id": game_id,
            "finished_at": at,
            "rank": o.rank,
            "rated_seats": len(outcomes),
            "mu_before": o.before.mu,
            "sigma_before": o.before.sigma,
            "mu": o.after.mu,
            "sigma": o.after.sigma,
            "ordinal": o.after.ordinal,
            "games": o.after.games,
        }
        for seq, game_id, at, outcomes in rated
        for o in outcomes
    ]
    if history:
        await conn.execute(insert(rating_history), history)


_UPDATE_RATING = (
    update(ratings)
    .where(ratings.c.player_id == bindparam("pid"))
    .values(
        mu=bindparam("mu"),
        sigma=bindparam("sigma"),
        ordinal=bindparam("ordinal"),
        games=bindparam("games"),
        updated_at=bindparam("at"),
    )
)


def _rating(row: Any) -> Rating:
    return Rating(mu=row.mu, sigma=row.sigma, ordinal=row.ordinal, games=row.games)


def _rating_row(player_id: str, r: Rating, at: datetime) -> dict[str, Any]:
    return {"player_id": player_id, **_values(r), "updated_at": at}


def _values(r: Rating) -> dict[str, Any]:
    return {"mu": r.mu, "sigma": r.sigma, "ordinal": r.ordinal, "games": r.games}


async def rebuild(conn: AsyncConnection) -> int:
    """Replace every rating and the whole history by a replay of the archive's rated games
    in rating order (renumbered 1..n); in `conn`'s transaction, which the caller began
    (SQLite: BEGIN IMMEDIATE). The number of games rated."""
    if conn.dialect.name == "postgresql":
        await conn.execute(text(_PG_LOCK))
    order = await _rating_order(conn)
    current, outcomes = replay_ratings(table for _, _, table in order)
    for table in (rating_history, rated_games, ratings):
        await conn.execute(delete(table))
    numbered = [
        (n, g, at, done)
        for n, ((g, at, _), done) in enumerate(zip(order, outcomes, strict=True), start=1)
    ]
    if numbered:
        await conn.execute(
            insert(rated_games), [{"seq": n, "game_id": g} for n, g, _, _ in numbered]
        )
        await _write(conn, numbered)
        last = {o.player_id: at for _, _, at, done in numbered for o in done}
        await conn.execute(
            insert(ratings), [_rating_row(pid, r, last[pid]) for pid, r in sorted(current.items())]
        )
    if conn.dialect.name == "postgresql":  # the next game rated comes after them
        await conn.execute(
            text("SELECT setval(pg_get_serial_sequence('rated_games', 'seq'), :n, :called)"),
            {"n": max(len(numbered), 1), "called": bool(numbered)},
        )
    return len(numbered)


async def _rating_order(conn: AsyncConnection) -> list[tuple[str, datetime, list[RatedSeat]]]:
    """The ranked games that are rated (id, end, rated seats in seat order), in rating
    order: those rated before by seq, after those archived before ratings existed."""
    key = (rated_games.c.seq.is_not(None), rated_games.c.seq, games.c.finished_at, games.c.id)
    rows = await conn.execute(
        select(
            games.c.id,
            games.c.finished_at,
            seats.c.player_id,
            seats.c.bot,
            seats.c.ranked,
            results.c.rank,
        )
        .select_from(games)
        .join(seats, seats.c.game_id == games.c.id)
        .outerjoin(
            results, (results.c.game_id == seats.c.game_id) & (results.c.seat == seats.c.seat)
        )
        .outerjoin(rated_games, rated_games.c.game_id == games.c.id)
        .where(games.c.ranked)
        .order_by(*key, seats.c.seat)
    )
    order = []
    for (game_id, finished_at), group in groupby(rows, key=lambda row: (row.id, row.finished_at)):
        table = rated_table(
            SeatFacts(player_id=r.player_id, bot=r.bot, counts=bool(r.ranked), rank=r.rank)
            for r in group
        )
        if table:
            order.append((game_id, finished_at, table))
    return order


async def current_ratings(conn: AsyncConnection, player_ids: Sequence[str]) -> dict[str, Rating]:
    rows = await conn.execute(select(ratings).where(ratings.c.player_id.in_(list(player_ids))))
    return {row.player_id: _rating(row) for row in rows}


async def history(
    conn: AsyncConnection, player_id: str, before: int | None, limit: int
) -> list[RatingChange]:
    query = select(rating_history).where(rating_history.c.player_id == player_id)
    if before is not None:
        query = query.where(rating_history.c.seq < before)
    rows = await conn.execute(query.order_by(rating_history.c.seq.desc()).limit(limit))
    return [
        RatingChange(**{f: row._mapping[f] for f in RatingChange.__struct_fields__}) for row in rows
    ]
