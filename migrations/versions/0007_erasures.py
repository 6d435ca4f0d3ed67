"""The erasure ledger: the players erased, as keyed digests of their ids, never the ids.

Revision ID: 0007_erasures
Revises: 0006_reviews_rejudged
Create Date: 2026-12-07

`service.privacy`: an erasure is recorded here and in the live store before it is applied,
so a restore of either from an older backup is erased again by the reconciliation (at start
and by the leased periodic job). Frozen: it does not import the models.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_erasures"
down_revision: str | Sequence[str] | None = "0006_reviews_rejudged"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "erasures",
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("pseudonym", sa.String(64), nullable=False),
        sa.Column("erased_at", sa.Double(), nullable=False),
        sa.PrimaryKeyConstraint("digest", name="pk_erasures"),
    )


def downgrade() -> None:
    op.drop_table("erasures")
