"""Documents: their rows (found by content or source key, inserted, re-pointed at a new
version), status, listing and deletion. Accepting a file is ingest/intake.py's."""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import ColumnElement, Connection, func, select, text, update
from sqlalchemy import insert as insert_

from quire.errors import NotFound, OriginalMissing, StoreUnavailable
from quire.storage import access, chunks, jobs, notes, vectors
from quire.storage.db import Database, dialect
from quire.storage.records import VISIBLE_SQL, Kind
from quire.storage.schema import documents, ingest_jobs, users, utcnow

log = logging.getLogger(__name__)

#: The metadata key that says where a document's file came from (a watched folder's path, a
#: Zotero item: ``sources/folder.py``, ``sources/zotero/importer.py``); its ``type`` is the
#: document's ``origin``. Intake owns it: reading the file again keeps it.
ORIGIN = "origin"
#: In an origin, what its source declares for citations (a Zotero item's title, authors,
#: year, DOI, citation key …): it wins over what the file itself declares.
CITE = "cite"

EXTENSIONS = {
    "pdf": ".pdf",
    "epub": ".epub",
    "perplexity": ".md",
    "markdown": ".md",
    "text": ".txt",
    "chatgpt": ".json",
    "claude": ".json",
    "docx": ".docx",
    "odt": ".odt",
    "pptx": ".pptx",
    "odp": ".odp",
    "xlsx": ".xlsx",
    "ods": ".ods",
    "image": "",  # .png, .jpg, .tif…: /file names the type from the bytes
    "web": ".html",  # an MHTML save too: /file names the type from the bytes
}


def stored_path(files_dir: Path, sha256: str, kind: str) -> Path:
    """Content-addressed location of an original file."""
    return files_dir / sha256[:2] / f"{sha256}{EXTENSIONS.get(kind, '')}"


def rendition_path(files_dir: Path, sha256: str) -> Path:
    """Where the PDF rendition of an Office original is kept (ingest/rendition.py)."""
    return files_dir / sha256[:2] / f"{sha256}.rendition.pdf"


def part_path(target: Path) -> Path:
    """A temporary name beside ``target`` to write it under before one rename: its own per
    call, so two threads or processes (on machines sharing the store) storing the same bytes
    at once never write one file (a watched folder skips ``*.part``)."""
    return target.with_suffix(f"{target.suffix}.{os.getpid()}.{uuid.uuid4().hex[:12]}.part")


def original(files_dir: Path, stored: str, sha256: str, kind: str) -> Path:
    """Where this machine reads an original: by its content address in ``files_dir`` when it is
    there (a shared store mounted at another path than the machine that took the upload), else
    where it was stored. StoreUnavailable when it is in neither place and the store itself
    cannot be read (an unmounted share); NotFound when the store is there but the file not."""
    local = stored_path(files_dir, sha256, kind)
    if local.is_file():
        return local
    if Path(stored).is_file():
        return Path(stored)
    if not os.access(files_dir, os.R_OK | os.X_OK) or not files_dir.is_dir():
        raise StoreUnavailable(
            f"the originals store {files_dir} cannot be read (is the share mounted?)"
        )
    raise OriginalMissing(f"the original file {local.name} is missing from {files_dir}")


@dataclass(frozen=True)
class Stored:
    """A document's row as intake sees it: its id and status, where its original is."""

    id: int
    status: str
    stored_path: str


def by_sha256(conn: Connection, sha256: str) -> Stored | None:
    """The document holding exactly these bytes."""
    return _stored(conn, documents.c.sha256 == sha256)


def by_source_key(conn: Connection, source_key: str) -> Stored | None:
    """The document known under this source key (a path, a thread slug)."""
    return _stored(conn, documents.c.source_key == source_key)


def _stored(conn: Connection, where: ColumnElement[bool]) -> Stored | None:
    row = conn.execute(
        select(documents.c.id, documents.c.status, documents.c.stored_path).where(where)
    ).first()
    return Stored(row.id, row.status, row.stored_path) if row is not None else None


def insert(
    conn: Connection,
    *,
    kind: Kind,
    filename: str,
    sha256: str,
    byte_size: int,
    stored: Path,
    source_key: str | None = None,
    title: str | None = None,
) -> int:
    """A new queued document; IntegrityError if its bytes (or source key) are stored."""
    now = utcnow()
    result = conn.execute(
        insert_(documents).values(
            kind=kind,
            title=title if title is not None else Path(filename).stem,
            filename=filename,
            source_key=source_key,
            sha256=sha256,
            byte_size=byte_size,
            stored_path=str(stored),
            status="queued",
            created_at=now,
            updated_at=now,
            meta={},
            **access.new_document(),
        )
    )
    return int(result.inserted_primary_key[0])  # type: ignore[index]


def new_version(
    conn: Connection,
    document_id: int,
    *,
    kind: Kind,
    filename: str,
    sha256: str,
    byte_size: int,
    stored: Path,
) -> None:
    """Point a document at changed bytes and queue it again."""
    conn.execute(
        update(documents)
        .where(documents.c.id == document_id)
        .values(
            kind=kind,
            filename=filename,
            sha256=sha256,
            byte_size=byte_size,
            stored_path=str(stored),
            status="queued",
            error=None,
            updated_at=utcnow(),
        )
    )


def record_extraction(
    conn: Connection,
    document_id: int,
    *,
    kind: Kind,
    page_count: int,
    chunk_count: int,
    metadata: dict[str, Any],
    title: str | None = None,
    author: str | None = None,
    language: str | None = None,
) -> None:
    """What reading a document found: its kind, sizes, metadata, language, and title/author
    if known."""
    # Where the file came from (a watched folder's path, a Zotero item) is intake's, not the
    # extractor's; what that source declares for citations wins over the file's own.
    prior = conn.execute(select(documents.c.meta).where(documents.c.id == document_id)).scalar()
    values: dict[str, Any] = {
        "kind": kind,
        "page_count": page_count,
        "chunk_count": chunk_count,
        "meta": metadata,
        "language": language,
        "updated_at": utcnow(),
    }
    if title:
        values["title"] = title
    if author:
        values["author"] = author
    if isinstance(prior, dict) and isinstance(prior.get(ORIGIN), dict):
        values.update(_with_origin(metadata, prior[ORIGIN]))
    conn.execute(update(documents).where(documents.c.id == document_id).values(**values))


def _with_origin(metadata: dict[str, Any], origin: dict[str, Any]) -> dict[str, Any]:
    """The column values that keep ``origin`` in ``metadata`` and apply what it declares."""
    found = origin.get(CITE)
    cite: dict[str, Any] = found if isinstance(found, dict) else {}
    values: dict[str, Any] = {
        "meta": {**metadata, **{k: v for k, v in cite.items() if k != "title"}, ORIGIN: origin}
    }
    if cite.get("title"):
        values["title"] = cite["title"]
    if cite.get("authors"):
        values["author"] = "; ".join(cite["authors"])
    return values


def set_origin(conn: Connection, document_id: int, origin: dict[str, Any]) -> bool:
    """Record where a document came from (and what that source declares for citations) without
    reading it again; False if it was already so."""
    prior = conn.execute(select(documents.c.meta).where(documents.c.id == document_id)).scalar()
    prior = prior if isinstance(prior, dict) else {}
    if prior.get(ORIGIN) == origin:
        return False
    old = prior.get(ORIGIN)
    found = old.get(CITE) if isinstance(old, dict) else None
    old_cite: dict[str, Any] = found if isinstance(found, dict) else {}
    # Keys an earlier origin declared are the file's own again unless the new one declares them.
    base = {k: v for k, v in prior.items() if k != ORIGIN and k not in old_cite}
    values = _with_origin(base, origin)
    conn.execute(update(documents).where(documents.c.id == document_id).values(**values))
    return True


def set_title(conn: Connection, document_id: int, title: str) -> None:
    """Name a document (until its reader finds a title of its own)."""
    conn.execute(
        update(documents)
        .where(documents.c.id == document_id)
        .values(title=title, updated_at=utcnow())
    )


@dataclass(frozen=True)
class LanguageCounts:
    """The languages of the library: (tag, documents, chunks), most chunks first, and how many
    ready documents have none detected."""

    languages: list[tuple[str, int, int]]
    undetected: int


def language_counts(conn: Connection) -> LanguageCounts:
    """How many documents and chunks the library holds in each detected language (of those
    the reader may read)."""
    readable, params = access.document_sql("documents")
    rows = conn.execute(
        text(
            "SELECT language, count(*), coalesce(sum(chunk_count), 0) FROM documents "
            f"WHERE language IS NOT NULL{access.where(readable)} "
            "GROUP BY language ORDER BY 3 DESC, 2 DESC, 1"
        ),
        params,
    ).all()
    undetected = conn.execute(
        text(
            "SELECT count(*) FROM documents WHERE language IS NULL AND status = 'ready' "
            "AND kind <> 'note'"  # notes' index documents (storage/notes.py) have none
            + access.where(readable)
        ),
        params,
    ).scalar_one()
    return LanguageCounts([(r[0], int(r[1]), int(r[2])) for r in rows], int(undetected))


def page_counts(conn: Connection, document_ids: Iterable[int]) -> dict[int, int]:
    """The number of pages (slides, sections, turns) of each document."""
    ids = sorted(set(document_ids))
    if not ids:
        return {}
    rows = conn.execute(
        select(documents.c.id, documents.c.page_count).where(documents.c.id.in_(ids))
    )
    return {int(i): int(n) for i, n in rows}


def not_ready(conn: Connection) -> set[int]:
    """Ids of the documents a search must not show (queued, processing or failed)."""
    return {
        int(r[0])
        for r in conn.exec_driver_sql(f"SELECT id FROM documents WHERE status NOT {VISIBLE_SQL}")
    }


def mark_embedded(conn: Connection) -> int:
    """Searchable documents whose every chunk now has a vector become ready; how many did."""
    result = conn.execute(
        text(
            "UPDATE documents SET status = 'ready', updated_at = :t WHERE status = 'searchable' "
            "AND NOT EXISTS (SELECT 1 FROM page_chunks c WHERE c.document_id = documents.id "
            "AND NOT EXISTS (SELECT 1 FROM vec.page_vecs v "
            f"WHERE v.{vectors.chunk_key(conn)} = c.id))"
        ),
        {"t": utcnow()},
    )
    return int(result.rowcount or 0)


def mark_removed(conn: Connection, document_id: int, now: float, reason: str) -> None:
    """Hide a document whose file left its folder (``failed`` with ``reason``), noting when in
    its origin and the status it had (the first time: a later mark keeps it)."""
    sql = dialect(conn)
    removed_at = sql.json_text("metadata", ORIGIN, "removed_at")
    before = sql.json_text("metadata", ORIGIN, "status_before")
    status_before = (
        f"CASE WHEN {removed_at} IS NULL THEN status ELSE coalesce({before}, 'ready') END"
    )
    marked = sql.json_set(
        "metadata",
        {
            (ORIGIN, "removed_at"): "CAST(:now AS double precision)",
            (ORIGIN, "status_before"): status_before,
        },
    )
    conn.execute(
        text(
            f"UPDATE documents SET metadata = {marked}, status = 'failed', error = :reason "
            "WHERE id = :id"
        ),
        {"now": now, "reason": reason, "id": document_id},
    )


def set_status(conn: Connection, document_id: int, status: str, error: str | None = None) -> None:
    """Set a document's status (and error)."""
    conn.execute(
        update(documents)
        .where(documents.c.id == document_id)
        .values(status=status, error=error, updated_at=utcnow())
    )


def reingest(db: Database, document_id: int) -> int:
    """Queue a document to be read again from its stored original; returns the job id."""
    with db.write() as conn:
        changeable(conn, document_id)
        set_status(conn, document_id, "queued")
        return jobs.enqueue(conn, document_id)


def _doc_dict(
    row: Any, job: Any | None = None, owners: dict[int, str] | None = None
) -> dict[str, Any]:
    m = row._mapping
    out = {
        "id": m["id"],
        "kind": m["kind"],
        "title": m["title"],
        "author": m["author"],
        "filename": m["filename"],
        "sha256": m["sha256"],
        "byte_size": m["byte_size"],
        "page_count": m["page_count"],
        "chunk_count": m["chunk_count"],
        "status": m["status"],
        "error": m["error"],
        "created_at": m["created_at"],
        "updated_at": m["updated_at"],
        "metadata": m["meta"],
        "language": m["language"],
        "origin": m["origin"],
        "visibility": m["visibility"],
        "owner": (owners or {}).get(m["owner_id"]) if m["owner_id"] is not None else None,
        "can_change": access.can_change(m["owner_id"], m["visibility"]),
    }
    if job is not None:
        out["job"] = {
            "id": job.id,
            "status": job.status,
            "stage": job.stage,
            "progress": job.progress,
            "stage_progress": (job.detail or {}).get("stage_progress"),
            "error": job.error,
        }
    return out


def _owners(conn: Connection) -> dict[int, str]:
    return {int(r.id): r.name for r in conn.execute(select(users.c.id, users.c.name))}


def list_documents(conn: Connection) -> list[dict[str, Any]]:
    """Every document the reader may read, newest first, with its latest job (not the notes'
    index documents: storage/notes.py)."""
    latest = select(func.max(ingest_jobs.c.id)).group_by(ingest_jobs.c.document_id)
    by_doc = {
        r.document_id: jobs.from_row(r)
        for r in conn.execute(select(ingest_jobs).where(ingest_jobs.c.id.in_(latest)))
    }
    rows = conn.execute(
        select(documents)
        .where(access.readable_documents(), documents.c.kind != "note")
        .order_by(documents.c.id.desc())
    ).all()
    owners = _owners(conn)
    return [_doc_dict(r, by_doc.get(r.id), owners) for r in rows]


def readable(conn: Connection, document_id: int, *columns: Any) -> Any:
    """The row (``columns``, default all) of a document the reader may read; NotFound if it
    does not exist or is another person's private one (the same answer: no hint it exists)."""
    row = conn.execute(
        select(*(columns or (documents,))).where(
            documents.c.id == document_id, access.readable_documents()
        )
    ).first()
    if row is None:
        raise NotFound(f"document {document_id} does not exist")
    return row


def is_readable(conn: Connection, document_id: int) -> bool:
    """Whether the document exists and the reader may read it."""
    return (
        conn.execute(
            select(documents.c.id).where(documents.c.id == document_id, access.readable_documents())
        ).first()
        is not None
    )


def changeable(conn: Connection, document_id: int, *columns: Any) -> Any:
    """``readable``, and the reader may delete or re-ingest it (else Forbidden)."""
    row = readable(conn, document_id, documents.c.owner_id, documents.c.visibility, *columns)
    access.check_change(row.owner_id, row.visibility, f"document {document_id}")
    return row


def original_of(conn: Connection, files_dir: Path, document_id: int) -> Path:
    """Where this machine reads the original of a document the reader may read (``original``)."""
    row = readable(conn, document_id, documents.c.stored_path, documents.c.sha256, documents.c.kind)
    return original(files_dir, row.stored_path, row.sha256, row.kind)


def stored_paths(conn: Connection, ids: Iterable[int]) -> dict[int, str]:
    """Where the originals of these documents were stored."""
    rows = conn.execute(
        select(documents.c.id, documents.c.stored_path).where(documents.c.id.in_(list(ids)))
    )
    return {int(r.id): str(r.stored_path) for r in rows}


def source_keys(conn: Connection, ids: Iterable[int] | None = None) -> dict[int, str | None]:
    """The source key of every document, or of ``ids`` (a path, a thread slug; None for an
    upload)."""
    query = select(documents.c.id, documents.c.source_key)
    if ids is not None:
        query = query.where(documents.c.id.in_(list(ids)))
    return {int(r.id): r.source_key for r in conn.execute(query)}


@dataclass(frozen=True)
class LibraryCounts:
    documents: int
    chunks: int
    jobs_queued: int
    jobs_running: int


def library_counts(conn: Connection) -> LibraryCounts:
    """How many documents and chunks the library holds (every reader's), and jobs waiting and
    running."""
    row = conn.exec_driver_sql(
        "SELECT (SELECT count(*) FROM documents), (SELECT count(*) FROM page_chunks), "
        "(SELECT count(*) FROM ingest_jobs WHERE status = 'queued'), "
        "(SELECT count(*) FROM ingest_jobs WHERE status = 'running')"
    ).one()
    return LibraryCounts(*(int(v) for v in row))


def get_document(conn: Connection, document_id: int) -> dict[str, Any]:
    """One document the reader may read, with its latest job; NotFound if absent."""
    row = readable(conn, document_id)
    return _doc_dict(row, jobs.latest_for_document(conn, document_id), _owners(conn))


def delete_document(db: Database, document_id: int) -> None:
    """Delete a document, its chunks, vectors, jobs and stored file."""
    with db.write() as conn:
        row = changeable(conn, document_id, documents.c.stored_path, documents.c.sha256)
        notes.delete_for_document(conn, document_id)  # its notes go with it
        chunks.delete_document_chunks(conn, document_id)
        conn.execute(documents.delete().where(documents.c.id == document_id))
    Path(row.stored_path).unlink(missing_ok=True)
    rendition_path(Path(row.stored_path).parent.parent, row.sha256).unlink(missing_ok=True)
