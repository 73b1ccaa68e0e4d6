"""Ingested libraries built once and copied: every module that reads the same documents gets
its own copy of one ingest (docs/testing.md).

Ingesting costs seconds a document (extraction, OCR, embedding); copying a library costs
milliseconds. A copy is the library the module would have built itself — the same files
uploaded through the API in the same order, drained by a real worker — and it is the module's
own: what a test writes (conversations, feedback) reaches no other module.

- SQLite: built once per run, shared by the xdist workers (a file lock; the first worker to
  need it builds it), copied as files.
- PostgreSQL: built once per worker on its own server, copied as ``CREATE DATABASE ...
  TEMPLATE``, with its data directory (the originals) copied as files.
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from quire.config import Settings
from tests.api.library import load_library
from tests.pg import PgServer
from tests.runtime import make_app, shared_root

READY = "ready"  # written into a built library's folder, last
#: A copy's documents point at its own originals (deleting one removes the copy's file only).
REHOME = (
    "UPDATE documents SET stored_path = CAST(? AS TEXT) || substr(stored_path, length(?) + 1) "
    "WHERE substr(stored_path, 1, length(?)) = ?"
)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _key(paths: Sequence[Path]) -> str:
    return hashlib.sha256("\n".join(str(p) for p in paths).encode()).hexdigest()[:12]


def _build(data_dir: Path, paths: Sequence[Path], database_url: str | None) -> None:
    """Upload ``paths`` through the API and drain the queue (tests/api/library.py)."""
    settings = Settings(data_dir=data_dir, llm_backends="none", database_url=database_url)
    with TestClient(make_app(settings)) as client:
        load_library(client, settings, paths)


def _sqlite_library(factory: pytest.TempPathFactory, paths: Sequence[Path]) -> Path:
    folder = shared_root(factory) / f"library-{_key(paths)}"
    with _locked(folder.with_suffix(".lock")):
        if not (folder / READY).exists():
            shutil.rmtree(folder, ignore_errors=True)  # a build that died half-way
            _build(folder / "data", paths, None)
            (folder / READY).touch()
    return folder / "data"


_PG_BUILT: dict[tuple[int, str], tuple[str, Path]] = {}  # (server, key) -> (database, data)


def _pg_library(
    factory: pytest.TempPathFactory, server: PgServer, paths: Sequence[Path]
) -> tuple[str, Path]:
    key = (id(server), _key(paths))
    if key not in _PG_BUILT:
        url = server.create_database()
        data = factory.mktemp(f"pg-library-{key[1]}") / "data"
        _build(data, paths, url)
        _PG_BUILT[key] = (PgServer.database_of(url), data)
    return _PG_BUILT[key]


def _rehome(source: Path, target: Path) -> tuple[str, str, str, str]:
    old = f"{source}/"
    return (f"{target}/", old, old, old)


def library_copy(
    request: pytest.FixtureRequest, backend: str, paths: Sequence[Path], **settings: Any
) -> Iterator[Settings]:
    """Settings on a private copy of the library of ``paths`` (uploaded in that order) on
    ``backend``; ``settings`` are the module's own (llm_backends, ...). For a fixture:
    ``yield from library_copy(...)``; the copy is dropped after."""
    factory: pytest.TempPathFactory = request.getfixturevalue("tmp_path_factory")
    target = factory.mktemp("library") / "data"
    if backend != "postgresql":
        source = _sqlite_library(factory, paths)
        shutil.copytree(source, target)
        with sqlite3.connect(target / "quire.db") as conn:
            conn.execute(REHOME, _rehome(source, target))
        conn.close()
        yield Settings(data_dir=target, **settings)
        return
    server: PgServer = request.getfixturevalue("pg_server")
    database, source = _pg_library(factory, server, paths)
    shutil.copytree(source, target)
    url = server.create_database(template=database)
    try:
        server.execute(url, REHOME.replace("?", "%s"), _rehome(source, target))
        yield Settings(data_dir=target, database_url=url, **settings)
    finally:
        server.drop_database(url)
