"""Reviews graded again: the reviews kept before the grades changed go.

Revision ID: 0008_reviews_regraded
Revises: 0007_erasures
Create Date: 2026-12-07

The post-game review changed meaning and shape: a seat's `accuracy` is graded over its
non-obvious decisions (it was the mean over all of them), `skill` counts the seat's own
decisions only (the others' are the new `others`), seats have a `performance` and
decisions a `stake`, and a move the clock made after a timeout is reported at the version
it was made on. A review is kept once per game and never recomputed, so the rows kept
before would be served for good with the old meaning and without the new fields: this
revision deletes them, and each game is reviewed again the first time its review is asked
for. Downgrade deletes them too (the earlier code would serve the new meaning).

Data only: the schema is unchanged. Frozen: it does not import the models.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0008_reviews_regraded"
down_revision: str | Sequence[str] | None = "0007_erasures"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("DELETE FROM game_reviews")


def downgrade() -> None:
    op.execute("DELETE FROM game_reviews")
