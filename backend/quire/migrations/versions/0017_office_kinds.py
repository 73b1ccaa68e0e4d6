"""Documents: the Office kinds ``docx``, ``odt``, ``pptx``, ``odp``, ``xlsx``, ``ods``
(formats/office/, docs/sources/office.md).

Only the ``ck_documents_kind`` CHECK changes. On SQLite it is edited in place, as in 0006
(a table recreate would cascade deletes to every page, chunk and job); on PostgreSQL the
constraint is dropped and added again, which checks the rows already there.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-05
"""

from collections.abc import Sequence

from quire.storage.migrate import add_document_kinds, remove_document_kinds

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BEFORE = ("pdf", "epub", "perplexity", "markdown", "text", "chatgpt", "claude")
OFFICE = ("docx", "odt", "pptx", "odp", "xlsx", "ods")


def upgrade() -> None:
    add_document_kinds(BEFORE, OFFICE)


def downgrade() -> None:
    remove_document_kinds(BEFORE, OFFICE)
