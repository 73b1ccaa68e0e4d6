"""Documents: the kind ``image``, a PNG, JPEG, TIFF, WebP or BMP file read page by page with
OCR (formats/image.py, docs/sources/images.md).

Only the ``ck_documents_kind`` CHECK changes, as in 0017: edited in place on SQLite, dropped
and added again on PostgreSQL.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-05
"""

from collections.abc import Sequence

from alembic import op

from quire.storage.migrate import applies_to, rewrite_table_sql

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BEFORE = (
    "pdf", "epub", "perplexity", "markdown", "text", "chatgpt", "claude",
    "docx", "odt", "pptx", "odp", "xlsx", "ods",
)  # fmt: skip
IMAGE = ("image",)


def _check(kinds: tuple[str, ...], sep: str) -> str:
    return f"kind IN ({sep.join(repr(k) for k in kinds)})"


def _postgres(kinds: tuple[str, ...]) -> None:
    op.execute("ALTER TABLE documents DROP CONSTRAINT ck_documents_kind")
    op.execute(
        f"ALTER TABLE documents ADD CONSTRAINT ck_documents_kind CHECK ({_check(kinds, ', ')})"
    )


def upgrade() -> None:
    if applies_to("sqlite"):
        rewrite_table_sql(
            op.get_bind(), "documents", _check(BEFORE, ","), _check(BEFORE + IMAGE, ",")
        )
    else:
        _postgres(BEFORE + IMAGE)


def downgrade() -> None:
    # The old schema has no place for them (their pages, chunks and jobs cascade).
    op.execute("DELETE FROM documents WHERE kind = 'image'")
    if applies_to("sqlite"):
        rewrite_table_sql(
            op.get_bind(), "documents", _check(BEFORE + IMAGE, ","), _check(BEFORE, ",")
        )
    else:
        _postgres(BEFORE)
