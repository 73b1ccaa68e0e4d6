"""The two databases a library can live in, behind one seam (base.py): SQLite files (the
embedded default, sqlite.py with FTS5's internals in fts5.py) and PostgreSQL (the team library,
postgres.py with its BM25 rows in pg_postings.py and bulk loads in pg_bulk.py). Everything
that differs between them is here; the rest of Quire sees ``storage.db``."""

from __future__ import annotations

from sqlalchemy import Connection

from quire.storage.backends import postgres, sqlite
from quire.storage.backends.base import Dialect

_DIALECTS: dict[str, Dialect] = {d.name: d for d in (sqlite.DIALECT, postgres.DIALECT)}


def dialect(conn: Connection) -> Dialect:
    """The SQL of the database ``conn`` is connected to."""
    return _DIALECTS[conn.dialect.name]
