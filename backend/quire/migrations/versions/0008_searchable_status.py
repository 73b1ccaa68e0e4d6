"""Documents: status ``searchable`` — its chunks are written (BM25 and the exact leg find it)
while its vectors are still being made; ``ready`` once they are (issue 14, searchable before
embedded).

Only the ``ck_documents_status`` CHECK changes, in place, as migration 0006 did for the kinds
(quire.storage.migrate.rewrite_table_sql says why a recreate cannot be used).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01
"""

from collections.abc import Sequence

from alembic import op

from quire.storage.migrate import applies_to, rewrite_table_sql

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD = "status IN ('queued','processing','ready','failed')"
NEW = "status IN ('queued','processing','searchable','ready','failed')"


def upgrade() -> None:
    if not applies_to("sqlite"):
        return
    rewrite_table_sql(op.get_bind(), "documents", OLD, NEW)


def downgrade() -> None:
    if not applies_to("sqlite"):
        return
    conn = op.get_bind()
    # Their vectors are being made: the old schema calls that processing (hidden from search).
    conn.exec_driver_sql("UPDATE documents SET status = 'processing' WHERE status = 'searchable'")
    rewrite_table_sql(conn, "documents", NEW, OLD)
