"""Shared fixtures: settings around a temp data dir, a migrated database, an API client."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from quire.app import create_app
from quire.config import Settings
from quire.storage.db import Database
from quire.storage.migrate import open_database
from tests.pg import PgServer

REPO = Path(__file__).resolve().parents[1]
# CI clones the repo next to a copy of shared/: always resolve it as <repo>/../shared.
SHARED = REPO.parent / "shared"
DOCS = SHARED / "data" / "docs"
SCIFACT = SHARED / "data" / "ir" / "scifact"


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
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PgServer]:
    """A real PostgreSQL server (with pgvector and pg_trgm) for the session, and a template
    database migrated once that each test's database is copied from."""
    server = PgServer.start(tmp_path_factory.mktemp("pg"))
    yield server
    server.stop()


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


@pytest.fixture
def settings(tmp_path: Path, database_url: str | None) -> Settings:
    return Settings(
        data_dir=tmp_path / "data", max_upload_mb=5, ocr_dpi=200, database_url=database_url
    )


@pytest.fixture
def db(settings: Settings) -> Iterator[Database]:
    database = open_database(settings)
    yield database
    database.dispose()


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as c:
        yield c
