"""Notes: the researcher's own layer (docs/using/notes.md). ``notes`` holds highlights and
notes on a document's page (character span, quote, the boxes drawn on a rendered page),
answers kept as notes (their conversation), and the annotations imported from Zotero (their
item key); each is indexed as a hidden document of the new kind ``note`` (``index_id``), so
that the three search legs, the kind filters and the citations treat it like any source.
Both backends.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from quire.storage.migrate import add_document_kinds, remove_document_kinds

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BEFORE = (
    "pdf", "epub", "perplexity", "markdown", "text", "chatgpt", "claude",
    "docx", "odt", "pptx", "odp", "xlsx", "ods", "image", "web",
)  # fmt: skip
NOTE = ("note",)
#: As in 0014: identity bigints on PostgreSQL, autoincrement integers on SQLite.
ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    add_document_kinds(BEFORE, NOTE)
    op.create_table(
        "notes",
        sa.Column("id", ID, sa.Identity(), primary_key=True),
        sa.Column("document_id", ID, sa.ForeignKey("documents.id", ondelete="CASCADE")),
        sa.Column("page", sa.Integer),
        sa.Column("span_start", sa.Integer),
        sa.Column("span_end", sa.Integer),
        sa.Column("quote", sa.Text, nullable=False, server_default=""),
        sa.Column("boxes", sa.JSON),
        sa.Column("color", sa.Text),
        sa.Column("tags", sa.JSON, nullable=False, server_default="[]"),
        sa.Column("body", sa.Text, nullable=False, server_default=""),
        sa.Column("origin", sa.Text, nullable=False, server_default="quire"),
        sa.Column("zotero_key", sa.Text),
        sa.Column("annotation_type", sa.Text),
        sa.Column("status", sa.Text, nullable=False, server_default="ok"),
        sa.Column("owner_id", ID, sa.ForeignKey("users.id")),
        sa.Column("visibility", sa.Text, nullable=False, server_default="team"),
        sa.Column("conversation_id", ID, sa.ForeignKey("conversations.id", ondelete="SET NULL")),
        sa.Column("message_id", ID),
        sa.Column("index_id", ID, sa.ForeignKey("documents.id", ondelete="SET NULL")),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=False),
        sa.CheckConstraint("origin IN ('quire','zotero')", name="ck_notes_origin"),
        sa.CheckConstraint("status IN ('ok','moved','orphaned')", name="ck_notes_status"),
        sa.CheckConstraint("visibility IN ('team','private')", name="ck_notes_visibility"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_notes_document", "notes", ["document_id", "page"])
    op.create_index("ix_notes_owner", "notes", ["owner_id"])
    op.create_index("ix_notes_zotero_key", "notes", ["zotero_key"])
    op.create_index("ix_notes_index", "notes", ["index_id"])


def downgrade() -> None:
    op.drop_index("ix_notes_index", table_name="notes")
    op.drop_index("ix_notes_zotero_key", table_name="notes")
    op.drop_index("ix_notes_owner", table_name="notes")
    op.drop_index("ix_notes_document", table_name="notes")
    op.drop_table("notes")
    remove_document_kinds(BEFORE, NOTE)
