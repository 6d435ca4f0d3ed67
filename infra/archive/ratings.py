"""The ratings in SQL, the unit of work's part (`service.history.archive.ArchiveUnit`): read and
held, updated in the transaction that archives a rated game, read in rating order and
replaced for a rebuild. Which games are rated, how, and when, is `service.history.archiving` and
`service.history.ratings`. The unit's parts are synchronous, on a `Connection` (the unit runs each
as one step: `unit.SqlUnit`); the reads outside a unit are async.

No lost update (`hold`): the game's players' rows are created if missing (INSERT ... ON
CONFLICT DO NOTHING) and then locked (PostgreSQL: SELECT ... FOR UPDATE), both in player id
order, so two games with players in common wait for each other instead of deadlocking, and
the second reads what the first wrote. SQLite serializes writers (BEGIN IMMEDIATE).

The order: `rated_games.seq` is drawn when a game's ratings are saved, after its players'
rows were locked, so of two games with a player in common the one that rated first has the
lower seq; replaying the games in seq order (the rebuild) gives every player the same
games in the same order, hence the same numbers. Games archived before the ratings existed
(no `rated_games` row) go first, by their end then id. `rated_games.game_id` is unique: a
game is rated once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from itertools import groupby
from typing import Any

from sqlalchemy import bindparam, delete, insert, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncConnection

from service.history.archive import GameRating, RankedGame, RatingChange
from service.history.ratings import PRIOR, Rating, SeatFacts

from .models import games, rated_games, rating_history, ratings, results, seats

_INSERTS = {"postgresql": postgresql.insert, "sqlite": sqlite.insert}
# the archive's order: ratings' rows first (as `hold` takes them), then the others
_PG_LOCK = "LOCK TABLE ratings, rated_games, rating_history IN EXCLUSIVE MODE"


def hold(conn: Connection, player_ids: Sequence[str]) -> dict[str, Rating]:
    """The current ratings of `player_ids` (the prior for those without one yet: their rows
    are created), locked until `conn`'s transaction ends (see the module docstring)."""
    dialect = conn.dialect.name
    players = sorted(set(player_ids))
    if not players:
        return {}
    # a new player's row, created to be locked; the game's `save` overwrites it
    at = datetime.now(UTC)
    prior = [_rating_row(pid, PRIOR, at) for pid in players]
    conn.execute(_INSERTS[dialect](ratings).on_conflict_do_nothing(), prior)
    query = select(ratings).where(ratings.c.player_id.in_(players)).order_by(ratings.c.player_id)
    if dialect == "postgresql":
        query = query.with_for_update()
    return {row.player_id: _rating(row) for row in conn.execute(query)}


def save(conn: Connection, rated: GameRating) -> None:
    """A rated game's new ratings and history, in `conn`'s transaction, its players' rows
    held (`hold`); the game takes the next seq."""
    seq = conn.execute(
        insert(rated_games).returning(rated_games.c.seq), {"game_id": rated.game_id}
    ).scalar_one()
    conn.execute(
        _UPDATE_RATING,
        [
            {**_values(o.after), "at": rated.finished_at, "pid": o.player_id}
            for o in sorted(rated.outcomes, key=lambda o: o.player_id)
        ],
    )
    _write(conn, [(seq, rated)])


def is_rated(conn: Connection, game_id: str) -> bool:
    """Whether the game has its `rated_games` row (it was rated)."""
    found = conn.execute(select(rated_games.c.seq).where(rated_games.c.game_id == game_id))
    return found.first() is not None


def _write(conn: Connection, rated: Sequence[tuple[int, GameRating]]) -> None:
    """The history rows of rated games (each with its seq)."""
    history = [
        {
            "player_id": o.player_id,
            "seq": seq,
            "game_id": game.game_id,
            "finished_at": game.finished_at,
            "rank": o.rank,
            "rated_seats": len(game.outcomes),
            "mu_before": o.before.mu,
            "sigma_before": o.before.sigma,
            "mu": o.after.mu,
            "sigma": o.after.sigma,
            "ordinal": o.after.ordinal,
            "games": o.after.games,
        }
        for seq, game in rated
        for o in game.outcomes
    ]
    if history:
        conn.execute(insert(rating_history), history)


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


def ranked_games(conn: Connection) -> list[RankedGame]:
    """Every archived ranked game in rating order (those rated before by seq, after those
    archived before ratings existed, by their end then id), its seats in seat order. On
    PostgreSQL the rating tables are locked until `conn`'s transaction ends, which the
    caller began (SQLite: BEGIN IMMEDIATE): nothing is rated meanwhile."""
    if conn.dialect.name == "postgresql":
        conn.execute(text(_PG_LOCK))
    key = (rated_games.c.seq.is_not(None), rated_games.c.seq, games.c.finished_at, games.c.id)
    rows = conn.execute(
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
    return [
        RankedGame(
            game_id=game_id,
            finished_at=finished_at,
            seats=tuple(
                SeatFacts(player_id=r.player_id, bot=r.bot, counts=bool(r.ranked), rank=r.rank)
                for r in group
            ),
        )
        for (game_id, finished_at), group in groupby(
            rows, key=lambda row: (row.id, row.finished_at)
        )
    ]


def replace(conn: Connection, rated: Sequence[GameRating], current: Mapping[str, Rating]) -> None:
    """Every rating, the history and the rating order replaced by `rated` (renumbered
    1..n) and `current`, in `conn`'s transaction (after `ranked_games`' lock). Each
    player's row is dated by the end of the last game that rated them."""
    for table in (rating_history, rated_games, ratings):
        conn.execute(delete(table))
    numbered = list(enumerate(rated, start=1))
    if numbered:
        conn.execute(insert(rated_games), [{"seq": n, "game_id": g.game_id} for n, g in numbered])
        _write(conn, numbered)
        last = {o.player_id: g.finished_at for g in rated for o in g.outcomes}
        conn.execute(
            insert(ratings), [_rating_row(pid, r, last[pid]) for pid, r in sorted(current.items())]
        )
    if conn.dialect.name == "postgresql":  # the next game rated comes after them
        conn.execute(
            text("SELECT setval(pg_get_serial_sequence('rated_games', 'seq'), :n, :called)"),
            {"n": max(len(numbered), 1), "called": bool(numbered)},
        )


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
