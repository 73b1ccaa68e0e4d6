"""A Zotero library into Quire: every PDF and EPUB attachment a document, with its item's
metadata (title, authors, year, DOI, citation key, collections, tags) as the document's origin.

    summary = import_zotero(db, settings, Path("~/Zotero").expanduser())
    summary.new, summary.updated, summary.metadata, summary.unchanged, summary.jobs

Each attachment is keyed ``zotero:<item key>/<attachment key>`` (``zotero:bib:<citation
key>/<file name>`` from a BibTeX export). Its origin (``metadata.origin``, type ``zotero``)
carries the item's metadata under ``cite``, which wins over what the file declares for
citations (storage/documents.py), so the BibTeX export of an answer uses the item's citation
key. Re-running reads only what changed: a file whose size and mtime are as recorded is not
hashed again, a changed file becomes a new version (only its changed chunks are embedded), an
item whose metadata changed is updated in place, without reading its file again. Reading a
whole library (its database), an item that has left it (deleted, in the trash) is hidden from
search like a file removed from a watched folder, and comes back if it returns. From a
database, each attachment's annotations become notes on its pages, mirrored on every re-import
(sources/zotero/notes.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select, text

from quire.config import Settings
from quire.errors import QuireError
from quire.ingest.intake import add_file
from quire.sources.zotero.notes import AnnotationCounts, sync_annotations
from quire.sources.zotero.read import Attachment, Item, Library, read_library
from quire.storage import documents, source_runs
from quire.storage.db import Database, json_text
from quire.storage.documents import ORIGIN
from quire.storage.schema import documents as documents_table
from quire.storage.schema import utcnow

log = logging.getLogger(__name__)

REMOVED = "removed from its Zotero library"
#: ``progress(done, total, label)`` over the attachments.
ZoteroProgress = Callable[[int, int, str], None]


@dataclass
class ZoteroSummary:
    """What one import did, by attachment."""

    location: str
    format: str
    items: int = 0
    attachments: int = 0
    new: int = 0
    updated: int = 0  # a changed file: a new version
    metadata: int = 0  # only the item's metadata changed
    unchanged: int = 0
    removed: int = 0
    restored: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (what, why)
    note: str | None = None
    #: Ingest jobs queued (job id -> file name), for ``--wait``.
    jobs: dict[int, str] = field(default_factory=dict)
    #: The attachments' annotations, as notes (sources/zotero/notes.py).
    annotations: AnnotationCounts = field(default_factory=AnnotationCounts)

    def as_dict(self) -> dict[str, Any]:
        return {
            "location": self.location,
            "format": self.format,
            "items": self.items,
            "attachments": self.attachments,
            "new": self.new,
            "updated": self.updated,
            "metadata": self.metadata,
            "unchanged": self.unchanged,
            "removed": self.removed,
            "restored": self.restored,
            "skipped": [{"item": w, "reason": r} for w, r in self.skipped],
            "note": self.note,
            "jobs": sorted(self.jobs),
            "annotations": self.annotations.as_dict(),
        }


def source_key(item: Item, attachment: Attachment) -> str:
    return f"zotero:{item.key}/{attachment.key}"


def origin(
    library: Library, item: Item, attachment: Attachment, stat: tuple[int, int]
) -> dict[str, Any]:
    """The document's ``metadata.origin`` for one attachment."""
    return {
        "type": "zotero",
        "library": str(library.location),
        "format": library.format,
        "item": item.key,
        "attachment": attachment.title,
        "path": str(attachment.path),
        "size": stat[0],
        "mtime_ns": stat[1],
        "collections": item.collections,
        "tags": item.tags,
        "cite": item.cite,
    }


def import_zotero(
    db: Database,
    settings: Settings,
    path: Path,
    *,
    base_dir: Path | None = None,
    progress: ZoteroProgress | None = None,
) -> ZoteroSummary:
    """Import (or bring up to date) the library at ``path``; see the module docstring.

    The files are queued for the worker (``summary.jobs``); the metadata is written at once.
    Raises ZoteroUnreadable / InputError when the library cannot be read at all (nothing is
    changed then); an attachment that cannot be read is listed in ``skipped``."""
    started = utcnow()
    location = str(path.expanduser().resolve())
    try:
        library = read_library(path, base_dir=base_dir)
    except QuireError as exc:
        with db.write() as conn:
            source_runs.record(conn, "zotero", location, started, error=exc.message)
        raise
    summary = ZoteroSummary(str(library.location), library.format, note=library.note)
    summary.items = len(library.items)
    files = [(item, att) for item in library.items for att in item.attachments]
    summary.attachments = len(files)
    seen: set[str] = set()
    for n, (item, att) in enumerate(files, start=1):
        if progress:
            progress(n - 1, len(files), att.title)
        key = source_key(item, att)
        if att.problem:
            summary.skipped.append((f"{item.label}: {att.title}", att.problem))
            continue
        assert att.path is not None
        try:
            st = att.path.stat()
        except OSError:
            summary.skipped.append((f"{item.label}: {att.title}", f"file missing: {att.path}"))
            continue
        seen.add(key)
        _one(db, settings, library, item, att, key, (st.st_size, st.st_mtime_ns), summary)
    if progress:
        progress(len(files), len(files), "")
    if library.format == "sqlite":  # exports carry no annotations: their notes are left alone
        for item, att in files:
            key = source_key(item, att)
            doc = _known(db, key) if key in seen else None
            if doc is not None:
                sync_annotations(db, settings, doc["id"], att.annotations, summary.annotations)
    if library.complete:
        _hide_gone(db, library, seen, summary)
    with db.write() as conn:
        report = summary.as_dict()
        report["skipped"] = len(summary.skipped)
        source_runs.record(conn, "zotero", summary.location, started, summary=report)
    log.info(
        "zotero import of %s: %d items, %d attachments: %d new, %d updated, %d metadata, "
        "%d unchanged, %d removed, %d skipped",
        summary.location,
        summary.items,
        summary.attachments,
        summary.new,
        summary.updated,
        summary.metadata,
        summary.unchanged,
        summary.removed,
        len(summary.skipped),
    )
    return summary


def _known(db: Database, key: str) -> dict[str, Any] | None:
    with db.read() as conn:
        row = conn.execute(
            select(
                documents_table.c.id,
                documents_table.c.status,
                documents_table.c.error,
                documents_table.c.meta,
            ).where(documents_table.c.source_key == key)
        ).first()
    if row is None:
        return None
    meta = row.meta if isinstance(row.meta, dict) else {}
    return {"id": row.id, "status": row.status, "error": row.error, "origin": meta.get(ORIGIN)}


def _one(
    db: Database,
    settings: Settings,
    library: Library,
    item: Item,
    att: Attachment,
    key: str,
    stat: tuple[int, int],
    summary: ZoteroSummary,
) -> None:
    assert att.path is not None
    what = f"{item.label}: {att.title}"
    wanted = origin(library, item, att, stat)
    doc = _known(db, key)
    old = doc["origin"] if doc and isinstance(doc["origin"], dict) else {}
    same_file = (old.get("size"), old.get("mtime_ns")) == stat
    # An unchanged file is not read again; one hidden as removed is (it is back).
    if (
        doc is not None
        and same_file
        and not (doc["status"] == "failed" and doc["error"] == REMOVED)
    ):
        with db.write() as conn:
            changed = documents.set_origin(conn, doc["id"], wanted)
        if changed:
            summary.metadata += 1
        else:
            summary.unchanged += 1
        return
    try:
        intake = add_file(
            db,
            settings.files_dir,
            att.path,
            att.path.name,
            max_bytes=settings.max_upload_bytes,
            source_key=key,
        )
    except (QuireError, OSError) as exc:
        summary.skipped.append((what, getattr(exc, "message", None) or str(exc)))
        return
    taken = intake.status == "duplicate" and (doc is None or intake.document_id != doc["id"])
    if taken:
        owner = _owner(db, intake.document_id, item)
        if owner is not None:
            summary.skipped.append(
                (what, f"the same file as {owner} (document {intake.document_id})")
            )
            return
    with db.write() as conn:
        documents.set_origin(conn, intake.document_id, wanted)
        if taken:  # an upload of the same file becomes this item's document
            conn.execute(
                text("UPDATE documents SET source_key = :k WHERE id = :id AND source_key IS NULL"),
                {"k": key, "id": intake.document_id},
            )
    if intake.job_id is not None and intake.status != "duplicate":
        summary.jobs[intake.job_id] = att.path.name
    if intake.status == "queued" or (intake.status == "duplicate" and doc is None):
        summary.new += 1
    elif intake.status == "requeued" and doc is not None and doc["error"] == REMOVED:
        summary.restored += 1
    elif intake.status in ("updated", "requeued"):
        summary.updated += 1
    else:
        summary.unchanged += 1


def _owner(db: Database, document_id: int, item: Item) -> str | None:
    """What another document with the same bytes belongs to, if it is not free to take: a
    watched folder's file, a chat, another Zotero item (None: an upload, taken over, or this
    item's own)."""
    with db.read() as conn:
        row = conn.execute(
            select(documents_table.c.origin, documents_table.c.meta).where(
                documents_table.c.id == document_id
            )
        ).first()
    if row is None or row.origin == "upload":
        return None
    if row.origin == "zotero":
        prior = (row.meta or {}).get(ORIGIN) or {}
        if prior.get("item") == item.key:
            return None
        return f"item {prior.get('cite', {}).get('title') or prior.get('item')!r}"
    return f"a {row.origin} document"


def _hide_gone(db: Database, library: Library, seen: set[str], summary: ZoteroSummary) -> None:
    """Hide documents of this library whose attachment is no longer in it (data kept)."""
    with db.write() as conn:
        rows = conn.execute(
            text(
                "SELECT id, source_key FROM documents WHERE origin = 'zotero' "
                f"AND {json_text(conn, 'metadata', 'origin', 'library')} = :lib "
                "AND NOT (status = 'failed' AND coalesce(error, '') = :removed)"
            ),
            {"lib": str(library.location), "removed": REMOVED},
        ).all()
        for row in rows:
            if row.source_key not in seen:
                documents.set_status(conn, int(row.id), "failed", REMOVED)
                summary.removed += 1
