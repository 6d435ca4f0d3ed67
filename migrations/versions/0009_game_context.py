"""A game's time control and tournament table, kept with it.

Revision ID: 0009_game_context
Revises: 0008_reviews_regraded
Create Date: 2026-12-07

`games.clock`: the time control the game was played under (its JSON, e.g. `{"type":
"bank", "initial_seconds": 300, ...}`), null when it had none. `games.tournament_id`,
`tournament_round`, `tournament_table`: the tournament table the game was, all three null
for any other game. Games archived before this revision keep nulls in all four: the
archive never knew them (a tournament's export still finds its tables from the
tournament). Frozen: it does not import the models.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0009_game_context"
down_revision: str | Sequence[str] | None = "0008_reviews_regraded"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
    ident = sa.String(64).with_variant(sa.String(64, collation="C"), "postgresql")
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("clock", json, nullable=True))
        batch.add_column(sa.Column("tournament_id", ident, nullable=True))
        batch.add_column(sa.Column("tournament_round", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("tournament_table", sa.Integer(), nullable=True))
        batch.create_check_constraint(
            "tournament_table_whole",
            "(tournament_id IS NULL AND tournament_round IS NULL AND tournament_table IS NULL)"
            " OR (tournament_id IS NOT NULL AND tournament_round IS NOT NULL"
            " AND tournament_table IS NOT NULL)",
        )
    op.create_index("ix_games_tournament_id", "games", ["tournament_id"])


def downgrade() -> None:
    op.drop_index("ix_games_tournament_id", table_name="games")
    with op.batch_alter_table("games") as batch:
        batch.drop_constraint("tournament_table_whole", type_="check")
        batch.drop_column("tournament_table")
        batch.drop_column("tournament_round")
        batch.drop_column("tournament_id")
        batch.drop_column("clock")
