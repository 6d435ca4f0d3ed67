"""Post-game reviews: one row per reviewed finished game (`service.history.reviews`).

Revision ID: 0005_game_reviews
Revises: 0004_ratings
Create Date: 2026-12-03

- game_reviews (game_id key; review: the review's JSON as the API returns it; reviewed_at).
  No foreign key to games: a finished game still in the game store is reviewed before
  the archiver has archived it.

The table starts empty: a game is reviewed the first time its review is asked for.
Downgrade drops it.

Written by hand; tests/integration/test_migrations.py checks that autogenerate finds no
difference from infra/archive/models.py. Frozen: it does not import the models.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_game_reviews"
down_revision: str | Sequence[str] | None = "0004_ratings"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "game_reviews",
        sa.Column(
            "game_id",
            sa.String(64).with_variant(sa.String(64, collation="C"), "postgresql"),
            nullable=False,
        ),
        sa.Column("review", sa.Text(), nullable=False),
        sa.Column("reviewed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("game_id", name=op.f("pk_game_reviews")),
    )


def downgrade() -> None:
    op.drop_table("game_reviews")
