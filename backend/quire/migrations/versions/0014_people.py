"""People (the team library's access, docs/POSTGRES.md "People and tokens"): ``users``,
``api_tokens`` (SHA-256 of each token, never the token), and who owns and may read each
document and conversation. Both backends.

A library without people is unchanged: documents and conversations keep NULL owners and
"team" visibility, and storage/access.py lets the one user read everything, as before.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


#: PostgreSQL's tables (0013) use identity bigints; SQLite's autoincrement integers (its
#: Identity is ignored, and AUTOINCREMENT needs INTEGER).
ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _id() -> sa.Column[int]:
    return sa.Column("id", ID, sa.Identity(), primary_key=True)


def upgrade() -> None:
    op.create_table(
        "users",
        _id(),
        sa.Column("name", sa.Text, nullable=False, unique=True),
        sa.Column("admin", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "api_tokens",
        _id(),
        sa.Column(
            "user_id",
            ID,
            sa.ForeignKey("users.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("token_hash", sa.Text, nullable=False, unique=True),
        sa.Column("prefix", sa.Text, nullable=False),
        sa.Column("label", sa.Text, nullable=False, server_default=""),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("revoked_at", sa.DateTime),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_api_tokens_user", "api_tokens", ["user_id"])
    # Plain ALTER TABLE, the same words on both: SQLite adds a column with a REFERENCES or
    # CHECK clause in place (no table rebuild), PostgreSQL checks the existing rows.
    ref = ID.compile(dialect=op.get_bind().dialect)
    op.execute(f"ALTER TABLE documents ADD COLUMN owner_id {ref} REFERENCES users (id)")
    op.execute(
        "ALTER TABLE documents ADD COLUMN visibility TEXT NOT NULL DEFAULT 'team' "
        "CONSTRAINT ck_documents_visibility CHECK (visibility IN ('team','private'))"
    )
    op.execute(f"ALTER TABLE conversations ADD COLUMN owner_id {ref} REFERENCES users (id)")
    op.create_index("ix_documents_owner", "documents", ["owner_id"])
    op.create_index("ix_conversations_owner", "conversations", ["owner_id"])


def downgrade() -> None:
    op.drop_index("ix_conversations_owner", table_name="conversations")
    op.drop_index("ix_documents_owner", table_name="documents")
    # SQLite (3.35+) drops a column with its own CHECK and REFERENCES clauses in place.
    op.drop_column("conversations", "owner_id")
    op.drop_column("documents", "visibility")
    op.drop_column("documents", "owner_id")
    op.drop_index("ix_api_tokens_user", table_name="api_tokens")
    op.drop_table("api_tokens")
    op.drop_table("users")
