"""The library on PostgreSQL (the team library, docs/POSTGRES.md): the whole schema as of 0012,
with PostgreSQL's own search structures. Nothing on SQLite.

Revisions 0001-0012 are SQLite's history and do nothing on PostgreSQL; a PostgreSQL library
starts here. Every later migration is written for both.

Beside the tables SQLite has:

- ``bm25_postings``: for each FTS5 term (the same tokenizer, text/tokenize.py) and chunk,
  the term's count in the text and heading columns and the chunk's length in tokens;
  ``bm25_totals``: the row count and total length, in a few rows (one per writer slot, summed
  on read, so concurrent writers do not queue on one row). Together they are what FTS5's
  ``bm25()`` reads, so the BM25 leg computes the same formula with the same numbers.
- ``page_chunks.bm25_len``: a chunk's length in FTS5 tokens; it and the chunk's length in
  trigrams (FTS5's trigram tokenizer counts one per character but two) are kept in
  ``bm25_totals`` by statement triggers (a document's deletion cascades as one statement).
- ``vec.page_vecs``: pgvector, an HNSW index for cosine distance; the row goes with its chunk.
- ``ix_page_chunks_trgm``: pg_trgm over the lower-cased text, for the exact leg's substrings.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from quire.storage.migrate import applies_to

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

DEFAULT_MODEL = "local:all-MiniLM-L6-v2-int8"
DEFAULT_DIM = 384

# schema.ORIGIN_SQL in PostgreSQL's words (a stored generated column: PostgreSQL 15 has no
# virtual ones). LIKE is case-sensitive here, as GLOB is in SQLite.
ORIGIN_PG = (
    "coalesce(metadata -> 'origin' ->> 'type', CASE "
    "WHEN source_key LIKE 'folder:%' THEN 'folder' "
    "WHEN source_key LIKE 'zotero:%' THEN 'zotero' "
    "WHEN source_key LIKE 'chatgpt:%' OR kind = 'chatgpt' THEN 'chatgpt' "
    "WHEN source_key LIKE 'claude:%' OR kind = 'claude' THEN 'claude' "
    "WHEN source_key LIKE 'perplexity:%' OR kind = 'perplexity' THEN 'perplexity' "
    "WHEN source_key LIKE 'url:%' THEN 'web' "
    "ELSE 'upload' END)"
)
KINDS = ("pdf", "epub", "perplexity", "markdown", "text", "chatgpt", "claude")
DOCUMENT_STATUSES = ("queued", "processing", "searchable", "ready", "failed")
TOTAL_SLOTS = 16


def _one_of(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({','.join(repr(v) for v in values)})"


def _fk(table: str) -> sa.ForeignKey:
    return sa.ForeignKey(f"{table}.id", ondelete="CASCADE")


def upgrade() -> None:
    if not applies_to("postgresql"):
        return
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    _tables()
    _search()


def _tables() -> None:
    op.create_table(
        "documents",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("title", sa.Text),
        sa.Column("author", sa.Text),
        sa.Column("filename", sa.Text, nullable=False),
        sa.Column("source_key", sa.Text, unique=True),
        sa.Column("sha256", sa.Text, nullable=False, unique=True),
        sa.Column("byte_size", sa.BigInteger, nullable=False),
        sa.Column("page_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("chunk_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("status", sa.Text, nullable=False, server_default="queued"),
        sa.Column("error", sa.Text),
        sa.Column("stored_path", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=False),
        sa.Column("metadata", sa.JSON, nullable=False, server_default="{}"),
        sa.Column("language", sa.Text),
        sa.Column("origin", sa.Text, sa.Computed(ORIGIN_PG, persisted=True)),
        sa.CheckConstraint(_one_of("kind", KINDS), name="ck_documents_kind"),
        sa.CheckConstraint(_one_of("status", DOCUMENT_STATUSES), name="ck_documents_status"),
    )
    op.create_index("ix_documents_status", "documents", ["status"])
    op.create_table(
        "pages",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("document_id", sa.BigInteger, _fk("documents"), nullable=False),
        sa.Column("page", sa.Integer, nullable=False),
        sa.Column("heading_path", sa.Text, nullable=False, server_default=""),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("metadata", sa.JSON, nullable=False, server_default="{}"),
        sa.Column("label", sa.Text),
        sa.Column("rest", sa.Text, nullable=False, server_default=""),
        sa.Column("char_count", sa.Integer, nullable=False, server_default="0"),
        sa.UniqueConstraint("document_id", "page", name="uq_pages_document_page"),
    )
    op.create_table(
        "page_chunks",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("document_id", sa.BigInteger, _fk("documents"), nullable=False),
        sa.Column("page", sa.Integer, nullable=False),
        sa.Column("ordinal", sa.Integer, nullable=False),
        sa.Column("heading_path", sa.Text, nullable=False, server_default=""),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("content_hash", sa.Text, nullable=False),
        sa.Column("char_count", sa.Integer, nullable=False),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("fts_text", sa.Text),
        sa.Column("fts_heading", sa.Text),
        sa.Column("start", sa.Integer),
        # PostgreSQL only (module docstring): not in storage/schema.py.
        sa.Column("bm25_len", sa.Integer),
    )
    op.create_index("ix_page_chunks_doc_page", "page_chunks", ["document_id", "page", "ordinal"])
    op.create_table(
        "ingest_jobs",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("document_id", sa.BigInteger, _fk("documents")),
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
    )
    op.create_index("ix_ingest_jobs_status", "ingest_jobs", ["status", "id"])
    op.create_index("ix_ingest_jobs_document", "ingest_jobs", ["document_id"])
    op.create_table(
        "conversations",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("title", sa.Text, nullable=False, server_default=""),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=False),
    )
    op.create_table(
        "messages",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("conversation_id", sa.BigInteger, _fk("conversations"), nullable=False),
        sa.Column("role", sa.Text, nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("citations", sa.JSON, nullable=False, server_default="[]"),
        sa.Column("plan", sa.JSON),
        sa.Column("timings", sa.JSON),
        sa.Column("model", sa.Text),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("status", sa.Text, nullable=False, server_default="complete"),
        sa.Column("meta", sa.JSON, nullable=False, server_default="{}"),
        sa.CheckConstraint("role IN ('user','assistant','system')", name="ck_messages_role"),
    )
    op.create_index("ix_messages_conversation", "messages", ["conversation_id", "id"])
    op.create_table(
        "chat_feedback",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("message_id", sa.BigInteger, _fk("messages"), nullable=False),
        sa.Column("rating", sa.Integer, nullable=False),
        sa.Column("comment", sa.Text),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.CheckConstraint("rating IN (-1, 1)", name="ck_chat_feedback_rating"),
    )
    op.create_index("ix_chat_feedback_message", "chat_feedback", ["message_id"])
    op.create_table(
        "source_runs",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("location", sa.Text, nullable=False),
        sa.Column("started_at", sa.DateTime, nullable=False),
        sa.Column("finished_at", sa.DateTime, nullable=False),
        sa.Column("ok", sa.Boolean, nullable=False),
        sa.Column("summary", sa.JSON, nullable=False, server_default="{}"),
        sa.Column("error", sa.Text),
    )
    op.create_index("ix_source_runs_source", "source_runs", ["source", "location", "id"])
    # SQLite's cache of frequent terms' postings (storage/term_postings.py); unused here, kept
    # so that both databases have the tables storage/schema.py names.
    op.create_table(
        "term_postings",
        sa.Column("term", sa.Text, primary_key=True),
        sa.Column("upto", sa.BigInteger, nullable=False),
        sa.Column("body", sa.LargeBinary, nullable=False),
    )
    op.create_table(
        "term_postings_state",
        sa.Column("key", sa.Text, primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
    )


def _search() -> None:
    op.execute("CREATE SCHEMA IF NOT EXISTS vec")
    op.execute(
        "CREATE TABLE vec.page_vecs_meta ("
        "id integer PRIMARY KEY CHECK (id = 1), model text NOT NULL, dim integer NOT NULL, "
        "state text NOT NULL CHECK (state IN ('ready','rebuilding')), "
        "created_at timestamp NOT NULL)"
    )
    op.execute(
        "INSERT INTO vec.page_vecs_meta (id, model, dim, state, created_at) "
        f"VALUES (1, '{DEFAULT_MODEL}', {DEFAULT_DIM}, 'ready', now() AT TIME ZONE 'UTC')"
    )
    op.execute(
        "CREATE TABLE vec.page_vecs (chunk_id bigint PRIMARY KEY "
        "REFERENCES page_chunks (id) ON DELETE CASCADE, "
        f"embedding vector({DEFAULT_DIM}) NOT NULL)"
    )
    op.execute(
        "CREATE INDEX ix_page_vecs_hnsw ON vec.page_vecs USING hnsw (embedding vector_cosine_ops)"
    )
    op.execute(
        "CREATE TABLE bm25_postings (term text NOT NULL, chunk_id bigint NOT NULL "
        "REFERENCES page_chunks (id) ON DELETE CASCADE, tf_text integer NOT NULL, "
        "tf_heading integer NOT NULL, len integer NOT NULL, PRIMARY KEY (term, chunk_id)) "
        "WITH (fillfactor = 90)"
    )
    op.execute("CREATE INDEX ix_bm25_postings_chunk ON bm25_postings (chunk_id)")
    op.execute(
        "CREATE TABLE bm25_totals (slot integer PRIMARY KEY, rows bigint NOT NULL DEFAULT 0, "
        "tokens bigint NOT NULL DEFAULT 0, trigrams bigint NOT NULL DEFAULT 0)"
    )
    op.execute(f"INSERT INTO bm25_totals (slot) SELECT generate_series(0, {TOTAL_SLOTS - 1})")
    # Statement triggers: a batch of chunks, or a document's deletion (one cascaded DELETE),
    # moves the totals once. A chunk counts for BM25 once its length is set (pg_lexical.index).
    op.execute(
        f"""
        CREATE FUNCTION bm25_totals_move() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE d_rows bigint := 0; d_tokens bigint := 0; d_tri bigint := 0;
        BEGIN
          IF TG_OP IN ('INSERT', 'UPDATE') THEN
            SELECT d_rows + count(bm25_len), d_tokens + coalesce(sum(bm25_len), 0),
                   d_tri + coalesce(sum(greatest(char_length(text) - 2, 0))
                                    FILTER (WHERE bm25_len IS NOT NULL), 0)
              INTO d_rows, d_tokens, d_tri FROM new_rows;
          END IF;
          IF TG_OP IN ('DELETE', 'UPDATE') THEN
            SELECT d_rows - count(bm25_len), d_tokens - coalesce(sum(bm25_len), 0),
                   d_tri - coalesce(sum(greatest(char_length(text) - 2, 0))
                                    FILTER (WHERE bm25_len IS NOT NULL), 0)
              INTO d_rows, d_tokens, d_tri FROM old_rows;
          END IF;
          IF d_rows <> 0 OR d_tokens <> 0 OR d_tri <> 0 THEN
            UPDATE bm25_totals SET rows = rows + d_rows, tokens = tokens + d_tokens,
                   trigrams = trigrams + d_tri
             WHERE slot = pg_backend_pid() % {TOTAL_SLOTS};
          END IF;
          RETURN NULL;
        END $$
        """
    )
    for event, tables in (
        ("INSERT", "NEW TABLE AS new_rows"),
        ("UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows"),
        ("DELETE", "OLD TABLE AS old_rows"),
    ):
        op.execute(
            f"CREATE TRIGGER page_chunks_bm25_{event.lower()} AFTER {event} ON page_chunks "
            f"REFERENCING {tables} FOR EACH STATEMENT EXECUTE FUNCTION bm25_totals_move()"
        )
    op.execute(
        "CREATE INDEX ix_page_chunks_trgm ON page_chunks USING gin (lower(text) gin_trgm_ops)"
    )


def downgrade() -> None:
    if not applies_to("postgresql"):
        return
    op.execute("DROP SCHEMA IF EXISTS vec CASCADE")
    for table in (
        "bm25_postings",
        "bm25_totals",
        "term_postings_state",
        "term_postings",
        "source_runs",
        "chat_feedback",
        "messages",
        "conversations",
        "ingest_jobs",
        "page_chunks",
        "pages",
        "documents",
    ):
        op.execute(f"DROP TABLE IF EXISTS {table} CASCADE")
    op.execute("DROP FUNCTION IF EXISTS bm25_totals_move()")
