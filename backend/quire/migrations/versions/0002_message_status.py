"""Messages: status (complete | interrupted | error) and meta (mode, verify, notices).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from quire.storage.migrate import applies_to

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if not applies_to("sqlite"):
        return
    op.add_column(
        "messages", sa.Column("status", sa.Text, nullable=False, server_default="complete")
    )
    op.add_column("messages", sa.Column("meta", sa.JSON, nullable=False, server_default="{}"))


def downgrade() -> None:
    if not applies_to("sqlite"):
        return
    op.drop_column("messages", "meta")
    op.drop_column("messages", "status")
