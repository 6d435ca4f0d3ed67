"""The archive's tables (SQLAlchemy 2 declarative), kept apart from the domain types.

An archived game is written once, in one transaction, and never changed; so a few facts
are copied where the queries need them (`seats.finished_at` for a player's history in
time order, `results.player_id` and `results.ranked` for per-player aggregates without a
join).

- `games`    one row per ended game (finished, or aborted or abandoned while live): rules,
             seed, the whole deck in draw order, times, whether it is ranked and why not
- `seats`    who sat where (name, bot level, the account's player id when known), whether
             the seat's result counts (the game is ranked and the seat was not taken over)
             and the seat's own reason not to
- `results`  the final result per seat, plus derived counts (perfect colours, busts);
             none for an aborted or abandoned game
- `events`   the complete event log, each event's JSON exactly as it was published
- `rated_games`    the games that changed ratings, numbered in the order they were rated
                   (`seq`): the order `service.history.ratings` replays them in to rebuild
- `ratings`        each rated player's current rating (`service.history.ratings`)
- `rating_history` per rated game and player: the rating before and after it
- `erasures`       the erasure ledger: a player id's keyed digest and its pseudonym
                   (`service.privacy`), never the id
- `erasures_applied` one row: the archive's applied mark, which ledger's erasures every
                   row here is known to have applied (`service.privacy`)
- `game_reviews`   per finished game, its post-game review's JSON (`service.history.reviews`),
                   written once; no key to `games`, since a finished game still in the
                   game store is reviewed before the archiver has it

Unlike the game tables, the ratings change: each rated game updates its players' rows in
the transaction that archives it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    DateTime,
    Double,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator, TypeEngine

from service.history.archive import ID_LENGTH, PLAYER_ID_LENGTH

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

REASON_LENGTH = 32  # an unranked reason's code (`service.core.ranking`)


def identifier(length: int) -> TypeEngine[str]:
    """An identifier: compared byte by byte (collation "C" on PostgreSQL, SQLite's BINARY
    by default), so ordering and keyset pagination agree on every dialect and locale."""
    return String(length).with_variant(String(length, collation="C"), "postgresql")


# JSON documents: JSONB on PostgreSQL (compact, indexable), JSON (text) on SQLite.
JsonDocument = JSON().with_variant(JSONB(), "postgresql")


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware instant, stored in UTC and read back aware (UTC) on every dialect.

    PostgreSQL: `timestamptz`. SQLite has no time zones: the UTC wall time is stored as
    fixed-width text, so text order is time order and range/keyset comparisons work."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError("archive times must be timezone-aware")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class GameRow(Base):
    __tablename__ = "games"

    id: Mapped[str] = mapped_column(identifier(ID_LENGTH), primary_key=True)
    player_count: Mapped[int] = mapped_column(Integer)
    rules: Mapped[dict[str, Any]] = mapped_column(JsonDocument)
    seed: Mapped[str] = mapped_column(Text)
    deck: Mapped[list[str]] = mapped_column(JsonDocument)  # every card, in the order drawn
    schema_version: Mapped[int] = mapped_column(Integer)  # of the engine that played it
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime] = mapped_column(UTCDateTime())
    version: Mapped[int] = mapped_column(Integer)  # actions accepted
    event_count: Mapped[int] = mapped_column(Integer)
    # "finished", "aborted" (stopped while live) or "abandoned" (nobody acted for the idle
    # time): the last two have no results; rows of release 0001 are finished
    status: Mapped[str] = mapped_column(String(16), server_default=text("'finished'"))
    # counted by stats and the leaderboard (`service.core.ranking`); rows archived before
    # identities were verified are unranked, reason "legacy"
    ranked: Mapped[bool] = mapped_column(Boolean, server_default=false())
    unranked_reason: Mapped[str | None] = mapped_column(String(REASON_LENGTH))  # the primary
    unranked_reasons: Mapped[list[str] | None] = mapped_column(JsonDocument)  # every one
    # the time control it was played under; null: none, or archived before it was kept
    clock: Mapped[dict[str, Any] | None] = mapped_column(JsonDocument)
    # the tournament table it was: all three or none (none: archived before they were kept)
    tournament_id: Mapped[str | None] = mapped_column(identifier(ID_LENGTH), index=True)
    tournament_round: Mapped[int | None] = mapped_column(Integer)
    tournament_table: Mapped[int | None] = mapped_column(Integer)

    __table_args__ = (
        # the archive's newest-first listing and its keyset pagination
        Index("ix_games_finished", "finished_at", "id"),
        # the same listing of ranked (or unranked) games only
        Index("ix_games_ranked_finished", "ranked", "finished_at", "id"),
        CheckConstraint("status IN ('finished', 'aborted', 'abandoned')", name="status"),
        CheckConstraint(
            "(tournament_id IS NULL AND tournament_round IS NULL AND tournament_table IS NULL)"
            " OR (tournament_id IS NOT NULL AND tournament_round IS NOT NULL"
            " AND tournament_table IS NOT NULL)",
            name="tournament_table_whole",
        ),
        # ranked exactly when no reason says otherwise; only a finished game is ranked
        CheckConstraint(
            "(ranked AND unranked_reason IS NULL AND status = 'finished')"
            " OR (NOT ranked AND unranked_reason IS NOT NULL)",
            name="ranked_has_no_reason",
        ),
    )


class SeatRow(Base):
    __tablename__ = "seats"

    game_id: Mapped[str] = mapped_column(
        identifier(ID_LENGTH), ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(Text)
    bot: Mapped[str | None] = mapped_column(String(32))
    player_id: Mapped[str | None] = mapped_column(identifier(PLAYER_ID_LENGTH))
    finished_at: Mapped[datetime] = mapped_column(UTCDateTime())  # copy of games.finished_at
    # the seat's result counts for its player's ranked figures: games.ranked, and the seat
    # has no reason of its own not to (`service.core.ranking`); rows archived before per-seat
    # ranking have their game's
    ranked: Mapped[bool] = mapped_column(Boolean, server_default=false())
    unranked_reason: Mapped[str | None] = mapped_column(String(REASON_LENGTH))  # "taken_over"

    __table_args__ = (
        # a player's history, newest first, with keyset pagination (an index on player_id)
        Index("ix_seats_player_history", "player_id", "finished_at", "game_id"),
        # one seat per player id in a game (NULLs, anonymous seats, are not compared)
        UniqueConstraint("game_id", "player_id"),
        # a seat with a reason of its own does not count
        CheckConstraint("NOT ranked OR unranked_reason IS NULL", name="ranked_has_no_reason"),
    )


class ResultRow(Base):
    __tablename__ = "results"

    game_id: Mapped[str] = mapped_column(identifier(ID_LENGTH), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    player_id: Mapped[str | None] = mapped_column(identifier(PLAYER_ID_LENGTH))  # the seat's
    score: Mapped[int] = mapped_column(Integer)
    colors: Mapped[dict[str, Any]] = mapped_column(JsonDocument)  # colour -> {points, run}
    rank: Mapped[int] = mapped_column(Integer)
    winner: Mapped[bool] = mapped_column(Boolean)  # a shared win is a win
    currency: Mapped[int] = mapped_column(Integer)
    bust: Mapped[int] = mapped_column(Integer)  # bust tokens held at the end
    cards: Mapped[int] = mapped_column(Integer)  # cards in the collection
    # the player resigned (a bot played on): ranked below every seat that did not
    resigned: Mapped[bool] = mapped_column(Boolean, server_default=false())
    perfect_colors: Mapped[int] = mapped_column(Integer)  # colours with a run of all nine
    busts: Mapped[int] = mapped_column(Integer)  # times this seat busted (`busted` events)
    ranked: Mapped[bool] = mapped_column(Boolean, server_default=false())  # seats.ranked's copy

    __table_args__ = (
        ForeignKeyConstraint(
            ["game_id", "seat"], ["seats.game_id", "seats.seat"], ondelete="CASCADE"
        ),
        # a player's figures (ranked games, or all) read this index alone
        Index(
            "ix_results_player_stats",
            "player_id",
            "ranked",
            "winner",
            "score",
            "busts",
            "perfect_colors",
        ),
        # the ranked leaderboard: its rows only, grouped by player id, read from the index
        Index("ix_results_ranked_board", "ranked", "player_id", "winner", "score"),
    )


class EventRow(Base):
    __tablename__ = "events"

    game_id: Mapped[str] = mapped_column(
        identifier(ID_LENGTH), ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    type: Mapped[str] = mapped_column(String(32))
    data: Mapped[str] = mapped_column(Text)  # the event's JSON, byte for byte as published


class RatedGameRow(Base):
    __tablename__ = "rated_games"

    # the rating order: drawn once the game's players' rows are locked, so two games with
    # a player in common are numbered in the order they changed that player's rating
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    game_id: Mapped[str] = mapped_column(
        identifier(ID_LENGTH), ForeignKey("games.id", ondelete="CASCADE"), unique=True
    )


class RatingRow(Base):
    __tablename__ = "ratings"

    player_id: Mapped[str] = mapped_column(identifier(PLAYER_ID_LENGTH), primary_key=True)
    mu: Mapped[float] = mapped_column(Double)
    sigma: Mapped[float] = mapped_column(Double)
    ordinal: Mapped[float] = mapped_column(Double)  # mu - 3 sigma: the leaderboard's order
    games: Mapped[int] = mapped_column(Integer)  # rated games
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())  # the last one's finished_at

    __table_args__ = (Index("ix_ratings_board", "ordinal", "player_id"),)


class RatingHistoryRow(Base):
    __tablename__ = "rating_history"

    player_id: Mapped[str] = mapped_column(identifier(PLAYER_ID_LENGTH), primary_key=True)
    seq: Mapped[int] = mapped_column(
        Integer, ForeignKey("rated_games.seq", ondelete="CASCADE"), primary_key=True
    )
    game_id: Mapped[str] = mapped_column(identifier(ID_LENGTH))  # rated_games' copy
    finished_at: Mapped[datetime] = mapped_column(UTCDateTime())  # the game's
    rank: Mapped[int] = mapped_column(Integer)  # the seat's place (1: first)
    rated_seats: Mapped[int] = mapped_column(Integer)  # how many seats were rated
    mu_before: Mapped[float] = mapped_column(Double)
    sigma_before: Mapped[float] = mapped_column(Double)
    mu: Mapped[float] = mapped_column(Double)
    sigma: Mapped[float] = mapped_column(Double)
    ordinal: Mapped[float] = mapped_column(Double)
    games: Mapped[int] = mapped_column(Integer)  # rated games, this one included


class ReviewRow(Base):
    __tablename__ = "game_reviews"

    game_id: Mapped[str] = mapped_column(identifier(ID_LENGTH), primary_key=True)
    review: Mapped[str] = mapped_column(Text)  # the review's JSON, as the API returns it
    reviewed_at: Mapped[datetime] = mapped_column(UTCDateTime())


class ErasureRow(Base):
    """The erasure ledger's copy in the archive (`service.privacy`): a player id's keyed
    digest (never the id), the pseudonym it became, when (unix seconds)."""

    __tablename__ = "erasures"

    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    pseudonym: Mapped[str] = mapped_column(String(64))
    erased_at: Mapped[float] = mapped_column(Double)


class ErasuresAppliedRow(Base):
    """The archive's applied mark (`service.privacy.ports.Ledger.applied`): the ledger whose
    erasures every row of the archive is known to have applied, or a reconciliation's pass
    token while it scans; one row, kept with the rows it vouches for (a restore brings back
    its backup's), when it was written (unix seconds)."""

    __tablename__ = "erasures_applied"
    __table_args__ = (CheckConstraint("id = 1", name="one_row"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    mark: Mapped[str] = mapped_column(String(64))
    marked_at: Mapped[float] = mapped_column(Double)


metadata = Base.metadata
games = GameRow.__table__
seats = SeatRow.__table__
results = ResultRow.__table__
events = EventRow.__table__
rated_games = RatedGameRow.__table__
ratings = RatingRow.__table__
rating_history = RatingHistoryRow.__table__
reviews = ReviewRow.__table__
erasures = ErasureRow.__table__
erasures_applied = ErasuresAppliedRow.__table__
