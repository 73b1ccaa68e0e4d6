"""A watched folder kept in step with the library, one reconcile pass at a time.

    sync = FolderSync(db, settings, Path("~/notes").expanduser())
    sync.sync()            # SyncReport(added=3, updated=1, renamed=1, removed=0, ...)

Each file is a document with the source key ``folder:<absolute path>``; the folder and the
relative path are in its metadata (``origin``). A pass compares the folder with the library:
new files go through intake (dedup by content), changed ones become a new version (only their
changed chunks are embedded again), a new file with the bytes of a document whose file is gone
is that document renamed, and a document whose file is gone is hidden from search: its status
becomes ``failed`` with a "removed" reason (every search leg shows ``ready`` documents only),
its data kept for ``watch_grace_days`` or until ``quire rm``. A file is read only once its size
and mtime have held still for ``watch_stable_s`` (not half-written). Ignored: dotfiles and
dot-folders (``.git``, ``.obsidian``), editor and download temp files, and the gitignore-style
patterns of a ``.quireignore`` at the folder's top.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pathspec import GitIgnoreSpec
from sqlalchemy import Connection, text, update

from quire.config import Settings
from quire.errors import InputError, QuireError
from quire.hashing import sha256_file
from quire.ingest.intake import add_file, safe_filename
from quire.storage import documents, jobs, source_runs
from quire.storage.db import Database, json_text
from quire.storage.schema import documents as documents_table
from quire.storage.schema import utcnow

log = logging.getLogger(__name__)

IGNORE_FILE = ".quireignore"
#: Always ignored (gitignore syntax): dotfiles and dot-folders, editor swap and backup files,
#: Office lock files, downloads in progress.
DEFAULT_IGNORE = (
    ".*",
    "~$*",
    "*~",
    "#*#",
    "*.swp",
    "*.swo",
    "*.swx",
    "*.tmp",
    "*.temp",
    "*.part",
    "*.partial",
    "*.crdownload",
    "*.download",
    "__pycache__/",
)
REMOVED = source_runs.FOLDER_REMOVED

Stat = tuple[int, int]  # (size, mtime_ns)


class FolderMissing(QuireError):
    """The watched folder is not there (unmounted, deleted): its documents are left alone."""


@dataclass(frozen=True)
class Tracked:
    """A document that came from this folder, as a pass sees it."""

    id: int
    path: str
    sha256: str
    status: str
    stat: Stat | None
    removed_at: float | None


@dataclass
class SyncReport:
    """What one pass did; ``pending``: files still being written, for a later pass."""

    added: int = 0
    updated: int = 0
    renamed: int = 0
    removed: int = 0
    restored: int = 0
    purged: int = 0
    skipped: int = 0
    pending: int = 0

    @property
    def changed(self) -> bool:
        return any((self.added, self.updated, self.renamed, self.removed, self.restored))


def ignore_spec(root: Path) -> GitIgnoreSpec:
    """The default ignore patterns plus the folder's ``.quireignore``."""
    lines = list(DEFAULT_IGNORE)
    try:
        lines += (root / IGNORE_FILE).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        pass
    return GitIgnoreSpec.from_lines(lines)


def is_ignored(spec: GitIgnoreSpec, rel: str, *, is_dir: bool = False) -> bool:
    """Whether a relative POSIX path, or a folder on its way, matches the ignore patterns."""
    parts = rel.split("/")
    for i in range(1, len(parts) + 1):
        last = i == len(parts)
        if spec.match_file("/".join(parts[:i]) + ("/" if (is_dir or not last) else "")):
            return True
    return False


def origin_key(root: Path, rel: str) -> str:
    return f"folder:{root / rel}"


class FolderSync:
    """Reconciles one folder (recursively) with the library; call ``sync()`` as often as needed."""

    def __init__(
        self,
        db: Database,
        settings: Settings,
        root: Path,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.db = db
        self.settings = settings
        self.root = root.expanduser().absolute()
        self.prefix = f"folder:{self.root}{os.sep}"
        self.clock = clock
        self.spec = ignore_spec(self.root)
        self._first_seen: dict[str, tuple[Stat, float]] = {}
        self._refused: dict[str, Stat] = {}  # unsupported or duplicate: not retried unchanged
        self._passes = 0
        self._missing = False

    def ignored(self, rel: str, *, is_dir: bool = False) -> bool:
        """Whether a path relative to the folder is ignored (or inside an ignored folder)."""
        return is_ignored(self.spec, rel, is_dir=is_dir)

    def scan(self) -> dict[str, Stat]:
        """The folder's files (relative POSIX path → size and mtime), ignored ones left out."""
        if not self.root.is_dir():
            raise FolderMissing(f"watched folder {self.root} is missing")
        self.spec = ignore_spec(self.root)
        out: dict[str, Stat] = {}
        for dirpath, dirnames, filenames in os.walk(self.root):
            base = Path(dirpath).relative_to(self.root).as_posix()
            base = "" if base == "." else base + "/"
            dirnames[:] = sorted(d for d in dirnames if not self.spec.match_file(f"{base}{d}/"))
            for name in filenames:
                rel = base + name
                if self.spec.match_file(rel):
                    continue
                try:
                    st = os.stat(os.path.join(dirpath, name))
                except OSError:
                    continue  # gone since the listing
                if os.path.isfile(os.path.join(dirpath, name)):
                    out[rel] = (st.st_size, st.st_mtime_ns)
        return out

    def tracked(self, conn: Connection) -> dict[str, Tracked]:
        """The documents of this folder, by relative path."""
        rows = conn.execute(
            text(
                "SELECT id, source_key, sha256, status, metadata FROM documents "
                "WHERE substr(source_key, 1, :n) = :prefix"
            ),
            {"n": len(self.prefix), "prefix": self.prefix},
        )
        out: dict[str, Tracked] = {}
        for r in rows:
            meta = json.loads(r.metadata) if isinstance(r.metadata, str) else (r.metadata or {})
            origin = meta.get(documents.ORIGIN) or {}
            stat = (origin["size"], origin["mtime_ns"]) if "mtime_ns" in origin else None
            rel = r.source_key[len(self.prefix) :].replace(os.sep, "/")
            out[rel] = Tracked(r.id, rel, r.sha256, r.status, stat, origin.get("removed_at"))
        return out

    def _stable(self, rel: str, stat: Stat, now: float) -> bool:
        wait = self.settings.watch_stable_s
        if now - stat[1] / 1e9 >= wait:
            return True  # untouched for long enough
        seen = self._first_seen.get(rel)
        if seen is None or seen[0] != stat:
            self._first_seen[rel] = (stat, now)
            return wait <= 0
        return now - seen[1] >= wait

    def sync(self) -> SyncReport:
        """One pass: catch the library up with the folder. FolderMissing if it is not there.

        The first pass, each pass that changed something, and the folder going missing are
        noted in ``source_runs`` (the Settings page's list of watched folders)."""
        started = utcnow()
        report = SyncReport()
        try:
            files = self.scan()
        except FolderMissing as exc:
            if not self._missing:
                self._missing = True
                with self.db.write() as conn:
                    source_runs.record(conn, "folder", str(self.root), started, error=exc.message)
            raise
        first, self._missing, self._passes = self._passes == 0, False, self._passes + 1
        now = self.clock()
        with self.db.read() as conn:
            docs = self.tracked(conn)
        for rel, stat in files.items():
            doc = docs.get(rel)
            if doc is not None and doc.stat == stat:
                if doc.removed_at is not None:
                    self._restore(doc.id, rel, stat)
                    report.restored += 1
                continue
            if self._refused.get(rel) == stat:
                continue
            if not self._stable(rel, stat, now):
                report.pending += 1
                continue
            self._take(rel, stat, doc, report)
        with self.db.read() as conn:
            docs = self.tracked(conn)
        for rel, doc in docs.items():
            if rel not in files and (doc.removed_at is None or doc.status != "failed"):
                self._remove(doc)
                report.removed += 1
        report.purged = self.purge()
        self._first_seen = {r: v for r, v in self._first_seen.items() if r in files}
        self._refused = {r: v for r, v in self._refused.items() if r in files}
        if report.changed or report.purged:
            log.info("watched folder %s: %s", self.root, report)
        if first or report.changed or report.purged:
            with self.db.write() as conn:
                source_runs.record(
                    conn, "folder", str(self.root), started, summary=dataclasses.asdict(report)
                )
        return report

    def _take(self, rel: str, stat: Stat, doc: Tracked | None, report: SyncReport) -> None:
        path = self.root / rel
        try:
            digest = sha256_file(path)
            after = path.stat()
        except OSError:
            return  # gone or unreadable since the scan; the next pass sees it
        if (after.st_size, after.st_mtime_ns) != stat:
            report.pending += 1
            return
        if doc is not None and doc.sha256 == digest:
            self._set_origin(doc.id, rel, stat)  # touched, same bytes
            if doc.removed_at is not None:
                self._restore(doc.id, rel, stat)
                report.restored += 1
            return
        if doc is None and self._rename(digest, rel, stat):
            report.renamed += 1
            return
        try:
            intake = add_file(
                self.db,
                self.settings.files_dir,
                path,
                path.name,
                max_bytes=self.settings.max_upload_bytes,
                source_key=origin_key(self.root, rel),
            )
        except InputError as exc:
            log.info("watched file %s skipped: %s", path, exc.message)
            self._refused[rel] = stat
            report.skipped += 1
            return
        except (QuireError, OSError) as exc:
            log.warning("watched file %s not added: %s", path, exc)
            return
        if intake.status == "duplicate" and (doc is None or intake.document_id != doc.id):
            log.info("watched file %s has the bytes of document %d", path, intake.document_id)
            self._refused[rel] = stat
            report.skipped += 1
            return
        self._set_origin(intake.document_id, rel, stat)
        if doc is None:
            report.added += 1
        else:
            report.updated += 1

    def _origin(self, rel: str, stat: Stat) -> dict[str, Any]:
        return {
            "type": "folder",
            "folder": str(self.root),
            "path": rel,
            "size": stat[0],
            "mtime_ns": stat[1],
        }

    def _set_origin(self, doc_id: int, rel: str, stat: Stat) -> None:
        with self.db.write() as conn:
            documents.set_origin(conn, doc_id, self._origin(rel, stat))

    def _rename(self, digest: str, rel: str, stat: Stat) -> bool:
        """A document from a watched folder whose file is gone, with these bytes, moves here."""
        with self.db.write() as conn:
            row = conn.execute(
                text(
                    "SELECT id, source_key, filename, "
                    f"{json_text(conn, 'metadata', 'origin', 'folder')} AS folder "
                    "FROM documents WHERE sha256 = :s"
                ),
                {"s": digest},
            ).first()
            if row is None or not (row.source_key or "").startswith("folder:"):
                return False
            if Path(row.source_key.removeprefix("folder:")).exists():
                return False  # a copy, not a move: intake calls it a duplicate
            if row.folder and not Path(row.folder).is_dir():
                return False  # its folder is away (unmounted): not known to be moved
            new_name = safe_filename(Path(rel).name)
            old_stem, new_stem = Path(row.filename).stem, Path(new_name).stem
            conn.execute(
                text(
                    "UPDATE documents SET source_key = :k, filename = :f, "
                    "title = CASE WHEN title = :old THEN :new ELSE title END WHERE id = :id"
                ),
                {
                    "k": origin_key(self.root, rel),
                    "f": new_name,
                    "old": old_stem,
                    "new": new_stem,
                    "id": row.id,
                },
            )
            documents.set_origin(conn, row.id, self._origin(rel, stat))
            conn.execute(
                update(documents_table)
                .where(documents_table.c.id == row.id)
                .values(updated_at=utcnow())
            )
            removed = conn.execute(
                text("SELECT status FROM documents WHERE id = :id"), {"id": row.id}
            ).scalar_one()
        log.info("document %d renamed: %s → %s", row.id, row.source_key, rel)
        if removed == "failed":
            self._restore(row.id, rel, stat)
        return True

    def _remove(self, doc: Tracked) -> None:
        """Hide a document whose file left the folder; its data stays for the grace period."""
        now = self.clock()
        until = datetime.fromtimestamp(now + self.settings.watch_grace_days * 86400, UTC)
        reason = f"{REMOVED} ({doc.path}); kept until {until:%Y-%m-%d} or `quire rm {doc.id}`"
        with self.db.write() as conn:
            documents.mark_removed(conn, doc.id, now, reason)
        log.info("document %d: %s", doc.id, reason)

    def _restore(self, doc_id: int, rel: str, stat: Stat) -> None:
        """A removed document's file is back: show it again (re-read if it never got ready)."""
        with self.db.write() as conn:
            before = conn.execute(
                text(
                    f"SELECT {json_text(conn, 'metadata', 'origin', 'status_before')} "
                    "FROM documents WHERE id = :id"
                ),
                {"id": doc_id},
            ).scalar()
            documents.set_origin(conn, doc_id, self._origin(rel, stat))
            if before == "ready":
                documents.set_status(conn, doc_id, "ready")
            else:
                documents.set_status(conn, doc_id, "queued")
                jobs.enqueue(conn, doc_id)
        log.info("document %d is back in its watched folder (%s)", doc_id, rel)

    def purge(self) -> int:
        """Delete this folder's removed documents older than the grace period."""
        cutoff = self.clock() - self.settings.watch_grace_days * 86400
        with self.db.read() as conn:
            ids = [
                int(r[0])
                for r in conn.execute(
                    text(
                        "SELECT id FROM documents WHERE substr(source_key, 1, :n) = :prefix "
                        "AND status = 'failed' "
                        f"AND CAST({json_text(conn, 'metadata', 'origin', 'removed_at')} "
                        "AS DOUBLE PRECISION) <= :cutoff"
                    ),
                    {"n": len(self.prefix), "prefix": self.prefix, "cutoff": cutoff},
                )
            ]
        for doc_id in ids:
            documents.delete_document(self.db, doc_id)
            log.info("document %d deleted: its grace period after removal ended", doc_id)
        return len(ids)
