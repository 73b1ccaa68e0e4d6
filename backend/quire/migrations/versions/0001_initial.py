"""Initial schema: documents, chunks with FTS5 (porter + trigram), jobs, chat, vector store.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from quire.storage.migrate import applies_to

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The embedded default embedder; another model rebuilds the vector file at start-up.
DEFAULT_MODEL = "local:all-MiniLM-L6-v2-int8"
DEFAULT_DIM = 384


def upgrade() -> None:
    if not applies_to("sqlite"):
        return
    op.create_table(
        "documents",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("title", sa.Text),
        sa.Column("author", sa.Text),
        sa.Column("filename", sa.Text, nullable=False),
        sa.Column("source_key", sa.Text, unique=True),
        sa.Column("sha256", sa.Text, nullable=False, unique=True),
        sa.Column("byte_size", sa.Integer, nullable=False),
        sa.Column("page_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("chunk_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("status", sa.Text, nullable=False, server_default="queued"),
        sa.Column("error", sa.Text),
        sa.Column("stored_path", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=False),
        sa.Column("metadata", sa.JSON, nullable=False, server_default="{}"),
        sa.CheckConstraint(
            "kind IN ('pdf','epub','perplexity','markdown','text')", name="ck_documents_kind"
        ),
        sa.CheckConstraint(
            "status IN ('queued','processing','ready','failed')", name="ck_documents_status"
        ),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_documents_status", "documents", ["status"])

    # The full text of every citable page (PDF page, EPUB section, Perplexity turn): what the
    # source viewer shows and what adjacent-page context is built from.
    op.create_table(
        "pages",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "document_id",
            sa.Integer,
            sa.ForeignKey("documents.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("page", sa.Integer, nullable=False),
        sa.Column("heading_path", sa.Text, nullable=False, server_default=""),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("metadata", sa.JSON, nullable=False, server_default="{}"),
        sa.UniqueConstraint("document_id", "page", name="uq_pages_document_page"),
    )

    op.create_table(
        "page_chunks",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "document_id",
            sa.Integer,
            sa.ForeignKey("documents.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("page", sa.Integer, nullable=False),
        sa.Column("ordinal", sa.Integer, nullable=False),
        sa.Column("heading_path", sa.Text, nullable=False, server_default=""),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("content_hash", sa.Text, nullable=False),
        sa.Column("char_count", sa.Integer, nullable=False),
        sa.Column("source", sa.Text, nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_page_chunks_doc_page", "page_chunks", ["document_id", "page", "ordinal"])
    op.create_index("ix_page_chunks_hash", "page_chunks", ["content_hash"])

    # BM25 over passages and heading paths; external content kept in sync by triggers.
    op.execute(
        "CREATE VIRTUAL TABLE page_chunks_fts USING fts5("
        "text, heading_path, content='page_chunks', content_rowid='id', "
        "tokenize='porter unicode61 remove_diacritics 2')"
    )
    # Exact substrings ("hard keywords": IDs, error codes, identifiers).
    op.execute(
        "CREATE VIRTUAL TABLE page_chunks_tri USING fts5("
        "text, content='page_chunks', content_rowid='id', tokenize='trigram')"
    )
    op.execute(
        """
        CREATE TRIGGER page_chunks_ai AFTER INSERT ON page_chunks BEGIN
          INSERT INTO page_chunks_fts(rowid, text, heading_path)
            VALUES (new.id, new.text, new.heading_path);
          INSERT INTO page_chunks_tri(rowid, text) VALUES (new.id, new.text);
        END
        """
    )
    op.execute(
        """
        CREATE TRIGGER page_chunks_ad AFTER DELETE ON page_chunks BEGIN
          INSERT INTO page_chunks_fts(page_chunks_fts, rowid, text, heading_path)
            VALUES ('delete', old.id, old.text, old.heading_path);
          INSERT INTO page_chunks_tri(page_chunks_tri, rowid, text)
            VALUES ('delete', old.id, old.text);
        END
        """
    )
    op.execute(
        """
        CREATE TRIGGER page_chunks_au AFTER UPDATE OF text, heading_path ON page_chunks BEGIN
          INSERT INTO page_chunks_fts(page_chunks_fts, rowid, text, heading_path)
            VALUES ('delete', old.id, old.text, old.heading_path);
          INSERT INTO page_chunks_tri(page_chunks_tri, rowid, text)
            VALUES ('delete', old.id, old.text);
          INSERT INTO page_chunks_fts(rowid, text, heading_path)
            VALUES (new.id, new.text, new.heading_path);
          INSERT INTO page_chunks_tri(rowid, text) VALUES (new.id, new.text);
        END
        """
    )

    op.create_table(
        "ingest_jobs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("document_id", sa.Integer, sa.ForeignKey("documents.id", ondelete="CASCADE")),
        sa.Column("kind", sa.Text, nullable=False, server_default="ingest"),
        sa.Column("status", sa.Text, nullable=False, server_default="queued"),
        sa.Column("stage", sa.Text, nullable=False, server_default="queued"),
        sa.Column("progress", sa.Float, nullable=False, server_default="0"),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("error", sa.Text),
        sa.Column("worker_id", sa.Text),
        sa.Column("heartbeat", sa.DateTime),
        sa.Column("not_before", sa.DateTime),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("started_at", sa.DateTime),
        sa.Column("finished_at", sa.DateTime),
        sa.Column("detail", sa.JSON, nullable=False, server_default="{}"),
        sa.CheckConstraint("kind IN ('ingest','reembed')", name="ck_ingest_jobs_kind"),
        sa.CheckConstraint(
            "status IN ('queued','running','done','failed')", name="ck_ingest_jobs_status"
        ),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_ingest_jobs_status", "ingest_jobs", ["status", "id"])
    op.create_index("ix_ingest_jobs_document", "ingest_jobs", ["document_id"])

    op.create_table(
        "conversations",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("title", sa.Text, nullable=False, server_default=""),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=False),
    )
    op.create_table(
        "messages",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "conversation_id",
            sa.Integer,
            sa.ForeignKey("conversations.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("role", sa.Text, nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("citations", sa.JSON, nullable=False, server_default="[]"),
        sa.Column("plan", sa.JSON),
        sa.Column("timings", sa.JSON),
        sa.Column("model", sa.Text),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.CheckConstraint("role IN ('user','assistant','system')", name="ck_messages_role"),
    )
    op.create_index("ix_messages_conversation", "messages", ["conversation_id", "id"])
    op.create_table(
        "chat_feedback",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "message_id",
            sa.Integer,
            sa.ForeignKey("messages.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("rating", sa.Integer, nullable=False),
        sa.Column("comment", sa.Text),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.CheckConstraint("rating IN (-1, 1)", name="ck_chat_feedback_rating"),
    )
    op.create_index("ix_chat_feedback_message", "chat_feedback", ["message_id"])

    # The vector store, in the attached file "vec" (derived data: rebuildable from page_chunks).
    op.execute(
        "CREATE TABLE IF NOT EXISTS vec.page_vecs_meta ("
        "id INTEGER PRIMARY KEY CHECK (id = 1), model TEXT NOT NULL, dim INTEGER NOT NULL, "
        "state TEXT NOT NULL CHECK (state IN ('ready','rebuilding')), "
        "created_at DATETIME NOT NULL)"
    )
    op.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS vec.page_vecs "
        f"USING vec0(embedding float[{DEFAULT_DIM}])"
    )
    op.execute(
        "INSERT OR IGNORE INTO vec.page_vecs_meta (id, model, dim, state, created_at) "
        f"VALUES (1, '{DEFAULT_MODEL}', {DEFAULT_DIM}, 'ready', datetime('now'))"
    )


def downgrade() -> None:
    if not applies_to("sqlite"):
        return
    op.execute("DROP TABLE IF EXISTS vec.page_vecs")
    op.execute("DROP TABLE IF EXISTS vec.page_vecs_meta")
    for trigger in ("page_chunks_ai", "page_chunks_ad", "page_chunks_au"):
        op.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    op.execute("DROP TABLE IF EXISTS page_chunks_tri")
    op.execute("DROP TABLE IF EXISTS page_chunks_fts")
    for table in (
        "chat_feedback",
        "messages",
        "conversations",
        "ingest_jobs",
        "page_chunks",
        "pages",
    ):
        op.drop_table(table)
    op.drop_table("documents")
