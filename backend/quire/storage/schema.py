"""Table definitions used for queries. The DDL of record is in quire/migrations/ (a test
compares)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import get_args

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    Column,
    Computed,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    Table,
    Text,
    UniqueConstraint,
)

from quire.storage.records import KINDS, DocumentStatus, JobStatus, Visibility

metadata = MetaData()


def utcnow() -> datetime:
    """Now in UTC, naive: SQLite DateTime columns store naive ISO text."""
    return datetime.now(UTC).replace(tzinfo=None)


#: Where a document came from, told once for every query (the generated column
#: ``documents.origin``, migration 0007): ``metadata.origin.type`` when intake wrote one (a
#: watched folder, a Zotero item), else by source key (``chatgpt:``, ``claude:``,
#: ``perplexity:``, ``url:``) or kind; anything else was added by hand (upload, ``quire
#: ingest``, MCP). Changing it needs a migration that drops and adds the column again.
ORIGIN_SQL = (
    "coalesce(json_extract(metadata, '$.origin.type'), CASE "
    "WHEN source_key GLOB 'folder:*' THEN 'folder' "
    "WHEN source_key GLOB 'zotero:*' THEN 'zotero' "
    "WHEN source_key GLOB 'chatgpt:*' OR kind = 'chatgpt' THEN 'chatgpt' "
    "WHEN source_key GLOB 'claude:*' OR kind = 'claude' THEN 'claude' "
    "WHEN source_key GLOB 'perplexity:*' OR kind = 'perplexity' THEN 'perplexity' "
    "WHEN source_key GLOB 'url:*' THEN 'web' "
    "ELSE 'upload' END)"
)


def _one_of(column: str, values: tuple[str, ...]) -> str:
    """A CHECK clause for a column holding one of a Literal's values."""
    return f"{column} IN ({','.join(repr(v) for v in values)})"


#: The people of a team library (storage/people.py); none on a one-person library.
#: Migration 0014.
users = Table(
    "users",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", Text, nullable=False, unique=True),
    Column("admin", Boolean, nullable=False, server_default="0"),
    Column("created_at", DateTime, nullable=False),
    sqlite_autoincrement=True,
)

#: Personal API tokens: only their SHA-256 is kept (``token_hash``), and ``prefix`` (the
#: first characters) to tell them apart in listings. Migration 0014.
api_tokens = Table(
    "api_tokens",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("user_id", Integer, ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("token_hash", Text, nullable=False, unique=True),
    Column("prefix", Text, nullable=False),
    Column("label", Text, nullable=False, server_default=""),
    Column("created_at", DateTime, nullable=False),
    Column("revoked_at", DateTime),
    sqlite_autoincrement=True,
)
Index("ix_api_tokens_user", api_tokens.c.user_id)

documents = Table(
    "documents",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("kind", Text, nullable=False),
    Column("title", Text),
    Column("author", Text),
    Column("filename", Text, nullable=False),
    Column("source_key", Text, unique=True),
    Column("sha256", Text, nullable=False, unique=True),
    Column("byte_size", Integer, nullable=False),
    Column("page_count", Integer, nullable=False, server_default="0"),
    Column("chunk_count", Integer, nullable=False, server_default="0"),
    Column("status", Text, nullable=False, server_default="queued"),
    Column("error", Text),
    Column("stored_path", Text, nullable=False),
    Column("created_at", DateTime, nullable=False),
    Column("updated_at", DateTime, nullable=False),
    Column("metadata", JSON, key="meta", nullable=False, server_default="{}"),
    # Detected at ingest from a sample of the text ("en", "ja", "zh-Hant"); NULL when there
    # was too little text to tell. Migration 0004.
    Column("language", Text, nullable=True),
    # Generated from the metadata and source key (ORIGIN_SQL); never written. Migration 0007.
    Column("origin", Text, Computed(ORIGIN_SQL, persisted=False)),
    # Who added it and who may read it (storage/access.py): NULL and "team" on a library
    # without people, and for what a watched folder, Zotero or Perplexity sync brings in.
    # Migration 0014.
    Column("owner_id", Integer, ForeignKey("users.id"), nullable=True),
    Column("visibility", Text, nullable=False, server_default="team"),
    CheckConstraint(_one_of("kind", KINDS), name="ck_documents_kind"),
    CheckConstraint(_one_of("status", get_args(DocumentStatus)), name="ck_documents_status"),
    CheckConstraint(_one_of("visibility", get_args(Visibility)), name="ck_documents_visibility"),
    sqlite_autoincrement=True,
)
Index("ix_documents_status", documents.c.status)
Index("ix_documents_owner", documents.c.owner_id)

pages = Table(
    "pages",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("document_id", Integer, ForeignKey("documents.id", ondelete="CASCADE"), nullable=False),
    Column("page", Integer, nullable=False),
    Column("heading_path", Text, nullable=False, server_default=""),
    Column("source", Text, nullable=False),
    Column("metadata", JSON, key="meta", nullable=False, server_default="{}"),
    #: The printed page label (PDF /PageLabels: "xii", "166", "A-3"); NULL when there is none.
    Column("label", Text, nullable=True),
    # The page's text is stored once (storage/page_text.py): its chunks hold most of it, this
    # row the characters no chunk covers; char_count is the whole text's length. Migration 0011.
    Column("rest", Text, nullable=False, server_default=""),
    Column("char_count", Integer, nullable=False, server_default="0"),
    UniqueConstraint("document_id", "page", name="uq_pages_document_page"),
)

page_chunks = Table(
    "page_chunks",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("document_id", Integer, ForeignKey("documents.id", ondelete="CASCADE"), nullable=False),
    Column("page", Integer, nullable=False),
    Column("ordinal", Integer, nullable=False),
    Column("heading_path", Text, nullable=False, server_default=""),
    Column("text", Text, nullable=False),
    Column("content_hash", Text, nullable=False),
    Column("char_count", Integer, nullable=False),
    Column("source", Text, nullable=False),
    # What FTS5 indexes instead of text / heading_path when they hold unspaced scripts (CJK,
    # Thai: cut into bigrams by text/segment.py); NULL otherwise. Migration 0003.
    Column("fts_text", Text, nullable=True),
    Column("fts_heading", Text, nullable=True),
    # Where the text starts in its page's text (storage/page_text.py); NULL if it is not there.
    # Migration 0011.
    Column("start", Integer, nullable=True),
    # AUTOINCREMENT: a chunk id is never reused, so a vector row can never be attached to
    # the wrong chunk after a crash left it behind.
    sqlite_autoincrement=True,
)
Index(
    "ix_page_chunks_doc_page", page_chunks.c.document_id, page_chunks.c.page, page_chunks.c.ordinal
)

ingest_jobs = Table(
    "ingest_jobs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("document_id", Integer, ForeignKey("documents.id", ondelete="CASCADE")),
    Column("kind", Text, nullable=False, server_default="ingest"),
    Column("status", Text, nullable=False, server_default="queued"),
    Column("stage", Text, nullable=False, server_default="queued"),
    Column("progress", Float, nullable=False, server_default="0"),
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("error", Text),
    Column("worker_id", Text),
    Column("heartbeat", DateTime),
    Column("not_before", DateTime),
    Column("created_at", DateTime, nullable=False),
    Column("started_at", DateTime),
    Column("finished_at", DateTime),
    Column("detail", JSON, nullable=False, server_default="{}"),
    CheckConstraint("kind IN ('ingest','reembed')", name="ck_ingest_jobs_kind"),
    CheckConstraint(_one_of("status", get_args(JobStatus)), name="ck_ingest_jobs_status"),
    sqlite_autoincrement=True,
)
Index("ix_ingest_jobs_status", ingest_jobs.c.status, ingest_jobs.c.id)
Index("ix_ingest_jobs_document", ingest_jobs.c.document_id)

conversations = Table(
    "conversations",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("title", Text, nullable=False, server_default=""),
    Column("created_at", DateTime, nullable=False),
    Column("updated_at", DateTime, nullable=False),
    # The person whose conversation it is; NULL without people (migration 0014).
    Column("owner_id", Integer, ForeignKey("users.id"), nullable=True),
)
Index("ix_conversations_owner", conversations.c.owner_id)

messages = Table(
    "messages",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column(
        "conversation_id",
        Integer,
        ForeignKey("conversations.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("role", Text, nullable=False),
    Column("content", Text, nullable=False),
    Column("citations", JSON, nullable=False, server_default="[]"),
    Column("plan", JSON),
    Column("timings", JSON),
    Column("model", Text),
    Column("created_at", DateTime, nullable=False),
    # complete | interrupted (the LLM stream broke or the client left) | error
    Column("status", Text, nullable=False, server_default="complete"),
    # mode (llm | extractive), verify verdict, notices, standalone question, cited numbers
    Column("meta", JSON, nullable=False, server_default="{}"),
    CheckConstraint("role IN ('user','assistant','system')", name="ck_messages_role"),
)
Index("ix_messages_conversation", messages.c.conversation_id, messages.c.id)

chat_feedback = Table(
    "chat_feedback",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("message_id", Integer, ForeignKey("messages.id", ondelete="CASCADE"), nullable=False),
    Column("rating", Integer, nullable=False),
    Column("comment", Text),
    Column("created_at", DateTime, nullable=False),
    CheckConstraint("rating IN (-1, 1)", name="ck_chat_feedback_rating"),
)
Index("ix_chat_feedback_message", chat_feedback.c.message_id)

#: Highlights and notes (storage/notes.py, docs/using/notes.md): on a document's page (a span
#: of its stored text, the quote, boxes on the rendered page), on a page alone, or an answer
#: kept (its conversation); ``index_id`` is the hidden ``note`` document that makes it
#: searchable. A note goes with its document. Migration 0020.
notes = Table(
    "notes",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("document_id", Integer, ForeignKey("documents.id", ondelete="CASCADE")),
    Column("page", Integer),
    Column("span_start", Integer),
    Column("span_end", Integer),
    Column("quote", Text, nullable=False, server_default=""),
    Column("boxes", JSON),
    Column("color", Text),
    Column("tags", JSON, nullable=False, server_default="[]"),
    Column("body", Text, nullable=False, server_default=""),
    Column("origin", Text, nullable=False, server_default="quire"),
    Column("zotero_key", Text),
    Column("annotation_type", Text),
    Column("status", Text, nullable=False, server_default="ok"),
    Column("owner_id", Integer, ForeignKey("users.id")),
    Column("visibility", Text, nullable=False, server_default="team"),
    Column("conversation_id", Integer, ForeignKey("conversations.id", ondelete="SET NULL")),
    Column("message_id", Integer),
    Column("index_id", Integer, ForeignKey("documents.id", ondelete="SET NULL")),
    Column("created_at", DateTime, nullable=False),
    Column("updated_at", DateTime, nullable=False),
    CheckConstraint("origin IN ('quire','zotero')", name="ck_notes_origin"),
    CheckConstraint("status IN ('ok','moved','orphaned')", name="ck_notes_status"),
    CheckConstraint(_one_of("visibility", get_args(Visibility)), name="ck_notes_visibility"),
    sqlite_autoincrement=True,
)
Index("ix_notes_document", notes.c.document_id, notes.c.page)
Index("ix_notes_owner", notes.c.owner_id)
Index("ix_notes_zotero_key", notes.c.zotero_key)
Index("ix_notes_index", notes.c.index_id)

#: One import or folder pass (``source``: chatgpt, claude, perplexity, zotero, folder) of one
#: ``location`` (an export's path, a folder, a Zotero data directory), with what it did; the
#: Settings page shows the last of each. Migration 0007.
source_runs = Table(
    "source_runs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("source", Text, nullable=False),
    Column("location", Text, nullable=False),
    Column("started_at", DateTime, nullable=False),
    Column("finished_at", DateTime, nullable=False),
    Column("ok", Boolean, nullable=False),
    Column("summary", JSON, nullable=False, server_default="{}"),
    Column("error", Text),
    sqlite_autoincrement=True,
)
Index("ix_source_runs_source", source_runs.c.source, source_runs.c.location, source_runs.c.id)

#: The frequent terms' postings (storage/term_postings.py): per FTS5 stem the chunk ids, the
#: stem's count in the text and heading columns and each chunk's length, as of chunk ``upto``.
#: Read from FTS5 by the worker; emptied by a trigger when a chunk's text changes in place.
#: Migration 0009.
term_postings = Table(
    "term_postings",
    metadata,
    Column("term", Text, primary_key=True),
    Column("upto", Integer, nullable=False),
    Column("body", LargeBinary, nullable=False),
)
term_postings_state = Table(
    "term_postings_state",
    metadata,
    Column("key", Text, primary_key=True),
    Column("value", Text, nullable=False),
)

# The vector file (schema "vec"): page_vecs is a vec0 virtual table created by vectors.py.
page_vecs_meta = Table(
    "page_vecs_meta",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("model", Text, nullable=False),
    Column("dim", Integer, nullable=False),
    Column("state", Text, nullable=False),
    Column("created_at", DateTime, nullable=False),
    schema="vec",
)
