"""Bulk ingest of text records that need no extraction (BEIR corpora, re-imports).

The fast path next to the per-document worker: no child process per document, one short write
transaction per batch of records, then one embedding pass over every chunk without a vector.
Each record becomes one document with one page, ``title + "\\n\\n" + text``, whose heading path
is the title; a record may instead bring its own pages (a conversation: one page per turn) and
the text to store and hash (the conversation's JSON). Idempotent: a record whose key is stored
with the same content is skipped; a changed one is replaced by content hash, so only its
changed chunks are embedded again.

    stats = ingest_records(db, settings, embedder, [Record("doc-1", "A title", "Body …")])
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, insert, select, text, update

from quire.config import Settings
from quire.embed.base import Embedder
from quire.ingest.chunking import chunk_pages
from quire.ingest.intake import safe_filename
from quire.storage import access, chunks, vectors
from quire.storage.db import Database, id_list, in_ids
from quire.storage.documents import part_path, stored_path
from quire.storage.records import Kind, Page, PageSource
from quire.storage.schema import documents, utcnow
from quire.text.language import detect as detect_language
from quire.text.table_rows import embedding_text

log = logging.getLogger(__name__)

#: Records per write transaction: big enough to amortise the commit, short enough that the
#: API and the worker never wait long for the write lock.
WRITE_BATCH = 500

#: ``progress(stage, done, total)``: stage is "store" (records) or "embed" (chunks).
BulkProgress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Record:
    """One text to store as a document; ``key`` names it across imports."""

    key: str
    title: str
    text: str
    kind: Kind = "text"
    meta: dict[str, Any] = field(default_factory=dict)
    #: Pages of their own instead of the single ``title + text`` page, with ``stored``: the
    #: text kept as the document's file and hashed (a changed one is a new version).
    pages: tuple[Page, ...] = ()
    stored: str | None = None
    filename: str | None = None

    def page_text(self) -> str:
        """The text of the record's single page: the title, a blank line, the body."""
        title, body = self.title.strip(), self.text.strip()
        return f"{title}\n\n{body}" if title and body else (title or body)


@dataclass
class BulkStats:
    """What ``ingest_records`` did."""

    added: int = 0
    updated: int = 0
    skipped: int = 0
    resumed: int = 0  # stored by an interrupted run, made ready now
    empty: int = 0
    #: Keys whose content is already stored under another key -> that document's id.
    duplicates: dict[str, int] = field(default_factory=dict)
    chunks_inserted: int = 0
    chunks_kept: int = 0
    chunks_deleted: int = 0
    embedded: int = 0
    timings_s: dict[str, float] = field(default_factory=dict)


def _batches(items: Iterable[Record], n: int) -> Iterator[list[Record]]:
    it = iter(items)
    while batch := list(islice(it, n)):
        yield batch


def _sha(data: str) -> str:
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def _write_file(files_dir: Path, digest: str, kind: str, body: str) -> Path:
    """Store the page text content-addressed (atomically), so the document can be re-read."""
    target = stored_path(files_dir, digest, kind)
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = part_path(target)
        tmp.write_text(body, encoding="utf-8")
        os.replace(tmp, target)
    return target


def _store_batch(
    db: Database, settings: Settings, batch: list[Record], stats: BulkStats
) -> list[int]:
    """Write one batch of records in one transaction; returns the ids to mark ready."""
    prepared = []
    for rec in batch:
        body = rec.page_text() if rec.stored is None else rec.stored
        if not body or (rec.stored is not None and not rec.pages):
            stats.empty += 1
            log.warning("record %s has no text: skipped", rec.key)
            continue
        texts = [p.text for p in rec.pages] or [body]
        prepared.append((rec, body, _sha(body), detect_language(texts)))
    # Files first, outside the write lock; a file left by a crash is harmless (content-addressed).
    paths = {
        digest: _write_file(settings.files_dir, digest, rec.kind, body)
        for rec, body, digest, _ in prepared
    }
    pending: list[int] = []
    replaced_files: list[str] = []
    now = utcnow()
    with db.write() as conn:
        by_key = _existing(conn, documents.c.source_key, [r.key for r, *_ in prepared])
        by_sha = _existing(conn, documents.c.sha256, [d for _, _, d, _ in prepared])
        for rec, body, digest, language in prepared:
            prior = by_key.get(rec.key)
            if prior is not None and prior["sha256"] == digest:
                if prior["status"] == "ready" or prior["id"] in pending:
                    stats.skipped += 1
                else:
                    stats.resumed += 1
                    pending.append(prior["id"])
                continue
            owner = by_sha.get(digest)
            if owner is not None:
                # The same text under another key: one document (sha256 is unique), as for
                # uploads; the caller learns which document holds it.
                stats.duplicates[rec.key] = owner["id"]
                continue
            pages = list(rec.pages) or [
                Page(number=1, text=body, heading_path=rec.title.strip(), source=_source(rec.kind))
            ]
            new_chunks = chunk_pages(
                pages, size=settings.chunk_chars, overlap=settings.chunk_overlap
            )
            values: dict[str, Any] = {
                "kind": rec.kind,
                "title": rec.title.strip() or rec.key,
                "filename": safe_filename(rec.filename or f"{rec.key}.txt"),
                "sha256": digest,
                "byte_size": len(body.encode("utf-8")),
                "page_count": len(pages),
                "chunk_count": len(new_chunks),
                "status": "processing",
                "error": None,
                "stored_path": str(paths[digest]),
                "updated_at": now,
                "meta": rec.meta,
                "language": language,
            }
            if prior is not None:
                conn.execute(update(documents).where(documents.c.id == prior["id"]).values(values))
                doc_id = int(prior["id"])
                if prior["stored_path"] and prior["stored_path"] != str(paths[digest]):
                    replaced_files.append(prior["stored_path"])
                stats.updated += 1
            else:
                result = conn.execute(
                    insert(documents).values(
                        source_key=rec.key, created_at=now, **values, **access.new_document()
                    )
                )
                doc_id = int(result.inserted_primary_key[0])  # type: ignore[index]
                stats.added += 1
            # A key or text repeated later in the same batch sees this document.
            by_key[rec.key] = by_sha[digest] = {
                "id": doc_id,
                "sha256": digest,
                "status": "processing",
                "stored_path": str(paths[digest]),
            }
            replaced = chunks.replace(conn, doc_id, pages, new_chunks)
            stats.chunks_inserted += replaced.inserted
            stats.chunks_kept += replaced.kept
            stats.chunks_deleted += replaced.deleted
            pending.append(doc_id)
    for old in replaced_files:  # after the commit: the old version's text is no one's now
        Path(old).unlink(missing_ok=True)
    return pending


def _existing(conn: Connection, column: Any, values: list[str]) -> dict[str, dict[str, Any]]:
    if not values:
        return {}
    rows = conn.execute(
        select(
            documents.c.id, documents.c.sha256, documents.c.status, documents.c.stored_path, column
        ).where(column.in_(values))
    )
    return {
        str(r[4]): {"id": int(r[0]), "sha256": r[1], "status": r[2], "stored_path": r[3]}
        for r in rows
    }


def _source(kind: str) -> PageSource:
    return "markdown" if kind in ("markdown", "perplexity") else "text"


def _embed_missing(
    db: Database, embedder: Embedder, batch_size: int, progress: BulkProgress | None
) -> int:
    """Embed every chunk in the database that has no vector; returns how many."""
    with db.read() as conn:
        total = vectors.missing_count(conn)
    done = 0
    if progress:
        progress("embed", 0, total)
    while True:
        with db.read() as conn:
            batch = vectors.missing_chunks(conn, None, batch_size)
        if not batch:
            break
        vecs = embedder.embed([embedding_text(t) for _, t in batch])
        with db.write() as conn:
            written = vectors.add(conn, embedder.name, [cid for cid, _ in batch], vecs)
        done += len(batch)
        if progress:
            progress("embed", done, max(total, done))
        if written == 0:
            # Every chunk of the batch was deleted meanwhile; the next read skips them, but
            # never spin on a batch that cannot be written.
            log.warning("no vector of a batch of %d could be stored", len(batch))
    return done


def _mark(db: Database, ids: Sequence[int], status: str) -> None:
    for start in range(0, len(ids), WRITE_BATCH):
        part = ids[start : start + WRITE_BATCH]
        with db.write() as conn:
            conn.execute(
                text(
                    "UPDATE documents SET status = :s, error = NULL, updated_at = :t "
                    f"WHERE {in_ids(conn, 'id', 'ids')}"
                ),
                {"s": status, "t": utcnow(), "ids": id_list(conn, part)},
            )


def ingest_records(
    db: Database,
    settings: Settings,
    embedder: Embedder | None,
    records: Iterable[Record],
    *,
    progress: BulkProgress | None = None,
) -> BulkStats:
    """Store, chunk and embed text records, skipping those already stored unchanged.

    Without an embedder the chunks are stored only (searchable by keyword at once); a
    ``reembed`` job then embeds every chunk without a vector (the API's chat-export upload)."""
    stats = BulkStats()
    total = len(records) if isinstance(records, Sequence) else 0
    if embedder is not None:
        with db.write() as conn:
            vectors.delete_orphans(conn)
            # A store of another model is dropped and recreated here; the pass below fills it.
            rebuilding = vectors.ensure(conn, embedder.name, embedder.dim)
        if rebuilding:
            log.info("the vector store is rebuilt for %s during this import", embedder.name)

    t0 = time.monotonic()
    pending: list[int] = []
    seen = 0
    if progress:
        progress("store", 0, total)
    for batch in _batches(records, WRITE_BATCH):
        pending += _store_batch(db, settings, batch, stats)
        seen += len(batch)
        if progress:
            progress("store", seen, max(total, seen))
    stats.timings_s["store"] = round(time.monotonic() - t0, 3)

    if embedder is not None:
        t0 = time.monotonic()
        stats.embedded = _embed_missing(db, embedder, settings.embed_batch, progress)
        stats.timings_s["embed"] = round(time.monotonic() - t0, 3)
        with db.write() as conn:
            if vectors.missing_count(conn) == 0:
                vectors.mark_ready(conn, embedder.name)
    # Without an embedder they are searchable by keyword until a reembed job embeds them.
    _mark(db, pending, "ready" if embedder is not None else "searchable")
    log.info(
        "bulk ingest: %d added, %d updated, %d unchanged, %d resumed, %d duplicate, "
        "%d chunks inserted, %d embedded",
        stats.added,
        stats.updated,
        stats.skipped,
        stats.resumed,
        len(stats.duplicates),
        stats.chunks_inserted,
        stats.embedded,
    )
    return stats
