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

from alembic import op

from quire.storage.migrate import applies_to, rewrite_table_sql

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BEFORE = ("pdf", "epub", "perplexity", "markdown", "text", "chatgpt", "claude")
OFFICE = ("docx", "odt", "pptx", "odp", "xlsx", "ods")


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
            op.get_bind(), "documents", _check(BEFORE, ","), _check(BEFORE + OFFICE, ",")
        )
    else:
        _postgres(BEFORE + OFFICE)


def downgrade() -> None:
    # The old schema has no place for them (their pages, chunks and jobs cascade).
    op.execute(f"DELETE FROM documents WHERE kind IN ({', '.join(repr(k) for k in OFFICE)})")
    if applies_to("sqlite"):
        rewrite_table_sql(
            op.get_bind(), "documents", _check(BEFORE + OFFICE, ","), _check(BEFORE, ",")
        )
    else:
        _postgres(BEFORE)
