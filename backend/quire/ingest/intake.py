"""Intake: accepting one file into the library — detect its type, dedup it by content, store
the original (content-addressed), and queue its ingest job.

    intake = add_file(db, settings.files_dir, path, path.name, max_bytes=settings.max_upload_bytes)
    intake.status          # queued | duplicate | updated | requeued

A document may have a *source key* (the absolute path for ``quire ingest``, a thread slug for
a Perplexity sync): a changed file with a known key becomes a new version of that document,
and only its changed chunks are embedded again.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from sqlalchemy import Connection
from sqlalchemy.exc import IntegrityError

from quire.errors import Conflict, EmptyFile, FileTooLarge
from quire.formats.detect import detect_kind
from quire.hashing import sha256_file
from quire.storage import documents, jobs
from quire.storage.db import Database
from quire.storage.records import Kind

IntakeStatus = Literal["queued", "duplicate", "updated", "requeued"]


@dataclass(frozen=True)
class Intake:
    """What happened to one submitted file."""

    document_id: int
    job_id: int | None
    status: IntakeStatus
    kind: Kind
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

    ``move``: the file is a temporary copy (an upload) that may be moved instead of copied.
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
    target = documents.stored_path(files_dir, digest, kind)
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        tmp = documents.part_path(target)
        if move:
            shutil.move(str(src), tmp)
        else:
            shutil.copyfile(src, tmp)
        os.replace(tmp, target)
    elif move:
        src.unlink(missing_ok=True)

    old_path: str | None = None
    try:
        with db.write() as conn:
            same = documents.by_sha256(conn, digest)
            if same is not None:
                _check_readable(conn, same.id, filename)
                if same.status == "failed":
                    documents.set_status(conn, same.id, "queued")
                    job_id = jobs.enqueue(conn, same.id)
                    return Intake(same.id, job_id, "requeued", kind, filename, digest)
                job = jobs.latest_for_document(conn, same.id)
                return Intake(same.id, job.id if job else None, "duplicate", kind, filename, digest)
            prior = documents.by_source_key(conn, source_key) if source_key is not None else None
            if prior is not None:
                _check_readable(conn, prior.id, filename)
                old_path = prior.stored_path
                documents.new_version(
                    conn,
                    prior.id,
                    kind=kind,
                    filename=filename,
                    sha256=digest,
                    byte_size=size,
                    stored=target,
                )
                job_id = jobs.enqueue(conn, prior.id)
                return Intake(prior.id, job_id, "updated", kind, filename, digest)
            doc_id = documents.insert(
                conn,
                kind=kind,
                filename=filename,
                sha256=digest,
                byte_size=size,
                stored=target,
                source_key=source_key,
            )
            job_id = jobs.enqueue(conn, doc_id)
            return Intake(doc_id, job_id, "queued", kind, filename, digest)
    except IntegrityError:
        # Another request stored the same bytes between our check and our insert.
        with db.read() as conn:
            stored = documents.by_sha256(conn, digest)
            assert stored is not None
            _check_readable(conn, stored.id, filename)
            job = jobs.latest_for_document(conn, stored.id)
        return Intake(stored.id, job.id if job else None, "duplicate", kind, filename, digest)
    finally:
        if old_path and old_path != str(target):
            Path(old_path).unlink(missing_ok=True)


def _check_readable(conn: Connection, document_id: int, filename: str) -> None:
    """Content is stored once per library: when another person holds these bytes (or this
    source key) privately, the upload is refused rather than shown or changed."""
    if not documents.is_readable(conn, document_id):
        raise Conflict(
            f"{filename}: another member of this library holds the same file privately; "
            "ask them to share it (nothing was stored)"
        )
