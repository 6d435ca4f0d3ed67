"""Abandoned games, and ranking per seat: a game abandoned is archived (never ranked); in a
ranked game, a seat a bot took over after timeouts does not count for its player.

Revision ID: 0003_abandoned
Revises: 0002_ranked
Create Date: 2026-12-13

- games.status gains "abandoned" (a live game nobody acted on for TEN_IDLE_TTL, ended by
  the service: no results, like an aborted game; unranked, reason "abandoned").
- seats.ranked (not null, false): the seat's result counts for its player's ranked figures
  (the game is ranked and the seat has no reason of its own not to count);
  seats.unranked_reason: the seat's own reason ("taken_over"), null when none. Existing
  seats count as their result does (results.ranked; a seat without a result: as its game),
  with no reason of their own, but for a seat whose result a ranked game keeps out of the
  figures: only a downgrade to 0002 leaves one (below), taken over.
- results.ranked is now seats.ranked's copy (existing rows already hold games.ranked, the
  same value); results.resigned (not null, false): the player resigned and ranks last.
- Checks: a status is finished, aborted or abandoned; a seat with a reason of its own does
  not count (ck_seats_ranked_has_no_reason).

Downgrade: abandoned games cannot be represented by revision 0002 (finished or aborted):
they are deleted, with their seats and events (they have no results). The per-seat columns
and results.resigned are dropped; results.ranked is left as it is, so a taken-over seat
keeps out of the ranked figures of the older release too (and is taken over again after an
upgrade; seat reasons in unranked games are lost).

Written by hand; tests/integration/test_migrations.py checks that autogenerate finds no
difference from infra/archive/models.py. Frozen: it does not import the models.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003_abandoned"
down_revision: str | Sequence[str] | None = "0002_ranked"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_STATUSES = "status IN ('finished', 'aborted')"
STATUSES = "status IN ('finished', 'aborted', 'abandoned')"
SEAT_RANKED_CHECK = "NOT ranked OR unranked_reason IS NULL"


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.drop_constraint(op.f("ck_games_status"), type_="check")
        batch.create_check_constraint(op.f("ck_games_status"), STATUSES)

    with op.batch_alter_table("seats") as batch:
        batch.add_column(
            sa.Column("ranked", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("unranked_reason", sa.String(32), nullable=True))
    op.execute(
        "UPDATE seats SET ranked = COALESCE("
        "(SELECT r.ranked FROM results r WHERE r.game_id = seats.game_id AND r.seat = seats.seat),"
        " (SELECT g.ranked FROM games g WHERE g.id = seats.game_id))"
    )
    op.execute(
        "UPDATE seats SET unranked_reason = 'taken_over'"
        " WHERE NOT ranked AND game_id IN (SELECT id FROM games WHERE ranked)"
    )
    with op.batch_alter_table("seats") as batch:
        batch.create_check_constraint(op.f("ck_seats_ranked_has_no_reason"), SEAT_RANKED_CHECK)

    with op.batch_alter_table("results") as batch:
        batch.add_column(
            sa.Column("resigned", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    abandoned = "SELECT id FROM games WHERE status = 'abandoned'"
    for table in ("events", "results", "seats"):  # SQLite migrates with foreign keys off
        op.execute(f"DELETE FROM {table} WHERE game_id IN ({abandoned})")
    op.execute("DELETE FROM games WHERE status = 'abandoned'")

    with op.batch_alter_table("results") as batch:
        batch.drop_column("resigned")

    with op.batch_alter_table("seats") as batch:
        batch.drop_constraint(op.f("ck_seats_ranked_has_no_reason"), type_="check")
        batch.drop_column("unranked_reason")
        batch.drop_column("ranked")

    with op.batch_alter_table("games") as batch:
        batch.drop_constraint(op.f("ck_games_status"), type_="check")
        batch.create_check_constraint(op.f("ck_games_status"), OLD_STATUSES)
