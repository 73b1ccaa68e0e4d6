"""A small library ingested once per module: the shared PDFs, EPUBs and Perplexity thread."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from sqlalchemy import text

from quire.config import Settings
from quire.embed import make_embedder
from quire.embed.base import Embedder
from quire.ingest.intake import add_file
from quire.retrieval.search import Searcher
from quire.storage.db import Database
from quire.storage.migrate import open_database
from tests.conftest import DOCS
from tests.retrieval.cross_encoder import fp32, models  # noqa: F401 - shared fixtures
from tests.runtime import drain

LIBRARY = [
    DOCS / "epub" / "alice-epub3.epub",
    DOCS / "epub" / "readium-smoketest-epub2.epub",
    DOCS / "pdf" / "dmca-summary.pdf",
    DOCS / "perplexity" / "pnw-states-multiturn.md",
]


def ingest_library(
    root: Path, paths: Sequence[Path], database_url: str | None = None
) -> tuple[Settings, Database]:
    """A library under ``root`` (in PostgreSQL at ``database_url`` when given) holding
    ``paths``, ingested by a real worker."""
    settings = Settings(data_dir=root / "data", database_url=database_url)
    db = open_database(settings)
    for path in paths:
        add_file(db, settings.files_dir, path, path.name, max_bytes=10**9)
    drain(settings, db=db)
    return settings, db


@pytest.fixture(scope="module")
def library(
    tmp_path_factory: pytest.TempPathFactory, module_database_url: str | None
) -> Iterator[tuple[Settings, Database]]:
    settings, db = ingest_library(tmp_path_factory.mktemp("lib"), LIBRARY, module_database_url)
    yield settings, db
    db.dispose()


@pytest.fixture(scope="module")
def embedder(library: tuple[Settings, Database]) -> Iterator[Embedder]:
    emb = make_embedder(library[0])
    yield emb
    emb.close()


@pytest.fixture
def searcher(library: tuple[Settings, Database], embedder: Embedder) -> Iterator[Searcher]:
    settings, db = library
    s = Searcher(db, settings, embedder)
    yield s
    s.close()


def doc_id(db: Database, filename: str) -> int:
    with db.read() as conn:
        return int(
            conn.execute(
                text("SELECT id FROM documents WHERE filename = :f"), {"f": Path(filename).name}
            ).scalar_one()
        )
