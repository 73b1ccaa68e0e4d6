"""Migration 0006: the documents.kind CHECK admits chatgpt and claude, in place: rows, pages,
chunks, their FTS rows, indexes and triggers survive (a table recreate would cascade)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.exc import IntegrityError

from quire.storage.backends.sqlite import SqliteDatabase
from quire.storage.db import Database
from quire.storage.migrate import downgrade, upgrade

INSERT_DOC = (
    "INSERT INTO documents (kind, filename, sha256, byte_size, stored_path, created_at, "
    "updated_at) VALUES (?, 'a', ?, 1, '/x', datetime(), datetime())"
)


def _schema(db: Database) -> dict[str, str]:
    with db.read() as conn:
        rows = conn.exec_driver_sql(
            "SELECT name, coalesce(sql, '') FROM sqlite_master WHERE type IN "
            "('table', 'trigger', 'index')"
        ).all()
    return {r[0]: r[1] for r in rows}


def test_upgrade_keeps_the_data_and_admits_the_new_kinds(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "q.db", tmp_path / "qv.db")
    upgrade(db, "0005")
    with db.write() as conn:
        conn.exec_driver_sql(INSERT_DOC, ("text", "s1"))
        conn.exec_driver_sql(
            "INSERT INTO pages (document_id, page, text, heading_path, source, metadata) "
            "VALUES (1, 1, 'zebra page', '', 'text', '{}')"
        )
        conn.exec_driver_sql(
            "INSERT INTO page_chunks (document_id, page, ordinal, text, content_hash, "
            "char_count, source) VALUES (1, 1, 0, 'zebra crossing', 'h', 14, 'text')"
        )
        with pytest.raises(IntegrityError):
            with conn.begin_nested():
                conn.exec_driver_sql(INSERT_DOC, ("chatgpt", "s2"))
    before = _schema(db)
    upgrade(db, "0006")
    after = _schema(db)
    assert before.keys() == after.keys()
    assert {k: v for k, v in before.items() if k != "documents"} == {
        k: v for k, v in after.items() if k != "documents"
    }
    assert "'chatgpt','claude'" in after["documents"]
    with db.write() as conn:
        conn.exec_driver_sql(INSERT_DOC, ("chatgpt", "s2"))
        conn.exec_driver_sql(INSERT_DOC, ("claude", "s3"))
        with pytest.raises(IntegrityError):
            with conn.begin_nested():
                conn.exec_driver_sql(INSERT_DOC, ("gemini", "s4"))
    with db.read() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM pages").scalar() == 1
        hits = conn.exec_driver_sql(
            "SELECT rowid FROM page_chunks_fts WHERE page_chunks_fts MATCH 'zebra'"
        ).all()
        assert len(hits) == 1
        assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"

    downgrade(db, "0005")  # the conversations go, the rest stays
    with db.read() as conn:
        kinds = [r[0] for r in conn.exec_driver_sql("SELECT kind FROM documents")]
        assert kinds == ["text"]
        assert conn.exec_driver_sql("SELECT count(*) FROM page_chunks").scalar() == 1
    assert _schema(db)["documents"] == before["documents"]
    db.dispose()
