"""The embedded library: SQLite through sqlean (SQLite with extension loading), sqlite-vec
loaded on every connection.

One writer, many readers: WAL, a busy timeout, ``BEGIN IMMEDIATE`` for write transactions,
and short transactions only (no lock is held across OCR or embedding). The vector store lives
in a second file attached as schema ``vec`` (a vec0 table, rowid = chunk id) so that it can be
dropped and rebuilt from the main file. FTS5's triggers index a chunk's text as it is written.
"""

from __future__ import annotations

import fcntl
import json
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import sqlean
import sqlite_vec
from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.pool import QueuePool

from quire.storage.backends import fts5
from quire.storage.backends.base import Averages, BulkProgress

BUSY_TIMEOUT_MS = 30_000
# Over vec0's own rowid table, a plain B-tree (15x faster than scanning the vec0 table: 4 vs
# 62 ms at 100k, once after each commit to the vector file); the same rows.
_SIGNATURE_SQL = (
    "SELECT count(*), coalesce(max(rowid), 0), coalesce(sum(rowid), 0) FROM vec.{table}"
)
_ROWIDS_TABLE = "page_vecs_rowids"


def _quote(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def json_ids(ids: Iterable[int]) -> str:
    """A JSON array of integer ids, bound as one parameter and read with ``json_each``."""
    return "[" + ",".join(str(int(i)) for i in ids) + "]"


class SqliteDialect:
    name = "sqlite"
    # CROSS JOIN keeps a short list of chunk ids as the outer loop: without table statistics
    # SQLite would walk every ready document's chunks instead.
    join_by_ids = "CROSS JOIN"
    skip_locked = ""  # BEGIN IMMEDIATE: one writer at a time already
    json_object = "json_object"
    vector_key = "rowid"

    def in_ids(self, column: str, name: str) -> str:
        return f"{column} IN (SELECT value FROM json_each(:{name}))"

    def id_list(self, ids: Iterable[int]) -> str:
        return json_ids(ids)

    def in_strings(self, column: str, name: str) -> str:
        return f"{column} IN (SELECT value FROM json_each(:{name}))"

    def string_list(self, values: Iterable[str]) -> str:
        return json.dumps(list(values))

    def in_pairs(
        self, columns: tuple[str, str], pairs: Sequence[tuple[int, int]]
    ) -> tuple[str, dict[str, Any]]:
        a, b = columns
        return (
            f"({a}, {b}) IN (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') "
            "FROM json_each(:pairs))",
            {"pairs": json.dumps([list(p) for p in pairs])},
        )

    def json_text(self, column: str, *path: str) -> str:
        return f"json_extract({column}, '$.{'.'.join(path)}')"

    def json_array_elements(self, alias: str, column: str, *path: str) -> str:
        if not path:
            return f"json_each({column}) {alias}"
        return f"json_each({column}, '$.{'.'.join(path)}') {alias}"

    def json_set(self, column: str, values: Mapping[tuple[str, ...], str]) -> str:
        pairs = ", ".join(f"'$.{'.'.join(path)}', {expr}" for path, expr in values.items())
        return f"json_set({column}, {pairs})"

    def serialize(self, conn: Connection, key: str) -> None:
        return None  # a write transaction holds SQLite's one write lock from its start

    def index_text(self, conn: Connection, chunk_ids: Sequence[int]) -> bool:
        return False  # FTS5's triggers index a chunk as it is written (and 0009's trigger
        # forgets the stored entries when a chunk changes in place)

    def lexical_averages(self, conn: Connection) -> Averages:
        return fts5.averages(conn)

    def entry_bodies(self, conn: Connection, stems: list[str]) -> list[tuple[str, int, bytes]]:
        rows = conn.execute(
            text(
                f"SELECT term, upto, body FROM term_postings WHERE {self.in_strings('term', 's')}"
            ),
            {"s": self.string_list(stems)},
        )
        return [(str(t), int(u), bytes(b)) for t, u, b in rows]

    def vector_tables(self, conn: Connection) -> int:
        return int(
            conn.exec_driver_sql(
                "SELECT count(*) FROM vec.sqlite_master "
                "WHERE name IN ('page_vecs', 'page_vecs_meta')"
            ).scalar_one()
        )

    def create_vectors(self, conn: Connection, dim: int) -> None:
        conn.exec_driver_sql(
            "CREATE TABLE IF NOT EXISTS vec.page_vecs_meta ("
            "id INTEGER PRIMARY KEY CHECK (id = 1), model TEXT NOT NULL, dim INTEGER NOT NULL, "
            "state TEXT NOT NULL CHECK (state IN ('ready','rebuilding')), "
            "created_at DATETIME NOT NULL)"
        )
        conn.exec_driver_sql(
            "CREATE VIRTUAL TABLE IF NOT EXISTS vec.page_vecs "
            f"USING vec0(embedding float[{int(dim)}])"
        )

    def put_vectors(
        self, conn: Connection, rows: Sequence[tuple[int, npt.NDArray[np.float32]]]
    ) -> None:
        if not rows:
            return
        # vec0 has no upsert: the old rows go first.
        conn.execute(
            text(f"DELETE FROM vec.page_vecs WHERE {self.in_ids('rowid', 'ids')}"),
            {"ids": self.id_list(cid for cid, _ in rows)},
        )
        conn.execute(
            text("INSERT INTO vec.page_vecs(rowid, embedding) VALUES (:id, :v)"),
            [
                {"id": cid, "v": np.ascontiguousarray(vec, dtype=np.float32).tobytes()}
                for cid, vec in rows
            ],
        )


DIALECT = SqliteDialect()


class SqliteDatabase:
    """The main file with the vector file attached; ``write()`` and ``read()`` open
    transactions."""

    name = "sqlite"
    dialect = DIALECT

    def __init__(self, db_path: Path, vec_path: Path, *, pool_size: int = 8) -> None:
        db_path.parent.mkdir(parents=True, exist_ok=True)
        self.db_path = db_path
        self.vec_path = vec_path
        self.engine: Engine = create_engine(
            f"sqlite:///{db_path}",
            module=sqlean,
            poolclass=QueuePool,
            pool_size=pool_size,
            max_overflow=pool_size,
            connect_args={"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000},
        )
        event.listen(self.engine, "connect", self._on_connect)
        event.listen(self.engine, "begin", self._on_begin)

    def _on_connect(self, dbapi_conn: Any, _record: Any) -> None:
        # Autocommit at the driver level: SQLAlchemy's "begin" event below emits BEGIN itself,
        # so that write transactions can take the write lock up front (BEGIN IMMEDIATE).
        dbapi_conn.isolation_level = None
        dbapi_conn.enable_load_extension(True)
        sqlite_vec.load(dbapi_conn)
        dbapi_conn.enable_load_extension(False)
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        cur.execute("PRAGMA journal_mode = WAL")
        cur.execute("PRAGMA synchronous = NORMAL")
        cur.execute("PRAGMA foreign_keys = ON")
        cur.execute(f"ATTACH DATABASE {_quote(self.vec_path)} AS vec")
        cur.execute("PRAGMA vec.journal_mode = WAL")
        cur.execute("PRAGMA vec.synchronous = NORMAL")
        cur.close()

    @staticmethod
    def _on_begin(conn: Connection) -> None:
        immediate = conn.get_execution_options().get("write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """A short write transaction holding the write lock from its start; commits on exit."""
        with self.engine.connect().execution_options(write=True) as conn, conn.begin():
            yield conn

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A read transaction: one consistent snapshot of both files."""
        with self.engine.connect() as conn, conn.begin():
            yield conn

    def dispose(self) -> None:
        self.engine.dispose()

    @contextmanager
    def migration_lock(self) -> Iterator[None]:
        """A lock file beside the database (two processes starting together on a fresh
        library would both apply 0001 and clash)."""
        with open(self.db_path.with_name(self.db_path.name + ".migrate.lock"), "a+b") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def repair(self) -> None:
        return None  # no bulk load drops anything on SQLite

    @contextmanager
    def bulk_load(
        self, memory: str | None = None, progress: BulkProgress | None = None
    ) -> Iterator[None]:
        yield  # FTS5 and vec0 are as fast to keep up as to build

    def settle(self) -> None:
        return None

    @contextmanager
    def postings(self) -> Iterator[fts5.Fts5Source]:
        """FTS5's index in one read snapshot (a writer commits whole chunks)."""
        with self.read() as conn:
            yield fts5.Fts5Source(conn)

    def describe(self) -> str:
        with self.read() as conn:
            v = conn.exec_driver_sql("SELECT sqlite_version(), vec_version()").one()
        return f"SQLite {v[0]}, sqlite-vec {v[1]}"


class DataVersion:
    """O(1) change detection for the in-memory copies that searches keep (the dense mirror, the
    BM25 term cache): the ``data_version`` of one attached schema (``main``, ``vec``).

    ``PRAGMA data_version`` moves when another connection commits to a database file; its
    values compare only on one connection, so a dedicated idle connection watches the file.
    Read it before the searching connection's first statement: the snapshot that connection
    then sees is at least as new as the version, so a copy built from it and tagged with the
    version is never stale."""

    def __init__(self, schema: str) -> None:
        self.schema = schema
        self._lock = threading.Lock()
        self._conn: Any = None

    def read(self, conn: Connection) -> int:
        """The file's current version, or -1 on first use (which no later read equals)."""
        with self._lock:
            if self._conn is None:
                # Finding the file may start ``conn``'s snapshot before the version is read:
                # -1 makes the caller look again on its next search.
                files = conn.exec_driver_sql("PRAGMA database_list").all()
                path = next(r[2] for r in files if r[1] == self.schema)
                self._conn = sqlean.connect(path, check_same_thread=False)
                return -1
            return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


@dataclass(frozen=True)
class VectorSignature:
    """What says whether ``vec.page_vecs`` changed: its model and creation time, and the
    count, largest and sum of its rowids (chunk ids are never reused)."""

    model: str
    count: int
    max_id: int
    sum_id: int


def vector_signature(conn: Connection) -> VectorSignature | None:
    """The vector table's signature, read from vec0's rowid shadow table (``page_vecs_rowids``,
    a plain table with the same rows) rather than by scanning the vec0 table itself."""
    model = conn.exec_driver_sql(
        "SELECT model || '@' || created_at FROM vec.page_vecs_meta"
    ).scalar()
    if model is None:
        return None
    try:
        row = conn.exec_driver_sql(_SIGNATURE_SQL.format(table=_ROWIDS_TABLE)).one()
    except OperationalError:  # a sqlite-vec without that shadow table: scan the vec0 table
        row = conn.exec_driver_sql(_SIGNATURE_SQL.format(table="page_vecs")).one()
    return VectorSignature(str(model), int(row[0]), int(row[1]), int(row[2]))


def vector_batches(
    conn: Connection, after: int, size: int
) -> Iterator[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float32]]]:
    """(chunk ids, their documents (-1: chunk gone), vectors) of the rows above ``after``, in
    batches of ``size``: a whole table fetched at once held every row's blob as a Python object
    next to the matrix (RSS 2.6 GB for 1.5 GB of vectors at 1M rows, bench/retrieval.py)."""
    result = conn.execute(
        text(
            "SELECT v.rowid, coalesce(c.document_id, -1), v.embedding FROM vec.page_vecs v "
            "LEFT JOIN page_chunks c ON c.id = v.rowid WHERE v.rowid > :after "
            "ORDER BY v.rowid"
        ),
        {"after": after},
    )
    for rows in result.partitions(size):
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        docs = np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows))
        matrix = np.empty((len(rows), len(rows[0][2]) // 4), dtype=np.float32)
        for n, r in enumerate(rows):
            matrix[n] = np.frombuffer(r[2], dtype=np.float32)
        yield ids, docs, matrix
