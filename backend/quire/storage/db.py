"""Engine over sqlean (SQLite with extension loading) with sqlite-vec loaded on every connection.

One writer, many readers: WAL, a busy timeout, ``BEGIN IMMEDIATE`` for write transactions,
and short transactions only (no lock is held across OCR or embedding).
The vector store lives in a second file attached as schema ``vec`` so that it can be dropped
and rebuilt from the main DB.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlean
import sqlite_vec
from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.pool import QueuePool

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 30_000


def _quote(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


class Database:
    """The main DB with the vector file attached; ``write()`` and ``read()`` open transactions."""

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


def json_ids(ids: Iterable[int]) -> str:
    """A JSON array of integer ids, bound as one parameter and read with ``json_each``."""
    return "[" + ",".join(str(int(i)) for i in ids) + "]"
