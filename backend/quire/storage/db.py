"""The library's database, as the rest of Quire sees it: a ``Database`` (storage/backends/
base.py: SQLite files or PostgreSQL, opened by storage/migrate.py), and the SQL that differs
between the two for code that holds a connection, through ``dialect(conn)``.

    with db.read() as conn:
        conn.execute(text(f"SELECT ... WHERE {in_ids(conn, 'id', 'ids')}"),
                     {"ids": id_list(conn, [1, 2, 3])})
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError, OperationalError

from quire.storage.backends import dialect
from quire.storage.backends.base import Database, Dialect

__all__ = ["Database", "Dialect", "dialect", "unreachable"]


def unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` says the database cannot be reached or used right now (a PostgreSQL
    server stopped or restarting, its connection dropped; SQLite busy past its timeout):
    the request or job is worth trying again, nothing about it was wrong."""
    return isinstance(exc, OperationalError) or (
        isinstance(exc, DBAPIError) and exc.connection_invalidated
    )


def in_ids(conn: Connection, column: str, name: str) -> str:
    """``column`` is one of the ids bound as ``:name`` (bind ``id_list(conn, ids)``): one
    parameter however many ids."""
    return dialect(conn).in_ids(column, name)


def id_list(conn: Connection, ids: Iterable[int]) -> Any:
    """The bound value for ``in_ids``."""
    return dialect(conn).id_list(ids)


def in_strings(conn: Connection, column: str, name: str) -> str:
    """As ``in_ids`` for strings (bind ``string_list(conn, values)``)."""
    return dialect(conn).in_strings(column, name)


def string_list(conn: Connection, values: Iterable[str]) -> Any:
    """The bound value for ``in_strings``."""
    return dialect(conn).string_list(values)


def json_text(conn: Connection, column: str, *path: str) -> str:
    """The text at ``path`` in a JSON column (``metadata`` → ``$.origin.type``)."""
    return dialect(conn).json_text(column, *path)


def json_array_elements(conn: Connection, alias: str, column: str, *path: str) -> str:
    """A FROM item ``alias`` over the texts in the JSON array at ``path`` in ``column`` (the
    whole value without a path); its column is ``alias.value``."""
    return dialect(conn).json_array_elements(alias, column, *path)
