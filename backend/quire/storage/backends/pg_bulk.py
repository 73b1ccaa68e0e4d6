"""Bulk loads into a PostgreSQL library (``quire migrate-to-postgres``, the 1M benchmark).

Three indexes cost most of a load when they are kept up row by row: pgvector's HNSW graph
(each vector inserted searches the graph), the trigram GIN index of the exact leg, and the
BM25 postings' primary key (term first, so every chunk's postings land all over it). At 100k
chunks a load through the storage layer took 1,599 s with them in place. ``loading`` drops
them and builds each once at the end, sorted and in memory (``maintenance_work_mem``), which
is how PostgreSQL and pgvector advise loading.

A load that dies half-way leaves them missing: ``repair`` builds any that are, and opening a
library calls it, so the next process to open the library repairs it (and says so in its
log). SQLite has nothing of the kind (backends/sqlite.py).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from quire.storage.backends.base import BulkProgress, Database

log = logging.getLogger(__name__)

#: pgvector's HNSW index for cosine distance (migration 0013).
HNSW_INDEX_SQL = (
    "CREATE INDEX IF NOT EXISTS ix_page_vecs_hnsw ON vec.page_vecs "
    "USING hnsw (embedding vector_cosine_ops)"
)


@dataclass(frozen=True)
class BulkIndex:
    name: str  # as to_regclass finds it
    table: str  # the index exists only where its table does
    drop: str
    create: str


INDEXES: tuple[BulkIndex, ...] = (
    BulkIndex(
        "bm25_postings_pkey",
        "bm25_postings",
        "ALTER TABLE bm25_postings DROP CONSTRAINT IF EXISTS bm25_postings_pkey",
        # As migration 0015 left it.
        "ALTER TABLE bm25_postings ADD CONSTRAINT bm25_postings_pkey "
        "PRIMARY KEY (term, chunk_id) INCLUDE (tf_text, tf_heading, len)",
    ),
    BulkIndex(
        "ix_page_chunks_trgm",
        "page_chunks",
        "DROP INDEX IF EXISTS ix_page_chunks_trgm",
        # As migration 0013 made it.
        "CREATE INDEX IF NOT EXISTS ix_page_chunks_trgm ON page_chunks "
        "USING gin (lower(text) gin_trgm_ops)",
    ),
    BulkIndex(
        "vec.ix_page_vecs_hnsw",
        "vec.page_vecs",
        "DROP INDEX IF EXISTS vec.ix_page_vecs_hnsw",
        HNSW_INDEX_SQL,
    ),
)

#: Memory for building one index (PostgreSQL's default, 64 MB, makes the HNSW build spill to
#: disk after ~30k vectors; the graph of 1M 384-d vectors needs ~2 GB).
BUILD_MEMORY = "2GB"


def missing(db: Database) -> list[BulkIndex]:
    """The bulk-load indexes that are absent (on tables that exist)."""
    with db.read() as conn:
        return [
            ix
            for ix in INDEXES
            if conn.exec_driver_sql(
                f"SELECT to_regclass('{ix.table}') IS NOT NULL AND to_regclass('{ix.name}') IS NULL"
            ).scalar_one()
        ]


def repair(db: Database) -> None:
    """Build what an interrupted bulk load left dropped, saying so."""
    if missing(db):
        log.warning("indexes missing after an interrupted bulk load: building them now")
        restore(db)


def restore(db: Database, memory: str = BUILD_MEMORY, progress: BulkProgress | None = None) -> int:
    """Build the bulk-load indexes that are missing; returns how many were built."""
    todo = missing(db)
    report = progress or (lambda *_: None)
    for i, ix in enumerate(todo):
        report(ix.name, i, len(todo))
        t0 = time.monotonic()
        with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql(f"SET maintenance_work_mem = '{memory}'")
            conn.exec_driver_sql(ix.create)
        log.info("built index %s in %.0f s", ix.name, time.monotonic() - t0)
    if todo:
        report("indexes", len(todo), len(todo))
    return len(todo)


@contextmanager
def loading(
    db: Database, memory: str = BUILD_MEMORY, progress: BulkProgress | None = None
) -> Iterator[None]:
    """Drop the bulk-load indexes for the block, then build them (also after an error: the
    library stays searchable, only slower to load)."""
    with db.write() as conn:
        for ix in INDEXES:
            if conn.exec_driver_sql(f"SELECT to_regclass('{ix.table}')").scalar() is not None:
                conn.exec_driver_sql(ix.drop)
    try:
        yield
    finally:
        restore(db, memory, progress)
