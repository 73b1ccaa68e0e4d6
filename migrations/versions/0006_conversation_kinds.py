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

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD = "kind IN ('pdf','epub','perplexity','markdown','text')"
NEW = "kind IN ('pdf','epub','perplexity','markdown','text','chatgpt','claude')"


def _rewrite_check(conn: sa.Connection, old: str, new: str) -> None:
    sql = conn.exec_driver_sql(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'documents'"
    ).scalar()
    if sql is None or old not in sql:
        if sql is not None and new in sql:
            return  # already there
        raise RuntimeError(f"documents has no CHECK ({old}); not rewriting its schema")
    version = int(conn.exec_driver_sql("PRAGMA schema_version").scalar() or 0)
    conn.exec_driver_sql("PRAGMA writable_schema = ON")
    try:
        conn.execute(
            sa.text(
                "UPDATE sqlite_master SET sql = :sql WHERE type = 'table' AND name = 'documents'"
            ),
            {"sql": sql.replace(old, new)},
        )
        conn.exec_driver_sql(f"PRAGMA schema_version = {version + 1}")
    finally:
        conn.exec_driver_sql("PRAGMA writable_schema = OFF")
    check = conn.exec_driver_sql("PRAGMA integrity_check").scalar()
    if check != "ok":
        raise RuntimeError(f"integrity check after the CHECK rewrite: {check}")


def upgrade() -> None:
    _rewrite_check(op.get_bind(), OLD, NEW)


def downgrade() -> None:
    conn = op.get_bind()
    # The old schema has no place for them (their pages, chunks and jobs cascade).
    conn.exec_driver_sql("DELETE FROM documents WHERE kind IN ('chatgpt', 'claude')")
    _rewrite_check(conn, NEW, OLD)
