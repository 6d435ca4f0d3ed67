"""Reviews with the luck fitted: the reviews kept before the luck changed go.

Revision ID: 0011_reviews_luck_fitted
Revises: 0010_erasures_applied
Create Date: 2026-12-07

The post-game review's luck changed meaning: a card's luck is now what it did to each
seat's final margin as a value fitted to self-play sees it (`domain.bots.luck`), no longer
the drawer's better stop right after it; every seat's `luck`, `skill`, `others` and
luck-adjusted result follow from it. A review is kept once per game and never recomputed,
so the rows kept before would be served, and read by luck-adjusted ratings and standings,
with the old luck: this revision deletes them, and each game is reviewed again the first
time its review is asked for. Downgrade deletes them too (the earlier code would serve the
new luck).

Data only: the schema is unchanged. Frozen: it does not import the models.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0011_reviews_luck_fitted"
down_revision: str | Sequence[str] | None = "0010_erasures_applied"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("DELETE FROM game_reviews")


def downgrade() -> None:
    op.execute("DELETE FROM game_reviews")
