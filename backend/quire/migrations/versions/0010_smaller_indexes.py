"""Smaller indexes: the trigram index without positions (``detail=none``, about a fifth of its
size) and the frequent terms' postings in narrower integers (~3.3 bytes a posting, not 12).

The exact leg (quire/retrieval/exact.py) no longer asks FTS5 for phrase matches or their
bm25(): it finds the rows holding every trigram of a keyword, checks their text and scores the
counts with bm25()'s formula, which needs no positions. The trigram index is rebuilt once from
``page_chunks``; the sync triggers name the table and keep working. The postings' entries are
emptied: the worker reads them again, in the new layout, when it is next idle.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01
"""

from collections.abc import Sequence

from alembic import op

from quire.storage.migrate import applies_to

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _recreate(detail: str) -> None:
    op.execute("DROP TABLE IF EXISTS page_chunks_tri")
    op.execute(
        "CREATE VIRTUAL TABLE page_chunks_tri USING fts5("
        f"text, content='page_chunks', content_rowid='id', tokenize='trigram'{detail})"
    )
    op.execute("INSERT INTO page_chunks_tri(page_chunks_tri) VALUES ('rebuild')")
    # Entries of either layout are read again by the worker (quire/storage/term_postings.py).
    op.execute("DELETE FROM term_postings")
    op.execute("DELETE FROM term_postings_state WHERE key = 'state'")


def upgrade() -> None:
    if not applies_to("sqlite"):
        return
    _recreate(", detail=none")


def downgrade() -> None:
    if not applies_to("sqlite"):
        return
    _recreate("")
