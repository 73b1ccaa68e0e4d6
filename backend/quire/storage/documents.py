"""Documents: intake (dedup by sha256, new versions by source key), listing, deletion."""

from __future__ import annotations

import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import Connection, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from quire.errors import EmptyFile, FileTooLarge, NotFound
from quire.hashing import sha256_file
from quire.ingest.detect import detect_kind
from quire.storage import chunks, jobs
from quire.storage.db import Database
from quire.storage.schema import documents, ingest_jobs, utcnow

log = logging.getLogger(__name__)

IntakeStatus = Literal["queued", "duplicate", "updated", "requeued"]

EXTENSIONS = {
    "pdf": ".pdf",
    "epub": ".epub",
    "perplexity": ".md",
    "markdown": ".md",
    "text": ".txt",
}


@dataclass(frozen=True)
class Intake:
    """What happened to one submitted file."""

    document_id: int
    job_id: int | None
    status: IntakeStatus
    kind: str
    filename: str
    sha256: str


def safe_filename(name: str) -> str:
    """The last path component with control characters removed, at most 255 characters."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    base = "".join(ch for ch in base if ch.isprintable() and ch not in "\x00")
    base = base.strip().lstrip(".") or "upload"
    if len(base) > 255:
        stem, dot, ext = base.rpartition(".")
        base = (stem[: 250 - len(ext)] + dot + ext) if dot and len(ext) <= 10 else base[:255]
    return base


def stored_path(files_dir: Path, sha256: str, kind: str) -> Path:
    """Content-addressed location of an original file."""
    return files_dir / sha256[:2] / f"{sha256}{EXTENSIONS.get(kind, '')}"


def add_file(
    db: Database,
    files_dir: Path,
    src: Path,
    filename: str,
    *,
    max_bytes: int,
    source_key: str | None = None,
    move: bool = False,
) -> Intake:
    """Accept one file: detect its type, dedup by content, store it, queue its ingest job.

    ``source_key`` names a document across versions (a CLI path, a Perplexity slug): a changed
    file with a known key becomes a new version of that document, and only its changed chunks
    are embedded again.
    """
    size = src.stat().st_size
    if size == 0:
        raise EmptyFile(f"{filename}: the file is empty")
    if size > max_bytes:
        raise FileTooLarge(
            f"{filename}: {size / 1e6:.1f} MB is over the {max_bytes / 1e6:.0f} MB limit"
        )
    kind = detect_kind(src)
    digest = sha256_file(src)
    filename = safe_filename(filename)
    target = stored_path(files_dir, digest, kind)
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        tmp = target.with_suffix(target.suffix + f".{os.getpid()}.part")
        if move:
            shutil.move(str(src), tmp)
        else:
            shutil.copyfile(src, tmp)
        os.replace(tmp, target)
    elif move:
        src.unlink(missing_ok=True)

    now = utcnow()
    old_path: str | None = None
    try:
        with db.write() as conn:
            same = conn.execute(
                select(documents.c.id, documents.c.status).where(documents.c.sha256 == digest)
            ).first()
            if same is not None:
                if same.status == "failed":
                    set_status(conn, same.id, "queued")
                    job_id = jobs.enqueue(conn, same.id)
                    return Intake(same.id, job_id, "requeued", kind, filename, digest)
                job = jobs.latest_for_document(conn, same.id)
                return Intake(same.id, job.id if job else None, "duplicate", kind, filename, digest)
            prior = None
            if source_key is not None:
                prior = conn.execute(
                    select(documents.c.id, documents.c.stored_path).where(
                        documents.c.source_key == source_key
                    )
                ).first()
            if prior is not None:
                old_path = prior.stored_path
                conn.execute(
                    update(documents)
                    .where(documents.c.id == prior.id)
                    .values(
                        kind=kind,
                        filename=filename,
                        sha256=digest,
                        byte_size=size,
                        stored_path=str(target),
                        status="queued",
                        error=None,
                        updated_at=now,
                    )
                )
                job_id = jobs.enqueue(conn, prior.id)
                return Intake(prior.id, job_id, "updated", kind, filename, digest)
            result = conn.execute(
                insert(documents).values(
                    kind=kind,
                    title=Path(filename).stem,
                    filename=filename,
                    source_key=source_key,
                    sha256=digest,
                    byte_size=size,
                    stored_path=str(target),
                    status="queued",
                    created_at=now,
                    updated_at=now,
                    meta={},
                )
            )
            doc_id = int(result.inserted_primary_key[0])  # type: ignore[index]
            job_id = jobs.enqueue(conn, doc_id)
            return Intake(doc_id, job_id, "queued", kind, filename, digest)
    except IntegrityError:
        # Another request stored the same bytes between our check and our insert.
        with db.read() as conn:
            doc_id = conn.execute(
                select(documents.c.id).where(documents.c.sha256 == digest)
            ).scalar_one()
            job = jobs.latest_for_document(conn, doc_id)
        return Intake(doc_id, job.id if job else None, "duplicate", kind, filename, digest)
    finally:
        if old_path and old_path != str(target):
            Path(old_path).unlink(missing_ok=True)


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
        if (
            conn.execute(select(documents.c.id).where(documents.c.id == document_id)).first()
            is None
        ):
            raise NotFound(f"document {document_id} does not exist")
        set_status(conn, document_id, "queued")
        return jobs.enqueue(conn, document_id)


def _doc_dict(row: Any, job: Any | None = None) -> dict[str, Any]:
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
    }
    if job is not None:
        out["job"] = {
            "id": job.id,
            "status": job.status,
            "stage": job.stage,
            "progress": job.progress,
            "error": job.error,
        }
    return out


def list_documents(conn: Connection) -> list[dict[str, Any]]:
    """Every document, newest first, with its latest job."""
    latest = select(func.max(ingest_jobs.c.id)).group_by(ingest_jobs.c.document_id)
    by_doc = {
        r.document_id: jobs.from_row(r)
        for r in conn.execute(select(ingest_jobs).where(ingest_jobs.c.id.in_(latest)))
    }
    rows = conn.execute(select(documents).order_by(documents.c.id.desc())).all()
    return [_doc_dict(r, by_doc.get(r.id)) for r in rows]


def get_document(conn: Connection, document_id: int) -> dict[str, Any]:
    """One document with its latest job; NotFound if absent."""
    row = conn.execute(select(documents).where(documents.c.id == document_id)).first()
    if row is None:
        raise NotFound(f"document {document_id} does not exist")
    return _doc_dict(row, jobs.latest_for_document(conn, document_id))


def delete_document(db: Database, document_id: int) -> None:
    """Delete a document, its chunks, vectors, jobs and stored file."""
    with db.write() as conn:
        row = conn.execute(
            select(documents.c.stored_path).where(documents.c.id == document_id)
        ).first()
        if row is None:
            raise NotFound(f"document {document_id} does not exist")
        chunks.delete_document_chunks(conn, document_id)
        conn.execute(documents.delete().where(documents.c.id == document_id))
    Path(row.stored_path).unlink(missing_ok=True)
