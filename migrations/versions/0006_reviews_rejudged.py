"""Reviews judged again: the reviews kept before the master bot became the judge go.

Revision ID: 0006_reviews_rejudged
Revises: 0005_game_reviews
Create Date: 2026-12-03

The post-game review's `lost` changed unit (points of expected margin -> percentage points
of winning chance, master's search the judge) and with it every grade and accuracy. A
review is kept once per game and never recomputed, so the rows kept by the earlier judge
would be served for good with the old meaning: this revision deletes them, and each game is
reviewed again the first time its review is asked for. Downgrade deletes them too (the
earlier code would read the new meaning as points).

Data only: the schema is unchanged (tests/integration/test_migrations.py: autogenerate
finds no difference from infra/archive/models.py). Frozen: it does not import the models.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0006_reviews_rejudged"
down_revision: str | Sequence[str] | None = "0005_game_reviews"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("DELETE FROM game_reviews")


def downgrade() -> None:
    op.execute("DELETE FROM game_reviews")
