"""Migrations from a blank database: the schema they build, FTS5 sync, the vector file."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import text

from quire.storage.backends.sqlite import SqliteDatabase
from quire.storage.db import Database
from quire.storage.migrate import _config, downgrade, upgrade
from quire.storage.schema import metadata


def _names(db: Database, schema: str = "main") -> dict[str, str]:
    with db.read() as conn:
        rows = conn.exec_driver_sql(
            f"SELECT name, coalesce(sql, '') FROM {schema}.sqlite_master WHERE type IN "
            "('table', 'trigger', 'index')"
        ).all()
    return {r[0]: r[1] for r in rows}


def test_blank_db_gets_the_whole_schema(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "q.db", tmp_path / "qv.db")
    upgrade(db)
    main = _names(db)
    for table in (
        "documents",
        "pages",
        "page_chunks",
        "page_chunks_fts",
        "page_chunks_tri",
        "ingest_jobs",
        "conversations",
        "messages",
        "chat_feedback",
    ):
        assert table in main, table
    assert "porter unicode61" in main["page_chunks_fts"]
    # It indexes the view that reads the bigram columns where set (migration 0003).
    assert "content='page_chunks_lex'" in main["page_chunks_fts"]
    assert "trigram" in main["page_chunks_tri"]
    assert "detail=none" in main["page_chunks_tri"]  # no positions (migration 0010)
    for trigger in ("page_chunks_ai", "page_chunks_ad", "page_chunks_au"):
        assert trigger in main
    assert "AUTOINCREMENT" in main["page_chunks"].upper()
    vec = _names(db, "vec")
    assert "vec0(embedding float[384])" in vec["page_vecs"]
    assert "page_vecs_meta" in vec
    with db.read() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA vec.journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        version = conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar()
        assert version == ScriptDirectory.from_config(_config(db)).get_current_head()
    db.dispose()


def test_migrated_schema_matches_the_table_definitions(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "q.db", tmp_path / "qv.db")
    upgrade(db)
    with db.engine.connect() as conn:
        ctx = MigrationContext.configure(conn)
        diff = [
            d
            for d in compare_metadata(ctx, metadata)
            # FTS5 shadow tables and the vector file are not in the SQLAlchemy metadata.
            if not (d[0] == "remove_table" and d[1].name.startswith("page_chunks_"))
            and not (d[0] == "add_table" and d[1].schema == "vec")
        ]
    assert diff == []
    db.dispose()


def test_upgrade_is_idempotent_and_downgrade_reverses(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "q.db", tmp_path / "qv.db")
    upgrade(db)
    upgrade(db)
    downgrade(db, "base")
    assert "documents" not in _names(db)
    assert "page_vecs" not in _names(db, "vec")
    upgrade(db)
    assert "page_chunks_fts" in _names(db)
    db.dispose()


def test_fts_indexes_follow_the_chunks_through_triggers(db: Database) -> None:
    with db.write() as conn:
        conn.exec_driver_sql(
            "INSERT INTO documents (kind, filename, sha256, byte_size, stored_path, created_at, "
            "updated_at) VALUES ('text', 'a.txt', 'x', 1, '/x', datetime(), datetime())"
        )
        conn.exec_driver_sql(
            "INSERT INTO page_chunks (document_id, page, ordinal, text, content_hash, "
            "char_count, source) VALUES (1, 1, 0, 'Running foxes jumped over ERR-4042', 'h', 34, "
            "'text')"
        )

    def hits(query: str, table: str = "page_chunks_fts") -> list[int]:
        with db.read() as conn:
            return [
                r[0]
                for r in conn.execute(
                    text(f"SELECT rowid FROM {table} WHERE {table} MATCH :q"), {"q": query}
                )
            ]

    assert hits("run") == [1]  # porter stemming: running -> run
    # Trigram, without positions (0010): every trigram of the substring, then the text.
    assert hits('"r-4" AND "-40" AND "404"', "page_chunks_tri") == [1]
    with db.write() as conn:
        conn.exec_driver_sql("UPDATE page_chunks SET text = 'calm cats slept' WHERE id = 1")
    assert hits("run") == []
    assert hits('"r-4"', "page_chunks_tri") == []
    assert hits("cat") == [1]
    with db.write() as conn:
        conn.exec_driver_sql("DELETE FROM page_chunks WHERE id = 1")
    assert hits("cat") == []
    with db.write() as conn:
        # Raises "database disk image is malformed" when the index and its content disagree.
        for table in ("page_chunks_fts", "page_chunks_tri"):
            conn.exec_driver_sql(
                f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)"
            )


def test_text_without_spaces_is_indexed_as_bigrams_and_kept_in_sync(db: Database) -> None:
    from quire.storage.chunks import replace as replace_document_chunks
    from quire.storage.records import Chunk, Page

    with db.write() as conn:
        conn.exec_driver_sql(
            "INSERT INTO documents (kind, filename, sha256, byte_size, stored_path, created_at, "
            "updated_at) VALUES ('epub', 'j.epub', 'y', 1, '/y', datetime(), datetime())"
        )
        doc = conn.exec_driver_sql("SELECT max(id) FROM documents").scalar_one()
    body = "ジェフリー・ウエストが朝食をとりにカールトン・ホテルへ出かけた。"
    page = Page(1, body, heading_path="第一章")
    chunk = Chunk(1, 0, "第一章", body, "h-ja", "text_layer")
    with db.write() as conn:
        replace_document_chunks(conn, doc, [page], [chunk])

    def hits(query: str) -> list[int]:
        with db.read() as conn:
            return [
                r[0]
                for r in conn.execute(
                    text("SELECT rowid FROM page_chunks_fts WHERE page_chunks_fts MATCH :q"),
                    {"q": query},
                )
            ]

    with db.read() as conn:
        cid, stored, fts = conn.exec_driver_sql(
            "SELECT id, text, fts_text FROM page_chunks WHERE document_id = ?", (doc,)
        ).one()
    assert stored == body  # the text itself is kept as written
    assert "朝食" in fts.split()
    assert hits('"朝食"') == [cid] and hits('"一章"') == [cid]  # text and heading columns
    assert hits('"ホテル"') == []  # a trigram is no term: bigrams only ("ホテ" "テル")
    assert hits('"ホテ" "テル"') == [cid]
    with db.write() as conn:
        # A new heading for a kept chunk is indexed anew.
        replace_document_chunks(conn, doc, [page], [Chunk(1, 0, "第二章", body, "h-ja", "ocr")])
    assert hits('"二章"') == [cid] and hits('"一章"') == []
    with db.write() as conn:
        conn.exec_driver_sql(
            "INSERT INTO page_chunks_fts(page_chunks_fts, rank) VALUES ('integrity-check', 1)"
        )
        conn.exec_driver_sql("DELETE FROM page_chunks WHERE id = ?", (cid,))
    assert hits('"朝食"') == []


def test_processes_opening_a_fresh_library_together_migrate_it_once(tmp_path: Path) -> None:
    """The API and a worker started at once on a new data directory (as `make run` and the
    tests' stacks do): each waits for the other's migration instead of applying 0001 twice."""
    go = tmp_path / "go"
    script = (
        "import sys, time; from pathlib import Path; from quire.config import Settings; "
        "from quire.storage.migrate import open_database\n"
        "while not Path(sys.argv[2]).exists(): time.sleep(0.001)\n"
        "open_database(Settings(data_dir=Path(sys.argv[1]))).dispose()"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(tmp_path / "data"), str(go)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(6)
    ]
    time.sleep(4)  # all imported, all waiting: then they start at the same moment
    go.touch()
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    db = SqliteDatabase(tmp_path / "data" / "quire.db", tmp_path / "data" / "quire_vecs.db")
    with db.read() as conn:
        version = conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar()
    assert version == ScriptDirectory.from_config(_config(db)).get_current_head()
    db.dispose()
