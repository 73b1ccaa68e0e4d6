"""Migration 0008: the documents.status CHECK admits ``searchable``, in place (rows, chunks and
their FTS rows survive); the downgrade turns searchable documents back into processing."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.exc import IntegrityError

from quire.storage.backends.sqlite import SqliteDatabase
from quire.storage.migrate import downgrade, upgrade

INSERT_DOC = (
    "INSERT INTO documents (kind, filename, sha256, byte_size, stored_path, created_at, "
    "updated_at, status) VALUES ('text', 'a', ?, 1, '/x', datetime(), datetime(), ?)"
)


def test_searchable_is_admitted_and_reverts_to_processing(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "q.db", tmp_path / "qv.db")
    upgrade(db, "0007")
    with db.write() as conn:
        conn.exec_driver_sql(INSERT_DOC, ("s1", "ready"))
        conn.exec_driver_sql(
            "INSERT INTO page_chunks (document_id, page, ordinal, text, content_hash, "
            "char_count, source) VALUES (1, 1, 0, 'zebra crossing', 'h', 14, 'text')"
        )
        with pytest.raises(IntegrityError):
            with conn.begin_nested():
                conn.exec_driver_sql(INSERT_DOC, ("s2", "searchable"))
    upgrade(db)
    with db.write() as conn:
        conn.exec_driver_sql(INSERT_DOC, ("s2", "searchable"))
        with pytest.raises(IntegrityError):
            with conn.begin_nested():
                conn.exec_driver_sql(INSERT_DOC, ("s3", "embedding"))
    with db.read() as conn:
        hits = conn.exec_driver_sql(
            "SELECT rowid FROM page_chunks_fts WHERE page_chunks_fts MATCH 'zebra'"
        ).all()
        assert len(hits) == 1
    downgrade(db, "0007")
    with db.read() as conn:
        statuses = [r[0] for r in conn.exec_driver_sql("SELECT status FROM documents ORDER BY id")]
    assert statuses == ["ready", "processing"]
    db.dispose()
