"""Documents: ``origin``, where a document came from (upload, folder, chatgpt, claude,
perplexity, zotero, web), and ``source_runs``, the history of imports and folder passes that
the Settings page lists.

``origin`` is a virtual generated column (nothing is stored, nothing to backfill): the
``type`` of ``metadata.origin`` when intake wrote one (a watched folder, a Zotero item), else
told from the source key or the kind. The expression is :data:`ORIGIN_SQL`, shared with
quire/storage/schema.py so that the two cannot drift.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from quire.storage.migrate import applies_to
from quire.storage.schema import ORIGIN_SQL

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if not applies_to("sqlite"):
        return
    # SQLite adds a generated column with ALTER TABLE only if it is VIRTUAL.
    op.add_column(
        "documents", sa.Column("origin", sa.Text, sa.Computed(ORIGIN_SQL, persisted=False))
    )
    op.create_table(
        "source_runs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("location", sa.Text, nullable=False),
        sa.Column("started_at", sa.DateTime, nullable=False),
        sa.Column("finished_at", sa.DateTime, nullable=False),
        sa.Column("ok", sa.Boolean, nullable=False),
        sa.Column("summary", sa.JSON, nullable=False, server_default="{}"),
        sa.Column("error", sa.Text),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_source_runs_source", "source_runs", ["source", "location", "id"])


def downgrade() -> None:
    if not applies_to("sqlite"):
        return
    op.drop_index("ix_source_runs_source", "source_runs")
    op.drop_table("source_runs")
    op.drop_column("documents", "origin")
