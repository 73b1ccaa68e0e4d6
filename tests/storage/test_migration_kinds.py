"""Migrations 0017 (the Office kinds), 0018 (``image``), 0019 (``web``) and 0020 (``note``):
the documents.kind CHECK admits the new kinds in place (as 0006 did): rows, pages, chunks and
their FTS rows survive; the downgrade drops only documents of the new kinds."""

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


@pytest.mark.parametrize(
    ("before", "revision", "kept", "added", "refused"),
    [
        ("0016", "0017", "pdf", ("docx", "odt", "pptx", "odp", "xlsx", "ods"), "doc"),
        ("0017", "0018", "docx", ("image",), "gif"),
        ("0018", "0019", "image", ("web",), "html"),
        ("0019", "0020", "web", ("note",), "notes"),
    ],
    ids=["0017-office", "0018-image", "0019-web", "0020-note"],
)
def test_the_new_kinds_are_admitted_and_the_rest_kept(
    tmp_path: Path,
    before: str,
    revision: str,
    kept: str,
    added: tuple[str, ...],
    refused: str,
) -> None:
    db = SqliteDatabase(tmp_path / "q.db", tmp_path / "qv.db")
    upgrade(db, before)
    with db.write() as conn:
        conn.exec_driver_sql(INSERT_DOC, (kept, "s0"))
        conn.exec_driver_sql(
            "INSERT INTO page_chunks (document_id, page, ordinal, text, content_hash, "
            "char_count, source) VALUES (1, 1, 0, 'zebra crossing', 'h', 14, 'text')"
        )
        with pytest.raises(IntegrityError):
            with conn.begin_nested():
                conn.exec_driver_sql(INSERT_DOC, (added[0], "s1"))
    upgrade(db, revision)
    with db.write() as conn:
        for i, kind in enumerate(added):
            conn.exec_driver_sql(INSERT_DOC, (kind, f"o{i}"))
        with pytest.raises(IntegrityError):
            with conn.begin_nested():
                conn.exec_driver_sql(INSERT_DOC, (refused, "s9"))
    with db.read() as conn:
        hits = conn.exec_driver_sql(
            "SELECT rowid FROM page_chunks_fts WHERE page_chunks_fts MATCH 'zebra'"
        ).all()
        assert len(hits) == 1
        assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
    downgrade(db, before)
    with db.read() as conn:
        assert [r[0] for r in conn.exec_driver_sql("SELECT kind FROM documents")] == [kept]
        assert conn.exec_driver_sql("SELECT count(*) FROM page_chunks").scalar() == 1
    db.dispose()
