"""PostgreSQL: what the BM25 leg reads on every query, cheaper (bench/postgres.py at 1M chunks,
docs/POSTGRES.md). The frequent terms' entries (``term_postings.body``, a few MB per query)
are stored uncompressed: they are packed integers that pglz barely shrinks (-11 %) but that
each read had to inflate. And the chunks the leg checks against the filter are matched to
their documents from an index (``id`` with ``document_id``), not from the heap of chunk text.
Nothing on SQLite. Entries written before keep their compression until the worker reads them
again.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-03
"""

from collections.abc import Sequence

from alembic import op

from quire.storage.migrate import applies_to

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if not applies_to("postgresql"):
        return
    op.execute("ALTER TABLE term_postings ALTER COLUMN body SET STORAGE EXTERNAL")
    op.execute(
        "CREATE INDEX IF NOT EXISTS ix_bm25_chunk_documents ON page_chunks (id) "
        "INCLUDE (document_id)"
    )


def downgrade() -> None:
    if not applies_to("postgresql"):
        return
    op.execute("DROP INDEX IF EXISTS ix_bm25_chunk_documents")
    op.execute("ALTER TABLE term_postings ALTER COLUMN body SET STORAGE EXTENDED")
