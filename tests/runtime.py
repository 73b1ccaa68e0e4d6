"""The runtime's heavy parts built once per test process and injected, and SQLite libraries
copied from a template migrated once (docs/testing.md).

Loading the ONNX embedder takes about half a second and running the 16 migrations on a blank
file a quarter; the suite opens a few hundred apps, workers and databases. Every test still gets
its own database files and its own app; only the read-only model is shared."""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi import FastAPI

from quire.app import create_app
from quire.config import Settings
from quire.embed.base import Embedder
from quire.embed.cached import Remembering
from quire.ingest.worker import Worker
from quire.storage.db import Database
from quire.storage.migrate import open_database

#: The files a migrated SQLite library starts with.
SQLITE_FILES = ("quire.db", "quire_vecs.db")


#: Texts whose vectors the shared embedder keeps (~1.5 kB each); past it, the oldest go.
MEMO_TEXTS = 100_000


class StoredVectors:
    """``inner`` with a file of every vector that any process of the run has computed: the
    three xdist workers, and a module's SQLite and PostgreSQL halves (which may run on two of
    them), ingest the same documents. A text is looked up by its SHA-256; the vector is stored
    as its float32 bytes, so what comes back is bit for bit what the model returned. SQLite in
    WAL mode (readers never wait; a writer waits for the other writers). It sits behind
    ``SharedEmbedder``'s memory, which asks it only for texts it has not seen, each once, and
    never for none."""

    def __init__(self, inner: Embedder, path: Path) -> None:
        self.inner = inner
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, timeout=120, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS vectors (digest BLOB PRIMARY KEY, vector BLOB NOT NULL)"
        )
        self._db.commit()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        digests = [hashlib.sha256(t.encode()).digest() for t in texts]
        found: dict[bytes, np.ndarray] = {}
        with self._lock:
            for i in range(0, len(digests), 500):
                part = digests[i : i + 500]
                marks = ",".join("?" * len(part))
                for digest, blob in self._db.execute(
                    f"SELECT digest, vector FROM vectors WHERE digest IN ({marks})", part
                ):
                    found[digest] = np.frombuffer(blob, dtype=np.float32)
        missing = [k for k, d in enumerate(digests) if d not in found]
        if missing:
            fresh = self.inner.embed([texts[k] for k in missing])
            rows = [
                (digests[k], v.astype(np.float32).tobytes())
                for k, v in zip(missing, fresh, strict=True)
            ]
            with self._lock, self._db:
                self._db.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?)", rows)
            for k, v in zip(missing, fresh, strict=True):
                found[digests[k]] = v
        return np.stack([found[d] for d in digests]).astype(np.float32, copy=False)

    def close(self) -> None:
        with self._lock:
            self._db.close()


class SharedEmbedder(Remembering):
    """The packaged MiniLM shared by a test process's apps and workers.

    ``close`` does nothing: the app or worker that is handed it closes what it holds, and the
    model outlives each of them. ``embed`` remembers each text's vector (embed/cached.py): the
    same documents are ingested by many modules (Alice, the DMCA summary) and the model is a
    pure function of the text — a text's vector is bit for bit the same alone or in any batch
    (ONNX Runtime, one thread; tests/test_shared_models.py checks it) — so a text is run
    through the model once per process. What the callers see, vectors and their order, is
    unchanged."""

    def __init__(self, inner: Embedder, stored: Path | None = None) -> None:
        super().__init__(StoredVectors(inner, stored) if stored else inner, size=MEMO_TEXTS)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def shared_root(factory: pytest.TempPathFactory) -> Path:
    """The run's temporary root, the same for every xdist worker (each has its own below)."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


#: The run's file of vectors (``share_vectors``), shared by its processes.
_stored: list[Path] = []


def share_vectors(path: Path) -> None:
    """Keep the shared embedder's vectors in ``path`` too, for the run's other processes
    (called once per process, before the first test)."""
    _stored[:] = [path]


@functools.cache
def _default_embedder() -> SharedEmbedder:
    from quire.embed import make_embedder

    return SharedEmbedder(make_embedder(Settings()), _stored[0] if _stored else None)


def _default_models(settings: Settings) -> bool:
    """Whether ``settings`` ask for the packaged MiniLM as the default settings load it."""
    default = Settings()
    return (
        settings.embedder == default.embedder == "local"
        and settings.embed_model_dir is None
        and settings.embed_threads == default.embed_threads
        and settings.embed_batch == default.embed_batch
    )


def shared_embedder(settings: Settings) -> Embedder | None:
    """The process's packaged MiniLM when ``settings`` would load exactly that, else None (the
    app or worker then builds what the settings name, as in production)."""
    return _default_embedder() if _default_models(settings) else None


def make_app(settings: Settings) -> FastAPI:
    """``create_app(settings)`` with the shared embedder injected when the settings allow."""
    return create_app(settings, embedder=shared_embedder(settings))


def make_worker(settings: Settings, db: Database | None = None) -> Worker:
    """``Worker(settings, db)`` with the shared embedder injected when the settings allow."""
    return Worker(settings, db, shared_embedder(settings))


def drain(settings: Settings, db: Database | None = None) -> int:
    """Run every queued ingest job with a real (in-process) worker; returns how many ran."""
    worker = make_worker(settings, db)
    try:
        return worker.run(drain=True)
    finally:
        worker.close()


def migrated_template(directory: Path) -> Path:
    """A SQLite library migrated to head in ``directory`` (done once per session)."""
    db = open_database(Settings(data_dir=directory))
    db.dispose()
    for leftover in directory.glob("*.lock"):
        leftover.unlink()
    return directory


def seed_sqlite(template: Path, data_dir: Path) -> None:
    """Copy the migrated template's files into ``data_dir`` (no-op if it holds a library): the
    library then opens at head without running a migration."""
    if (data_dir / "quire.db").exists():
        return
    data_dir.mkdir(parents=True, exist_ok=True)
    for name in SQLITE_FILES:
        shutil.copy(template / name, data_dir / name)
