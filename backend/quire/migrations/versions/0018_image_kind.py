"""Documents: the kind ``image``, a PNG, JPEG, TIFF, WebP or BMP file read page by page with
OCR (formats/image.py, docs/sources/images.md).

Only the ``ck_documents_kind`` CHECK changes, as in 0017: edited in place on SQLite, dropped
and added again on PostgreSQL.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-05
"""

from collections.abc import Sequence

from quire.storage.migrate import add_document_kinds, remove_document_kinds

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BEFORE = (
    "pdf", "epub", "perplexity", "markdown", "text", "chatgpt", "claude",
    "docx", "odt", "pptx", "odp", "xlsx", "ods",
)  # fmt: skip
IMAGE = ("image",)


def upgrade() -> None:
    add_document_kinds(BEFORE, IMAGE)


def downgrade() -> None:
    remove_document_kinds(BEFORE, IMAGE)
