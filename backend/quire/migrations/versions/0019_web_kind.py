"""Documents: the kind ``web``, a saved web page (HTML, XHTML, SingleFile's HTML, MHTML) read
as its article's sections (formats/web.py, docs/sources/web.md).

Only the ``ck_documents_kind`` CHECK changes, as in 0017 and 0018: edited in place on SQLite,
dropped and added again on PostgreSQL.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-05
"""

from collections.abc import Sequence

from quire.storage.migrate import add_document_kinds, remove_document_kinds

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BEFORE = (
    "pdf", "epub", "perplexity", "markdown", "text", "chatgpt", "claude",
    "docx", "odt", "pptx", "odp", "xlsx", "ods", "image",
)  # fmt: skip
WEB = ("web",)


def upgrade() -> None:
    add_document_kinds(BEFORE, WEB)


def downgrade() -> None:
    remove_document_kinds(BEFORE, WEB)
