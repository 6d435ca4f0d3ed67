"""The archive's applied mark: which erasure ledger every row of the archive has applied.

Revision ID: 0010_erasures_applied
Revises: 0009_game_context
Create Date: 2026-12-07

`service.privacy`: the reconciliation of the erasure ledger scans the archive only when
this mark is not the ledger's (`pseudonyms.ledger_mark`: a digest of the ledger's
digests), then writes it; a restore of an older backup brings back an older mark (or none)
and so the scan. One row (`id` = 1), `mark` (the digest, or a pass token while a
reconciliation scans), `marked_at` (unix seconds). Starts empty: the first reconciliation
after upgrading scans the archive once. Frozen: it does not import the models.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010_erasures_applied"
down_revision: str | Sequence[str] | None = "0009_game_context"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "erasures_applied",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("mark", sa.String(64), nullable=False),
        sa.Column("marked_at", sa.Double(), nullable=False),
        sa.CheckConstraint("id = 1", name=op.f("ck_erasures_applied_one_row")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_erasures_applied")),
    )


def downgrade() -> None:
    op.drop_table("erasures_applied")
