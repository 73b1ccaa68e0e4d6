"""Online backup and restore of a data directory: both database files and the stored originals.

Backup works while the API and workers run. A second connection briefly takes the write lock
(``BEGIN IMMEDIATE`` covers both files, as every writer's transaction does), so that the
reading connection can open its snapshot of both files at one instant; the lock is released at
once and SQLite's backup API then copies each file from that snapshot, while writers go on.
The originals named by the copied ``documents`` table are copied and their SHA-256 checked.

Restore refuses a data directory that a process has open, and one that holds a library unless
forced; the library it replaces is moved aside, never deleted. Stored paths are rewritten for
the new location, and the result is checked before and after it is put in place.

Compact (``quire compact``) gives the space that deleted documents, re-ingests and migrations
freed inside both files back to the disk (``VACUUM``); like restore it refuses files that
another process has open.

Layout of a backup: ``quire.db``, ``quire_vecs.db``, ``files/<sha[:2]>/<sha>.<ext>``,
``backup.json`` (what was copied, from where, and what was missing).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import sqlean

from quire import __version__
from quire.config import Settings
from quire.errors import Conflict, CorruptFile, InputError, NotFound
from quire.storage.integrity import check, connect, in_use
from quire.storage.schema import utcnow

log = logging.getLogger(__name__)

DB_NAME, VEC_NAME, FILES_DIR, MANIFEST = "quire.db", "quire_vecs.db", "files", "backup.json"
FORMAT = 1


@dataclass
class Summary:
    """What a backup or restore copied."""

    path: str
    documents: int = 0
    chunks: int = 0
    vectors: int = 0
    files: int = 0
    bytes: int = 0
    seconds: float = 0.0
    missing_files: list[str] = field(default_factory=list)
    moved_aside: str | None = None


def _sqlite_library(settings: Settings, what: str) -> None:
    """backup, restore and compact work on the SQLite files; a PostgreSQL library has its
    server's own tools (docs/POSTGRES.md)."""
    if settings.database_url is not None:
        raise InputError(
            f"{what} works on a SQLite library; this one is in PostgreSQL (QUIRE_DATABASE_URL): "
            "use pg_dump / pg_restore and VACUUM there, and copy the originals directory "
            "(docs/POSTGRES.md)"
        )


def _copy_hashed(src: Path, dest: Path) -> tuple[str, int]:
    """Copy ``src`` to ``dest``; the SHA-256 and size of what was copied."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    size = 0
    with src.open("rb") as fin, dest.open("wb") as fout:
        while block := fin.read(1 << 20):
            digest.update(block)
            fout.write(block)
            size += len(block)
        fout.flush()
        os.fsync(fout.fileno())
    shutil.copystat(src, dest)
    return digest.hexdigest(), size


def _snapshot(db_path: Path, vec_path: Path, dest: Path) -> None:
    """Copy both files from one consistent snapshot into ``dest``."""
    with connect(db_path, vec_path) as lock, connect(db_path, vec_path) as reader:
        lock.execute("BEGIN IMMEDIATE")  # no writer is between its two files now
        try:
            reader.execute("BEGIN")
            reader.execute("SELECT count(*) FROM main.sqlite_master").fetchone()
            reader.execute("SELECT count(*) FROM vec.sqlite_master").fetchone()
        finally:
            lock.execute("ROLLBACK")
        try:
            for schema, name in (("main", DB_NAME), ("vec", VEC_NAME)):
                target = sqlean.connect(str(dest / name))
                try:
                    # One step (pages=-1): the whole file from the reader's open snapshot.
                    reader.backup(target, pages=-1, name=schema)
                finally:
                    target.close()
        finally:
            reader.execute("COMMIT")


def _documents(db_path: Path) -> list[tuple[int, str, str]]:
    with connect(db_path) as conn:
        # Notes' index documents (storage/notes.py) have no file: their note is in the database.
        rows = conn.execute(
            "SELECT id, sha256, stored_path FROM documents WHERE kind <> 'note' ORDER BY id"
        ).fetchall()
    return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]


def _relative(stored_path: str) -> Path:
    """``files/<sha[:2]>/<name>``, wherever the data directory was."""
    p = Path(stored_path)
    return Path(FILES_DIR) / p.parent.name / p.name


def _fill(summary: Summary, report_counts: dict[str, int]) -> None:
    summary.documents = report_counts.get("documents", 0)
    summary.chunks = report_counts.get("chunks", 0)
    summary.vectors = report_counts.get("vectors", 0)


def backup(settings: Settings, dest: Path) -> Summary:
    """Write a backup of ``settings.data_dir`` to ``dest`` (a new or empty directory)."""
    _sqlite_library(settings, "quire backup")
    t0 = time.monotonic()
    dest = dest.expanduser().resolve()
    if not settings.db_path.exists():
        raise NotFound(f"no library at {settings.data_dir} (no {DB_NAME})")
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise Conflict(f"{dest} exists and is not an empty directory")
    if dest == settings.data_dir or settings.data_dir in dest.parents:
        raise Conflict("the backup must be written outside the data directory")
    staging = dest.with_name(f".{dest.name}.partial-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        try:
            _snapshot(settings.db_path, settings.vec_db_path, staging)
        except sqlean.DatabaseError as exc:
            raise CorruptFile(f"the library cannot be read: {exc}") from exc
        report = check(staging / DB_NAME, staging / VEC_NAME)
        if not report.ok:
            raise CorruptFile("the copied database is not sound: " + "; ".join(report.problems))
        summary = Summary(path=str(dest))
        _fill(summary, report.counts)
        for doc_id, sha, stored in _documents(staging / DB_NAME):
            src = Path(stored)
            if not src.is_file():
                summary.missing_files.append(f"document {doc_id}: {stored}")
                continue
            digest, size = _copy_hashed(src, staging / _relative(stored))
            if digest != sha:
                summary.missing_files.append(f"document {doc_id}: {stored} has changed on disk")
            summary.files += 1
            summary.bytes += size
        summary.bytes += sum((staging / n).stat().st_size for n in (DB_NAME, VEC_NAME))
        manifest = {
            "format": FORMAT,
            "quire_version": __version__,
            "created_at": utcnow().isoformat(timespec="seconds") + "Z",
            "source": str(settings.data_dir),
            "sqlite_version": sqlean.sqlite_version,
            **asdict(summary),
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        if dest.exists():
            dest.rmdir()
        staging.rename(dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    summary.seconds = round(time.monotonic() - t0, 2)
    log.info("backup of %s written to %s: %s", settings.data_dir, dest, summary)
    return summary


def _read_manifest(src: Path) -> dict[str, Any]:
    try:
        manifest: dict[str, Any] = json.loads((src / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise NotFound(f"{src} is not a Quire backup (no {MANIFEST})") from None
    except ValueError as exc:
        raise CorruptFile(f"{src / MANIFEST} is not valid JSON: {exc}") from exc
    if manifest.get("format") != FORMAT:
        raise CorruptFile(f"{src} is a backup of an unknown format {manifest.get('format')!r}")
    return manifest


def _holds_library(settings: Settings) -> bool:
    if settings.db_path.exists():
        with connect(settings.db_path) as conn:
            has = conn.execute(
                "SELECT count(*) FROM sqlite_master WHERE name = 'documents'"
            ).fetchone()[0]
            if has and conn.execute("SELECT count(*) FROM documents").fetchone()[0]:
                return True
    files = settings.files_dir
    return files.exists() and any(p.is_file() for p in files.rglob("*"))


def _not_in_use(settings: Settings, why: str) -> None:
    for path in (settings.db_path, settings.vec_db_path):
        if in_use(path):
            raise Conflict(
                f"{path} is open in another process (the API, a worker or a CLI command): "
                f"stop them first; {why}"
            )


def _library_bytes(settings: Settings) -> int:
    paths = (settings.db_path, settings.vec_db_path)
    files = [Path(f"{p}{suffix}") for p in paths for suffix in ("", "-wal")]
    return sum(f.stat().st_size for f in files if f.exists())


@dataclass
class Compacted:
    """What ``compact`` did: the library's bytes on disk (both files and their WALs)."""

    before: int
    after: int
    seconds: float


def compact(settings: Settings) -> Compacted:
    """Rewrite both database files without their free pages (``VACUUM``)."""
    _sqlite_library(settings, "quire compact")
    t0 = time.monotonic()
    if not settings.db_path.exists():
        raise NotFound(f"no library at {settings.data_dir} (no {DB_NAME})")
    _not_in_use(settings, "VACUUM needs the files to itself")
    before = _library_bytes(settings)
    with connect(settings.db_path, settings.vec_db_path) as conn:
        for schema in ("main", "vec"):
            conn.execute(f"PRAGMA {schema}.wal_checkpoint(TRUNCATE)")
            conn.execute(f"VACUUM {schema}")
            conn.execute(f"PRAGMA {schema}.wal_checkpoint(TRUNCATE)")
    return Compacted(before, _library_bytes(settings), round(time.monotonic() - t0, 1))


def restore(settings: Settings, src: Path, *, force: bool = False) -> Summary:
    """Replace the library in ``settings.data_dir`` with the backup in ``src``."""
    _sqlite_library(settings, "quire restore")
    t0 = time.monotonic()
    src = src.expanduser().resolve()
    data = settings.data_dir
    manifest = _read_manifest(src)
    _not_in_use(settings, "a running process would go on writing to the old files")
    if _holds_library(settings) and not force:
        raise Conflict(f"{data} already holds a library; --force moves it aside and restores")
    data.mkdir(parents=True, exist_ok=True)
    staging = data / f".restore-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    summary = Summary(path=str(data))
    try:
        for name in (DB_NAME, VEC_NAME):
            if not (src / name).is_file():
                raise NotFound(f"{src} has no {name}")
            try:
                with connect(src / name) as source:
                    target = sqlean.connect(str(staging / name))
                    try:
                        source.backup(target, pages=-1)
                    finally:
                        target.close()
            except sqlean.DatabaseError as exc:
                raise CorruptFile(f"the backup's {name} cannot be read: {exc}") from exc
        report = check(staging / DB_NAME, staging / VEC_NAME)
        if not report.ok:
            raise CorruptFile("the backup's database is not sound: " + "; ".join(report.problems))
        already_missing = set(manifest.get("missing_files") or [])
        moves: list[tuple[int, str]] = []
        for doc_id, sha, stored in _documents(staging / DB_NAME):
            relative = _relative(stored)
            if not (src / relative).is_file():
                note = f"document {doc_id}: {stored}"
                if note not in already_missing:
                    raise CorruptFile(f"the backup lacks the original of document {doc_id}")
                summary.missing_files.append(note)
                continue
            digest, size = _copy_hashed(src / relative, staging / relative)
            if digest != sha:
                raise CorruptFile(f"the backup's original of document {doc_id} is damaged")
            summary.files += 1
            summary.bytes += size
            moves.append((doc_id, str(data / relative)))
        with connect(staging / DB_NAME) as conn:
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(
                "UPDATE documents SET stored_path = ? WHERE id = ?",
                [(path, doc_id) for doc_id, path in moves],
            )
            # Jobs that were running when the backup was taken have no worker here.
            conn.execute(
                "UPDATE ingest_jobs SET status = 'queued', worker_id = NULL "
                "WHERE status = 'running'"
            )
            conn.execute("COMMIT")
        summary.moved_aside = _move_aside(settings)
        for name in (DB_NAME, VEC_NAME, FILES_DIR):
            if (staging / name).exists():
                (staging / name).rename(data / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    after = check(settings.db_path, settings.vec_db_path)
    if not after.ok:
        raise CorruptFile("the restored database is not sound: " + "; ".join(after.problems))
    _fill(summary, after.counts)
    summary.seconds = round(time.monotonic() - t0, 2)
    log.info("restored %s from %s: %s", data, src, summary)
    return summary


def _move_aside(settings: Settings) -> str | None:
    """Move the current library (databases, their WAL files, originals) into a new folder."""
    names = [
        f"{base}{suffix}" for base in (DB_NAME, VEC_NAME) for suffix in ("", "-wal", "-shm")
    ] + [FILES_DIR]
    present = [n for n in names if (settings.data_dir / n).exists()]
    if not present:
        return None
    stamp = utcnow().strftime("%Y%m%dT%H%M%S")
    aside = settings.data_dir / f"pre-restore-{stamp}"
    aside.mkdir()
    for name in present:
        (settings.data_dir / name).rename(aside / name)
    return str(aside)
