"""A real library, a real worker with a counting embedder, and real watchers on temp folders."""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from quire.config import Settings
from quire.errors import InputError
from quire.formats.detect import detect_kind
from quire.ingest.worker import Worker
from quire.sources.folder import ignore_spec, is_ignored
from quire.sources.watch import FolderWatcher
from quire.storage.db import Database
from tests.fakes.embedder import CountingEmbedder
from tests.runtime import seed_sqlite


@pytest.fixture
def settings(tmp_path: Path, database_url: str | None, sqlite_template: Path) -> Settings:
    built = Settings(
        data_dir=tmp_path / "data",
        database_url=database_url,
        max_upload_mb=5,
        watch_debounce_ms=150,
        watch_stable_s=0.6,
        watch_rescan_s=30,
        worker_poll_s=0.1,
    )
    if database_url is None:
        seed_sqlite(sqlite_template, built.data_dir)
    return built


@pytest.fixture
def embedder() -> CountingEmbedder:
    return CountingEmbedder()


@pytest.fixture
def worker(settings: Settings, db: Database, embedder: CountingEmbedder) -> Worker:
    return Worker(settings, db, embedder)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    folder = tmp_path / "vault"
    folder.mkdir()
    return folder


@contextmanager
def watching(db: Database, settings: Settings, root: Path) -> Iterator[FolderWatcher]:
    """A real watcher thread on ``root`` for the block's duration."""
    stop = threading.Event()
    watcher = FolderWatcher(db, settings, root, stop)
    thread = threading.Thread(target=watcher.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while watcher.passes == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.1)  # the notifier is set up right after the first pass
        yield watcher
    finally:
        stop.set()
        thread.join(timeout=10)
        assert not thread.is_alive()


def _supported(path: Path) -> bool:
    try:
        detect_kind(path)
    except InputError:
        return False  # empty, or not a kind Quire reads (an image): refused, not a document
    return True


def folder_files(root: Path) -> dict[str, str]:
    """What the library should hold: relative path → sha256 (ignored and refused files out)."""
    spec = ignore_spec(root)
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not is_ignored(spec, rel) and _supported(path):
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def library(db: Database, root: Path) -> dict[str, dict[str, Any]]:
    """This folder's documents: relative path → id, sha256, status, error."""
    prefix = f"folder:{root}/"
    with db.read() as conn:
        rows = conn.execute(
            text(
                "SELECT id, source_key, sha256, status, error FROM documents "
                "WHERE substr(source_key, 1, :n) = :p"
            ),
            {"n": len(prefix), "p": prefix},
        ).all()
    return {
        r.source_key[len(prefix) :]: {
            "id": r.id,
            "sha256": r.sha256,
            "status": r.status,
            "error": r.error,
        }
        for r in rows
    }


def visible(db: Database, root: Path) -> dict[str, str]:
    return {rel: d["sha256"] for rel, d in library(db, root).items() if d["status"] == "ready"}


def settle(
    worker: Worker,
    check: Callable[[], bool],
    *,
    timeout: float = 15.0,
) -> None:
    """Drain the queue with the real worker until ``check()`` holds (bounded in time)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        worker.run(drain=True)
        if check():
            worker.run(drain=True)
            if check():
                return
        time.sleep(0.1)
    raise AssertionError(f"the library did not catch up with the folder in time: {check}")


def matches(db: Database, root: Path) -> Callable[[], bool]:
    """The ready documents are exactly the folder's files, byte for byte, each once."""

    class Check:
        def __call__(self) -> bool:
            docs = library(db, root)
            pending = any(d["status"] in ("queued", "processing") for d in docs.values())
            return not pending and visible(db, root) == folder_files(root)

        def __repr__(self) -> str:
            return f"library {library(db, root)} vs folder {folder_files(root)}"

    return Check()
