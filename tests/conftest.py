"""Shared fixtures: settings around a temp data dir, a migrated database, an API client; and
the suite's tiers (markers set by path) and its grouping for pytest-xdist (docs/testing.md)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from quire.config import Settings
from quire.storage.db import Database
from quire.storage.migrate import open_database
from tests.pg import PgServer
from tests.runtime import make_app, migrated_template, seed_sqlite, share_vectors, shared_root
from tests.tiers import HeaviestFirst, group_for_xdist, mark_tiers

# The API warms search up in the background when it starts (QUIRE_WARM_UP): a search that a
# test did not ask for, racing its own. Off for the suite, and for the processes it starts;
# tests/api/test_health.py turns it on.
os.environ["QUIRE_WARM_UP"] = "0"

REPO = Path(__file__).resolve().parents[1]
# CI clones the repo next to a copy of shared/: always resolve it as <repo>/../shared.
SHARED = REPO.parent / "shared"
DOCS = SHARED / "data" / "docs"
SCIFACT = SHARED / "data" / "ir" / "scifact"


@pytest.hookimpl(tryfirst=True)  # before -m deselects and xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    mark_tiers(items)
    group_for_xdist(items, suffix_nodeids=bool(getattr(config.option, "loadgroup", False)))


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> HeaviestFirst | None:
    """``--dist loadgroup`` (the Makefile's) hands out the heaviest groups first."""
    if config.getvalue("dist") != "loadgroup":
        return None
    return HeaviestFirst(config, log)  # type: ignore[arg-type]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A module or test marked ``both_backends`` runs once on SQLite and once on PostgreSQL
    (every fixture built on ``settings`` follows it); ``sqlite_only`` opts a test of SQLite's
    own machinery (FTS5 internals, the vec0 mirror) out of a marked module."""
    marked = metafunc.definition.get_closest_marker
    if "backend" in metafunc.fixturenames and marked("both_backends") and not marked("sqlite_only"):
        # Module scope: a module's shared fixtures (an ingested library) are built once per
        # backend, not once per test.
        metafunc.parametrize("backend", ["sqlite", "postgresql"], indirect=True, scope="module")


@pytest.fixture(scope="module")
def backend(request: pytest.FixtureRequest) -> str:
    return str(getattr(request, "param", "sqlite"))


@pytest.fixture(scope="session")
def pg_server(worker_id: str) -> Iterator[PgServer]:
    """A real PostgreSQL server (with pgvector and pg_trgm) for the session, and a template
    database migrated once that each test's database is copied from. One per xdist worker,
    in a directory of its own under /tmp: its socket path stays short, and its files are
    owned by the server's system user, outside pytest's per-worker temporary roots."""
    directory = Path(tempfile.mkdtemp(prefix=f"quire-pg-{worker_id}-"))
    try:
        server = PgServer.start(directory / "pg")
        yield server
        server.stop()
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _backend_database(request: pytest.FixtureRequest, backend: str) -> Iterator[str | None]:
    """A fresh migrated PostgreSQL database (dropped after), or None on SQLite."""
    if backend != "postgresql":
        yield None
        return
    server: PgServer = request.getfixturevalue("pg_server")
    url = server.create_database()
    yield url
    server.drop_database(url)


@pytest.fixture(scope="module")
def module_database_url(request: pytest.FixtureRequest, backend: str) -> Iterator[str | None]:
    """A PostgreSQL database shared by a module's tests (on the postgresql backend)."""
    yield from _backend_database(request, backend)


@pytest.fixture
def database_url(backend: str, request: pytest.FixtureRequest) -> Iterator[str | None]:
    """A fresh migrated PostgreSQL database for this test, or None on SQLite."""
    yield from _backend_database(request, backend)


@pytest.fixture(scope="session", autouse=True)
def stored_vectors(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The shared embedder's vectors kept in one file for all of the run's processes
    (tests/runtime.py, docs/testing.md)."""
    share_vectors(shared_root(tmp_path_factory) / "vectors.db")


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite library migrated once per session; each test's library is a copy of it."""
    return migrated_template(tmp_path_factory.mktemp("sqlite-template") / "data")


@pytest.fixture
def settings(tmp_path: Path, database_url: str | None, sqlite_template: Path) -> Settings:
    built = Settings(
        data_dir=tmp_path / "data", max_upload_mb=5, ocr_dpi=200, database_url=database_url
    )
    if database_url is None:
        seed_sqlite(sqlite_template, built.data_dir)
    return built


@pytest.fixture
def db(settings: Settings, sqlite_template: Path) -> Iterator[Database]:
    if settings.database_url is None:  # also for a module's own ``settings``
        seed_sqlite(sqlite_template, settings.data_dir)
    database = open_database(settings)
    yield database
    database.dispose()


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(make_app(settings)) as c:
        yield c
