"""Drop ``ix_page_chunks_hash``: no query reads chunks by content hash (``chunks.replace``
matches hashes among one document's chunks, found by ``ix_page_chunks_doc_page``), and the
index took 80 MB at 1M chunks and time on every insert.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02
"""

from collections.abc import Sequence

from alembic import op

from quire.storage.migrate import applies_to

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if not applies_to("sqlite"):
        return
    op.drop_index("ix_page_chunks_hash", table_name="page_chunks")


def downgrade() -> None:
    if not applies_to("sqlite"):
        return
    op.create_index("ix_page_chunks_hash", "page_chunks", ["content_hash"])
