"""``quire migrate-to-postgres``: an existing SQLite library copied into an empty PostgreSQL
one, ids kept (citations, conversations and links stay valid), vectors included, BM25 rows
built from the same text, and every count checked after.

The originals are not copied: their rows keep their paths, and a machine finds each file by
its content address in ``QUIRE_ORIGINALS_DIR`` (point it at the old ``<data dir>/files``, or
copy that directory to the shared store).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import Connection, Table, func, insert, select, text

from quire.errors import Conflict, InputError
from quire.storage import vectors
from quire.storage.db import Database, dialect
from quire.storage.schema import (
    api_tokens,
    chat_feedback,
    conversations,
    documents,
    ingest_jobs,
    messages,
    notes,
    page_chunks,
    pages,
    source_runs,
    users,
)

#: In foreign-key order.
TABLES: tuple[Table, ...] = (
    users,
    api_tokens,
    documents,
    pages,
    page_chunks,
    ingest_jobs,
    conversations,
    messages,
    chat_feedback,
    notes,
    source_runs,
)
BATCH = 2_000

#: (what, done, total) as the copy goes.
Progress = Callable[[str, int, int], None]


@dataclass
class Transferred:
    #: Per table (and "vectors"): rows in SQLite, rows in PostgreSQL.
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return all(a == b for a, b in self.counts.values())


def copy_library(src: Database, dst: Database, progress: Progress | None = None) -> Transferred:
    """Copy every row of ``src`` (SQLite) into ``dst`` (PostgreSQL, migrated and empty)."""
    if src.name != "sqlite" or dst.name != "postgresql":
        raise InputError("copy from a SQLite library into a PostgreSQL one")
    report = progress or (lambda *_: None)
    t0 = time.monotonic()
    with dst.read() as conn:
        held = sum(_count(conn, t) for t in (documents, conversations))
    if held:
        raise Conflict(
            f"the PostgreSQL library already holds {held} documents or conversations: "
            "migrate into an empty database"
        )
    out = Transferred()
    with src.read() as conn:
        meta = vectors.read_meta(conn)
    if meta is not None:
        with dst.write() as conn:
            vectors.ensure(conn, meta.model, meta.dim)
    # The costly indexes are built once at the end (storage/backends/pg_bulk.py).
    with dst.bulk_load(progress=report):
        for table in TABLES:
            out.counts[table.name] = _copy_table(src, dst, table, report)
        out.counts["vectors"] = _copy_vectors(src, dst, meta, report)
    dst.settle()
    with dst.read() as conn:
        indexed = int(
            conn.execute(text("SELECT coalesce(sum(rows), 0) FROM bm25_totals")).scalar_one()
        )
    out.counts["bm25 rows"] = (out.counts["page_chunks"][0], indexed)
    out.seconds = time.monotonic() - t0
    return out


def _count(conn: Connection, table: Table) -> int:
    return int(conn.execute(select(func.count()).select_from(table)).scalar_one())


Rows = Sequence[Any]  # result rows (sqlalchemy Row), first column the id


def _batches(src: Database, read: Callable[[Connection, int], Rows]) -> Iterator[Rows]:
    """The rows of ``src`` in id order, BATCH at a time: ``read(conn, last)`` gives those
    after id ``last`` (the first column is the id), each batch in a read of its own."""
    last = 0
    while True:
        with src.read() as conn:
            rows = read(conn, last)
        if not rows:
            return
        yield rows
        last = int(rows[-1][0])


def _copy_table(src: Database, dst: Database, table: Table, report: Progress) -> tuple[int, int]:
    columns = [c for c in table.columns if c.computed is None]
    with src.read() as conn:
        total = _count(conn, table)
    done = 0
    report(table.name, 0, total)

    def read(conn: Connection, last: int) -> Rows:
        query = select(*columns).where(table.c.id > last).order_by(table.c.id).limit(BATCH)
        return conn.execute(query).all()

    for rows in _batches(src, read):
        values = [{c.key: r[i] for i, c in enumerate(columns)} for r in rows]
        with dst.write() as conn:
            conn.execute(insert(table), values)
            if table is page_chunks:
                dialect(conn).index_text(conn, [int(r.id) for r in rows])
        done += len(rows)
        report(table.name, done, total)
    with dst.write() as conn:
        # The next id PostgreSQL hands out follows the copied ones.
        conn.execute(
            text(
                f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
                f"coalesce((SELECT max(id) FROM {table.name}), 0) + 1, false)"
            )
        )
        copied = _count(conn, table)
    return total, copied


def _copy_vectors(
    src: Database, dst: Database, meta: vectors.VecMeta | None, report: Progress
) -> tuple[int, int]:
    if meta is None:
        return 0, 0
    with src.read() as conn:
        total = vectors.count(conn)
    done = 0
    report("vectors", 0, total)

    def read(conn: Connection, last: int) -> Rows:
        return conn.execute(
            text(
                "SELECT rowid, embedding FROM vec.page_vecs WHERE rowid > :last "
                "ORDER BY rowid LIMIT :n"
            ),
            {"last": last, "n": BATCH},
        ).all()

    for rows in _batches(src, read):
        ids = [int(r[0]) for r in rows]
        matrix = np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
        with dst.write() as conn:
            vectors.add(conn, meta.model, ids, matrix)
        done += len(rows)
        report("vectors", done, total)
    with dst.write() as conn:
        if meta.state == "ready":
            vectors.mark_ready(conn, meta.model)
        copied = vectors.count(conn)
    return total, copied
