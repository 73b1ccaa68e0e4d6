"""O(1) change detection for the in-memory copies that searches keep (dense mirror, BM25 terms).

``PRAGMA data_version`` moves when another connection commits to a database file; its values
compare only on one connection, so a dedicated idle connection watches the file. Read it before
the searching connection's first statement: the snapshot that connection then sees is at least
as new as the version, so a copy built from it and tagged with the version is never stale.
"""

from __future__ import annotations

import threading
from typing import Any

import sqlean
from sqlalchemy import Connection


class DataVersion:
    """The ``data_version`` of one attached schema (``main``, ``vec``) of a connection's files."""

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
