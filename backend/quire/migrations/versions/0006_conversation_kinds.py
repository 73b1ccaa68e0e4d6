"""Documents: kinds ``chatgpt`` and ``claude`` (conversations imported from the assistants'
data exports, one document per conversation, one page per turn).

Only the ``ck_documents_kind`` CHECK changes. The usual SQLite recreate (batch_alter_table:
create a copy, copy the rows, drop the old table) cannot be used here: migrations run inside a
transaction with ``foreign_keys`` on, where ``PRAGMA foreign_keys = OFF`` is a no-op, so the
DROP would cascade to every page, chunk (and its FTS rows) and job. A CHECK that admits more
values is the case SQLite's ALTER TABLE documentation allows to edit in place: the table's SQL
in ``sqlite_schema`` is rewritten under ``writable_schema`` and ``schema_version`` bumped, so
every open connection re-reads it. Rows, indexes and triggers are untouched.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from collections.abc import Sequence

from alembic import op

from quire.storage.migrate import applies_to, rewrite_table_sql

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD = "kind IN ('pdf','epub','perplexity','markdown','text')"
NEW = "kind IN ('pdf','epub','perplexity','markdown','text','chatgpt','claude')"


def upgrade() -> None:
    if not applies_to("sqlite"):
        return
    rewrite_table_sql(op.get_bind(), "documents", OLD, NEW)


def downgrade() -> None:
    if not applies_to("sqlite"):
        return
    conn = op.get_bind()
    # The old schema has no place for them (their pages, chunks and jobs cascade).
    conn.exec_driver_sql("DELETE FROM documents WHERE kind IN ('chatgpt', 'claude')")
    rewrite_table_sql(conn, "documents", NEW, OLD)
