"""PostgreSQL: the BM25 postings' primary key carries the term counts and the chunk length
(``INCLUDE``), so the BM25 leg reads a term's postings by an index-only scan instead of one
heap page per posting (at 30k chunks the leg's median went from 92 ms to 9 ms, measured in
one run; docs/POSTGRES.md). Nothing on SQLite.

Rebuilding the key takes a while on a large library (about a minute per million postings
here); autovacuum then keeps the visibility map that index-only scans need.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-02
"""

from collections.abc import Sequence

from alembic import op

from quire.storage.migrate import applies_to

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _key(include: str) -> None:
    op.execute("ALTER TABLE bm25_postings DROP CONSTRAINT bm25_postings_pkey")
    op.execute(
        "ALTER TABLE bm25_postings ADD CONSTRAINT bm25_postings_pkey "
        f"PRIMARY KEY (term, chunk_id){include}"
    )


def upgrade() -> None:
    if not applies_to("postgresql"):
        return
    _key(" INCLUDE (tf_text, tf_heading, len)")


def downgrade() -> None:
    if not applies_to("postgresql"):
        return
    _key("")
