"""A note becomes searchable the moment it is saved: its index document's page is chunked and
written (BM25 and the exact leg find it when the transaction commits) and, for a note of up to
``EMBED_INLINE`` chunks (nearly all: a chunk is ~1,500 characters), embedded in the same
request, then it is ``ready`` and the dense leg finds it too. A longer note (up to the 100 KB
limit, ~70 chunks: 13 s of embedding on a loaded 2-core machine) is left to the worker, as a
re-embed job, so that saving never waits on it (bench/notes.py). storage/notes.py says what is
indexed."""

from __future__ import annotations

import logging
from typing import Any

from quire.config import Settings
from quire.embed.base import Embedder
from quire.errors import QuireError
from quire.ingest.chunking import chunk_pages
from quire.storage import chunks, jobs, notes, vectors
from quire.storage.db import Database
from quire.storage.documents import set_status
from quire.storage.schema import documents
from quire.text.table_rows import embedding_text

log = logging.getLogger(__name__)

#: Notes of up to this many chunks are embedded while the request waits; longer ones by the
#: worker (bench/notes.py: a 3 KB note saves in ~0.1-0.4 s, a 99 KB one took 13 s inline).
EMBED_INLINE = 4


def index(db: Database, settings: Settings, embedder: Embedder | None, note_id: int) -> bool:
    """Write the note's index and embed it; whether its vectors are in (False: BM25 and the
    exact leg find it, the dense leg once ``quire reembed`` or the next ingest embeds it)."""
    with db.write() as conn:
        index_id, page = notes.index_page(conn, note_id)
        new_chunks = chunk_pages([page], size=settings.chunk_chars, overlap=settings.chunk_overlap)
        stats = chunks.replace(conn, index_id, [page], new_chunks)
        conn.execute(
            documents.update()
            .where(documents.c.id == index_id)
            .values(chunk_count=len(new_chunks), status="searchable")
        )
    if embedder is None or len(new_chunks) > EMBED_INLINE:
        with db.write() as conn:
            if vectors.missing_count(conn, index_id):
                jobs.enqueue(conn, None, "reembed")  # the worker embeds it
        return False
    try:
        with db.read() as conn:
            batch = vectors.missing_chunks(conn, index_id, max(64, len(new_chunks)))
        if batch:
            vecs = embedder.embed([embedding_text(t) for _, t in batch])
            with db.write() as conn:
                vectors.add(conn, embedder.name, [cid for cid, _ in batch], vecs)
    except QuireError as e:  # the embedder down: searchable by words, not yet by meaning
        log.warning("note %s: not embedded (%s)", note_id, e)
        return False
    with db.write() as conn:
        if vectors.missing_count(conn, index_id) == 0:
            set_status(conn, index_id, "ready")
    log.debug("note %s indexed: %s", note_id, stats)
    return True


def save(
    db: Database,
    settings: Settings,
    embedder: Embedder | None,
    fields: dict[str, Any],
    **how: Any,
) -> int:
    """Make a note (storage/notes.py ``create``) and index it; returns its id."""
    with db.write() as conn:
        note_id = notes.create(conn, fields, **how)
    index(db, settings, embedder, note_id)
    return note_id


def edit(
    db: Database,
    settings: Settings,
    embedder: Embedder | None,
    note_id: int,
    changes: dict[str, Any],
) -> None:
    """Edit a note and index it again (an unchanged text keeps its chunk and vector)."""
    with db.write() as conn:
        notes.update_note(conn, note_id, changes)
    index(db, settings, embedder, note_id)
