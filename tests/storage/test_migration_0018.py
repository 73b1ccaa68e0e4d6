"""Migration 0018: the documents.kind CHECK admits ``image``, in place (as 0017 did): rows,
pages, chunks and their FTS rows survive; the downgrade drops only image documents."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.exc import IntegrityError

from quire.storage.backends.sqlite import SqliteDatabase
from quire.storage.migrate import downgrade, upgrade

INSERT_DOC = (
    "INSERT INTO documents (kind, filename, sha256, byte_size, stored_path, created_at, "
    "updated_at) VALUES (?, 'a', ?, 1, '/x', datetime(), datetime())"
)


def test_the_image_kind_is_admitted_and_the_rest_kept(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "q.db", tmp_path / "qv.db")
    upgrade(db, "0017")
    with db.write() as conn:
        conn.exec_driver_sql(INSERT_DOC, ("docx", "s0"))
        conn.exec_driver_sql(
            "INSERT INTO page_chunks (document_id, page, ordinal, text, content_hash, "
            "char_count, source) VALUES (1, 1, 0, 'zebra crossing', 'h', 14, 'text')"
        )
        with pytest.raises(IntegrityError):
            with conn.begin_nested():
                conn.exec_driver_sql(INSERT_DOC, ("image", "s1"))
    upgrade(db, "0018")
    with db.write() as conn:
        conn.exec_driver_sql(INSERT_DOC, ("image", "i1"))
        with pytest.raises(IntegrityError):
            with conn.begin_nested():
                conn.exec_driver_sql(INSERT_DOC, ("gif", "s9"))
    with db.read() as conn:
        hits = conn.exec_driver_sql(
            "SELECT rowid FROM page_chunks_fts WHERE page_chunks_fts MATCH 'zebra'"
        ).all()
        assert len(hits) == 1
        assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
    downgrade(db, "0017")
    with db.read() as conn:
        assert [r[0] for r in conn.exec_driver_sql("SELECT kind FROM documents")] == ["docx"]
        assert conn.exec_driver_sql("SELECT count(*) FROM page_chunks").scalar() == 1
    db.dispose()
