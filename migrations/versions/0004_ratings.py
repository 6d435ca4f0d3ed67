"""Ratings: each rated player's Weng-Lin rating (`service.history.ratings`), its history per rated
game, and the order games were rated in.

Revision ID: 0004_ratings
Revises: 0003_abandoned
Create Date: 2026-12-20

- rated_games (seq: an autoincrementing key, the order games were rated in; game_id,
  unique, cascading from games).
- ratings (player_id, mu, sigma, ordinal = mu - 3 sigma, games rated, updated_at: the last
  rated game's end); ix_ratings_board (ordinal, player_id) for the leaderboard by rating.
- rating_history ((player_id, seq) key: a player's history newest first; the game, its end,
  the seat's rank, how many seats were rated, mu and sigma before, mu, sigma and ordinal
  after, games rated so far), cascading from rated_games.

The tables start empty: games archived before this revision are rated by
`python -m service.cli ratings rebuild` (run once after upgrading; it replays the ranked games
archived before this revision first, by their end, then the others in the order they were
rated). Downgrade drops the three tables.

Written by hand; tests/integration/test_migrations.py checks that autogenerate finds no
difference from infra/archive/models.py. Frozen: it does not import the models.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_ratings"
down_revision: str | Sequence[str] | None = "0003_abandoned"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _identifier(length: int) -> sa.types.TypeEngine:
    """Identifiers compare byte by byte: collation "C" on PostgreSQL."""
    return sa.String(length).with_variant(sa.String(length, collation="C"), "postgresql")


def _float(name: str) -> sa.Column:
    return sa.Column(name, sa.Double(), nullable=False)


def upgrade() -> None:
    op.create_table(
        "rated_games",
        sa.Column("seq", sa.Integer(), primary_key=True, autoincrement=True, nullable=False),
        sa.Column("game_id", _identifier(64), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.id"],
            name=op.f("fk_rated_games_game_id_games"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_rated_games")),
        sa.UniqueConstraint("game_id", name=op.f("uq_rated_games_game_id")),
    )
    op.create_table(
        "ratings",
        sa.Column("player_id", _identifier(200), nullable=False),
        _float("mu"),
        _float("sigma"),
        _float("ordinal"),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("player_id", name=op.f("pk_ratings")),
    )
    op.create_index("ix_ratings_board", "ratings", ["ordinal", "player_id"])
    op.create_table(
        "rating_history",
        sa.Column("player_id", _identifier(200), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("game_id", _identifier(64), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("rated_seats", sa.Integer(), nullable=False),
        _float("mu_before"),
        _float("sigma_before"),
        _float("mu"),
        _float("sigma"),
        _float("ordinal"),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["seq"],
            ["rated_games.seq"],
            name=op.f("fk_rating_history_seq_rated_games"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("player_id", "seq", name=op.f("pk_rating_history")),
    )


def downgrade() -> None:
    op.drop_table("rating_history")
    op.drop_index("ix_ratings_board", table_name="ratings")
    op.drop_table("ratings")
    op.drop_table("rated_games")
