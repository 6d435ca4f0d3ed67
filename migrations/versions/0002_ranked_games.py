"""Ranked games: aborted games are archived too; each game says whether it is ranked and
why not; per-player figures and listings can keep to ranked games.

Revision ID: 0002_ranked
Revises: 0001_archive
Create Date: 2026-12-06

- games.status ("finished" | "aborted"; existing rows finished), games.ranked (not null,
  false), games.unranked_reason (the primary code), games.unranked_reasons (every code, a
  JSON list); results.ranked (a copy of games.ranked, for aggregates without a join).
- The games archived before this revision had self-asserted player ids: they stay unranked,
  reason "legacy".
- Checks: a status is finished or aborted; a game is ranked exactly when it has no unranked
  reason, and only when finished.
- Indexes: ix_games_ranked_finished (ranked, finished_at, id) for listings filtered by
  ranked; ix_results_player_stats gains `ranked` after player_id (a player's figures over
  ranked games or all, from the index alone); ix_results_ranked_board (ranked, player_id,
  winner, score) for the ranked leaderboard.

Downgrade: aborted games cannot be represented by revision 0001 (which holds finished games
only): they are deleted, with their seats and events. Ranking is dropped.

Written by hand; tests/integration/test_migrations.py checks that autogenerate finds no
difference from infra/archive/models.py. Frozen: it does not import the models.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0002_ranked"
down_revision: str | Sequence[str] | None = "0001_archive"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_STATS_COLUMNS = ["player_id", "winner", "score", "busts", "perfect_colors"]
STATS_COLUMNS = ["player_id", "ranked", "winner", "score", "busts", "perfect_colors"]
RANKED_CHECK = (
    "(ranked AND unranked_reason IS NULL AND status = 'finished')"
    " OR (NOT ranked AND unranked_reason IS NOT NULL)"
)


def _json() -> sa.types.TypeEngine:
    return sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.add_column(
            sa.Column(
                "status", sa.String(16), nullable=False, server_default=sa.text("'finished'")
            )
        )
        batch.add_column(
            sa.Column("ranked", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("unranked_reason", sa.String(32), nullable=True))
        batch.add_column(sa.Column("unranked_reasons", _json(), nullable=True))
    legacy = "CAST('[\"legacy\"]' AS jsonb)" if _dialect() == "postgresql" else "'[\"legacy\"]'"
    op.execute(f"UPDATE games SET unranked_reason = 'legacy', unranked_reasons = {legacy}")
    with op.batch_alter_table("games") as batch:
        batch.create_check_constraint(op.f("ck_games_status"), "status IN ('finished', 'aborted')")
        batch.create_check_constraint(op.f("ck_games_ranked_has_no_reason"), RANKED_CHECK)
    op.create_index("ix_games_ranked_finished", "games", ["ranked", "finished_at", "id"])

    with op.batch_alter_table("results") as batch:
        batch.add_column(
            sa.Column("ranked", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    op.drop_index("ix_results_player_stats", table_name="results")
    op.create_index("ix_results_player_stats", "results", STATS_COLUMNS)
    op.create_index(
        "ix_results_ranked_board", "results", ["ranked", "player_id", "winner", "score"]
    )


def downgrade() -> None:
    aborted = "SELECT id FROM games WHERE status = 'aborted'"
    for table in ("events", "results", "seats"):  # SQLite migrates with foreign keys off
        op.execute(f"DELETE FROM {table} WHERE game_id IN ({aborted})")
    op.execute("DELETE FROM games WHERE status = 'aborted'")

    op.drop_index("ix_results_ranked_board", table_name="results")
    op.drop_index("ix_results_player_stats", table_name="results")
    op.create_index("ix_results_player_stats", "results", OLD_STATS_COLUMNS)
    with op.batch_alter_table("results") as batch:
        batch.drop_column("ranked")

    op.drop_index("ix_games_ranked_finished", table_name="games")
    with op.batch_alter_table("games") as batch:
        batch.drop_constraint(op.f("ck_games_ranked_has_no_reason"), type_="check")
        batch.drop_constraint(op.f("ck_games_status"), type_="check")
        batch.drop_column("unranked_reasons")
        batch.drop_column("unranked_reason")
        batch.drop_column("ranked")
        batch.drop_column("status")


def _dialect() -> str:
    return op.get_context().dialect.name
