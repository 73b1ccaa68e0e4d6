"""The library's database: SQLite (the embedded default) or PostgreSQL (the team library).

SQLite: an engine over sqlean (SQLite with extension loading) with sqlite-vec loaded on every
connection. One writer, many readers: WAL, a busy timeout, ``BEGIN IMMEDIATE`` for write
transactions, and short transactions only (no lock is held across OCR or embedding). The vector
store lives in a second file attached as schema ``vec`` so that it can be dropped and rebuilt
from the main DB.

PostgreSQL (``QUIRE_DATABASE_URL``, docs/POSTGRES.md): the same tables, the vectors in schema
``vec`` of the same database (pgvector), reads in one REPEATABLE READ snapshot each. SQL that
differs between the two goes through the helpers at the end of this module.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlean
import sqlite_vec
from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.pool import QueuePool

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 30_000


def _quote(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


class Database:
    """The main DB with the vector file attached; ``write()`` and ``read()`` open transactions."""

    dialect = "sqlite"

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


class PostgresDatabase(Database):
    """The library in PostgreSQL: one database, the vectors in its schema ``vec``.

    Writes are READ COMMITTED transactions (the job claim locks its row with ``FOR UPDATE SKIP
    LOCKED``, unique constraints settle the rest); a read is one REPEATABLE READ snapshot, as a
    SQLite read transaction is. ``pool_pre_ping`` replaces a connection the server dropped
    (a restart) instead of failing the next request with it.
    """

    dialect = "postgresql"

    def __init__(self, url: str, *, pool_size: int = 8) -> None:  # noqa: D107
        self.url = url
        self.engine = create_engine(
            url,
            pool_size=pool_size,
            max_overflow=pool_size,
            pool_pre_ping=True,
            connect_args={"connect_timeout": 10, "application_name": "quire"},
        )

    @contextmanager
    def write(self) -> Iterator[Connection]:
        with self.engine.connect() as conn, conn.begin():
            yield conn

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with (
            self.engine.connect().execution_options(isolation_level="REPEATABLE READ") as conn,
            conn.begin(),
        ):
            yield conn


def unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` says the database cannot be reached or used right now (a PostgreSQL
    server stopped or restarting, its connection dropped; SQLite busy past its timeout):
    the request or job is worth trying again, nothing about it was wrong."""
    return isinstance(exc, OperationalError) or (
        isinstance(exc, DBAPIError) and exc.connection_invalidated
    )


def binary_rows(conn: Connection, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The rows of ``sql`` (psycopg's ``%(name)s`` parameters) on PostgreSQL, in ``conn``'s
    transaction, fetched in the binary format: a bytea value crosses as its bytes rather than
    as hex text (a 1 MB value in ~1.5 ms instead of 6-12)."""
    raw = conn.connection.driver_connection
    assert raw is not None
    with raw.cursor(binary=True) as cur:
        cur.execute(sql, params)
        return list(cur.fetchall())


def is_postgres(conn: Connection) -> bool:
    return conn.dialect.name == "postgresql"


def json_ids(ids: Iterable[int]) -> str:
    """A JSON array of integer ids, bound as one parameter and read with ``json_each``."""
    return "[" + ",".join(str(int(i)) for i in ids) + "]"


def in_ids(conn: Connection, column: str, name: str) -> str:
    """``column`` is one of the ids bound as ``:name`` (bind ``id_list(conn, ids)``): one
    parameter however many ids, a JSON array on SQLite, an array on PostgreSQL."""
    if is_postgres(conn):
        return f"{column} = ANY(CAST(:{name} AS bigint[]))"
    return f"{column} IN (SELECT value FROM json_each(:{name}))"


def in_strings(conn: Connection, column: str, name: str) -> str:
    """As ``in_ids`` for strings (bind ``string_list(conn, values)``)."""
    if is_postgres(conn):
        return f"{column} = ANY(CAST(:{name} AS text[]))"
    return f"{column} IN (SELECT value FROM json_each(:{name}))"


def id_list(conn: Connection, ids: Iterable[int]) -> str | list[int]:
    """The bound value for ``in_ids``."""
    return [int(i) for i in ids] if is_postgres(conn) else json_ids(ids)


def string_list(conn: Connection, values: Iterable[str]) -> str | list[str]:
    """The bound value for ``in_strings``."""
    return list(values) if is_postgres(conn) else json.dumps(list(values))


def json_text(conn: Connection, column: str, *path: str) -> str:
    """The text at ``path`` in a JSON column (``metadata`` → ``$.origin.type``)."""
    if is_postgres(conn):
        return f"({column}::jsonb #>> '{{{','.join(path)}}}')"
    return f"json_extract({column}, '$.{'.'.join(path)}')"


def json_array_elements(conn: Connection, alias: str, column: str, *path: str) -> str:
    """A FROM item ``alias`` over the texts in the JSON array at ``path`` in ``column`` (the
    whole value without a path); its column is ``alias.value``."""
    if is_postgres(conn):
        at = f"{column}::jsonb #> '{{{','.join(path)}}}'" if path else f"{column}::jsonb"
        return (
            f"jsonb_array_elements_text(CASE WHEN jsonb_typeof({at}) = 'array' THEN {at} "
            f"ELSE '[]'::jsonb END) AS {alias}(value)"
        )
    if not path:
        return f"json_each({column}) {alias}"
    return f"json_each({column}, '$.{'.'.join(path)}') {alias}"
