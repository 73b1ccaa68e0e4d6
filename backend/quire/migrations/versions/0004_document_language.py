"""Documents: ``language``, detected at ingest (quire.text.language); existing documents are
told from a sample of their stored pages, as ingest would (NULL: too little text to tell).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from quire.storage.migrate import applies_to
from quire.text.language import SAMPLE_CHARS, SAMPLE_PAGES, detect

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _sample_pages(conn: sa.Connection, document_id: int) -> list[str]:
    """The text of at most SAMPLE_PAGES pages spread over the document, cut to fit the sample
    (never the whole of a 20,000-page book in memory)."""
    numbers = [
        r[0]
        for r in conn.execute(
            sa.text("SELECT page FROM pages WHERE document_id = :d ORDER BY page"),
            {"d": document_id},
        )
    ]
    if not numbers:
        return []
    step = max(1.0, len(numbers) / SAMPLE_PAGES)
    chosen = sorted({numbers[int(i * step)] for i in range(min(len(numbers), SAMPLE_PAGES))})
    rows = conn.execute(
        sa.text(
            "SELECT substr(text, 1, :n) FROM pages WHERE document_id = :d "
            "AND page IN (SELECT value FROM json_each(:pages)) ORDER BY page"
        ),
        {"n": SAMPLE_CHARS // len(chosen), "d": document_id, "pages": str(chosen)},
    )
    return [r[0] for r in rows]


def upgrade() -> None:
    if not applies_to("sqlite"):
        return
    op.add_column("documents", sa.Column("language", sa.Text, nullable=True))
    conn = op.get_bind()
    ids = [r[0] for r in conn.execute(sa.text("SELECT id FROM documents ORDER BY id"))]
    for document_id in ids:
        language = detect(_sample_pages(conn, document_id))
        if language is not None:
            conn.execute(
                sa.text("UPDATE documents SET language = :l WHERE id = :d"),
                {"l": language, "d": document_id},
            )


def downgrade() -> None:
    if not applies_to("sqlite"):
        return
    op.drop_column("documents", "language")
