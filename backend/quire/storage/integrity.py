"""Is a pair of database files sound? SQLite's own checks on both files, the FTS5 indexes against
the chunks they index, foreign keys, and the cross-file links that no constraint can hold
(vectors whose chunk is gone). Used by ``quire backup`` / ``restore`` and the crash tests.

Run it on a copy or a quiet database: the FTS5 check is an INSERT (it changes nothing, but it
takes the write lock).
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import sqlean
import sqlite_vec

FTS_TABLES = ("page_chunks_fts", "page_chunks_tri")
# SQLite's unix VFS: every connection to a WAL database holds a shared lock on this byte of the
# -shm file (the "DMS" lock) for as long as it is open.
_SHM_DMS_BYTE = 128


@dataclass
class Report:
    """Problems found (empty when sound) and the row counts that were checked."""

    problems: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems


@contextlib.contextmanager
def connect(db_path: Path, vec_path: Path | None = None) -> Iterator[sqlean.Connection]:
    """A plain autocommit connection with sqlite-vec loaded and the vector file attached."""
    conn = sqlean.connect(str(db_path), timeout=30, isolation_level=None)
    try:
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
        conn.execute("PRAGMA busy_timeout = 30000")
        if vec_path is not None:
            conn.execute("ATTACH DATABASE ? AS vec", (str(vec_path),))
        yield conn
    finally:
        conn.close()


def _scalar(conn: sqlean.Connection, sql: str) -> int:
    return int(conn.execute(sql).fetchone()[0])


def _has_table(conn: sqlean.Connection, schema: str, name: str) -> bool:
    sql = f"SELECT count(*) FROM {schema}.sqlite_master WHERE name = ?"
    return bool(conn.execute(sql, (name,)).fetchone()[0])


def check(db_path: Path, vec_path: Path) -> Report:
    """Check both files and the links between them."""
    report = Report()
    try:
        _check(db_path, vec_path, report)
    except sqlean.DatabaseError as exc:  # too damaged to be checked at all
        report.problems.append(f"{type(exc).__name__}: {exc}")
    return report


def _check(db_path: Path, vec_path: Path, report: Report) -> None:
    with connect(db_path, vec_path) as conn:
        for schema in ("main", "vec"):
            rows = [r[0] for r in conn.execute(f"PRAGMA {schema}.integrity_check")]
            if rows != ["ok"]:
                report.problems.append(f"{schema}: integrity_check: {'; '.join(rows[:5])}")
        fks = conn.execute("PRAGMA main.foreign_key_check").fetchall()
        if fks:
            report.problems.append(f"{len(fks)} rows break a foreign key, e.g. {fks[0]}")
        if not _has_table(conn, "main", "page_chunks"):
            return  # a blank database: nothing more to check
        for table in FTS_TABLES:
            try:
                # rank 1: the index is also compared with the chunks it was built from.
                conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")
            except sqlean.DatabaseError as exc:
                report.problems.append(f"{table}: {exc}")
        q = "SELECT count(*) FROM "
        report.counts = {
            "documents": _scalar(conn, q + "documents"),
            "pages": _scalar(conn, q + "pages"),
            "chunks": _scalar(conn, q + "page_chunks"),
            "fts_rows": _scalar(conn, q + "page_chunks_fts_docsize"),
            "tri_rows": _scalar(conn, q + "page_chunks_tri_docsize"),
            "orphan_chunks": _scalar(
                conn,
                q + "page_chunks c WHERE NOT EXISTS "
                "(SELECT 1 FROM documents d WHERE d.id = c.document_id)",
            ),
            "orphan_pages": _scalar(
                conn,
                q + "pages p WHERE NOT EXISTS "
                "(SELECT 1 FROM documents d WHERE d.id = p.document_id)",
            ),
        }
        if _has_table(conn, "vec", "page_vecs"):
            report.counts["vectors"] = _scalar(conn, q + "vec.page_vecs")
            report.counts["orphan_vectors"] = _scalar(
                conn,
                q + "vec.page_vecs v WHERE NOT EXISTS "
                "(SELECT 1 FROM page_chunks c WHERE c.id = v.rowid)",
            )
    c = report.counts
    for name in ("orphan_chunks", "orphan_pages"):
        if c[name]:
            report.problems.append(f"{c[name]} {name.replace('_', ' ')}")
    for fts in ("fts_rows", "tri_rows"):
        if c[fts] != c["chunks"]:
            report.problems.append(f"{fts}: {c[fts]} index rows for {c['chunks']} chunks")


def in_use(db_path: Path) -> bool:
    """Whether another process has this WAL database open (the API, a worker, a CLI command)."""
    shm = Path(f"{db_path}-shm")
    try:
        fh = shm.open("r+b")
    except FileNotFoundError:
        return False
    with fh:
        try:
            fcntl.lockf(fh, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, _SHM_DMS_BYTE)
        except OSError:
            return True
        fcntl.lockf(fh, fcntl.LOCK_UN, 1, _SHM_DMS_BYTE)
    return False
