"""Migration 0004: ``documents.language``, told for the documents already in the library from
their stored pages (real text of the shared EPUBs), as ingest tells it for new ones."""

from __future__ import annotations

from pathlib import Path

from quire.formats.epub import extract_epub
from quire.storage.backends.sqlite import SqliteDatabase
from quire.storage.db import Database
from quire.storage.migrate import downgrade, upgrade
from tests.conftest import DOCS

BOOKS = {
    "pg39287-agony-column-ja-epub3.epub": "ja",
    "idpf-arabic-rtl.epub": "ar",
    "alice-epub3.epub": "en",
}
FRENCH = (
    "Longtemps, je me suis couché de bonne heure. Parfois, à peine ma bougie éteinte, mes yeux "
    "se fermaient si vite que je n'avais pas le temps de me dire : « Je m'endors. »"
)


def _document(db: Database, name: str, pages: list[str]) -> int:
    with db.write() as conn:
        conn.exec_driver_sql(
            "INSERT INTO documents (kind, filename, sha256, byte_size, stored_path, status, "
            "created_at, updated_at) VALUES ('epub', ?, ?, 1, '/x', 'ready', datetime(), "
            "datetime())",
            (name, name),
        )
        doc = int(conn.exec_driver_sql("SELECT max(id) FROM documents").scalar_one())
        for n, body in enumerate(pages, start=1):
            conn.exec_driver_sql(
                "INSERT INTO pages (document_id, page, text, source) VALUES (?, ?, ?, 'epub')",
                (doc, n, body),
            )
    return doc


def test_existing_documents_get_their_language_from_their_pages(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "q.db", tmp_path / "qv.db")
    upgrade(db, "0003")
    ids = {
        name: _document(db, name, [p.text for p in extract_epub(DOCS / "epub" / name).pages])
        for name in BOOKS
    }
    # Many short pages: the sample is spread over them all.
    ids["many-pages"] = _document(db, "many-pages", ["12"] * 300 + [FRENCH] * 150)
    ids["scan"] = _document(db, "scan", ["", "Fig. 3"])  # too little text to tell
    ids["no-pages"] = _document(db, "no-pages", [])
    upgrade(db)
    with db.read() as conn:
        found = dict(conn.exec_driver_sql("SELECT id, language FROM documents").all())
    assert {name: found[i] for name, i in ids.items()} == {
        **BOOKS,
        "many-pages": "fr",
        "scan": None,
        "no-pages": None,
    }
    downgrade(db, "0003")
    with db.read() as conn:
        columns = [r[1] for r in conn.exec_driver_sql("PRAGMA table_info(documents)")]
    assert "language" not in columns and len(found) == len(ids)
    db.dispose()
