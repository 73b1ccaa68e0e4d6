"""Pages: ``label``, the printed page number a PDF declares in /PageLabels ("xii", "166",
"A-3"). NULL for existing pages until their document is ingested again, as for documents
without labels: they are cited by their physical number.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from quire.storage.migrate import applies_to

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if not applies_to("sqlite"):
        return
    op.add_column("pages", sa.Column("label", sa.Text, nullable=True))


def downgrade() -> None:
    if not applies_to("sqlite"):
        return
    op.drop_column("pages", "label")
