"""``term_postings``: the frequent terms' postings next to FTS5, so that BM25 is fast from the
first query (issue 14, item 5; quire/storage/term_postings.py).

Empty after the upgrade: the worker reads the entries from FTS5 when it is next idle. A trigger
empties the table when a chunk's indexed text changes in place, the one change an entry cannot
follow (added and deleted chunks it can).

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from quire.storage.migrate import applies_to

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if not applies_to("sqlite"):
        return
    op.create_table(
        "term_postings",
        sa.Column("term", sa.Text, primary_key=True),
        sa.Column("upto", sa.Integer, nullable=False),
        sa.Column("body", sa.LargeBinary, nullable=False),
    )
    op.create_table(
        "term_postings_state",
        sa.Column("key", sa.Text, primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
    )
    op.execute(
        """
        CREATE TRIGGER page_chunks_terms_au
        AFTER UPDATE OF text, heading_path, fts_text, fts_heading ON page_chunks BEGIN
          DELETE FROM term_postings;
          DELETE FROM term_postings_state WHERE key = 'state';
        END
        """
    )


def downgrade() -> None:
    if not applies_to("sqlite"):
        return
    op.execute("DROP TRIGGER IF EXISTS page_chunks_terms_au")
    op.drop_table("term_postings_state")
    op.drop_table("term_postings")
