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

REPO = Path(__file__).resolve().parents[1]
# CI clones the repo next to a copy of shared/: always resolve it as <repo>/../shared.
SHARED = REPO.parent / "shared"
DOCS = SHARED / "data" / "docs"
SCIFACT = SHARED / "data" / "ir" / "scifact"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data", max_upload_mb=5, ocr_dpi=200)


@pytest.fixture
def db(settings: Settings) -> Iterator[Database]:
    database = open_database(settings)
    yield database
    database.dispose()


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as c:
        yield c
