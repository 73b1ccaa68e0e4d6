"""`quire migrate-to-postgres`: a real SQLite library (ingested by the worker) copied into
PostgreSQL by the CLI, then searched on both: the same rows, the same BM25 ranking and scores,
the same nearest neighbours."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from sqlalchemy import text

from quire.config import Settings
from quire.retrieval import dense
from quire.retrieval.filters import Filter
from quire.storage import conversations, notes, people
from quire.storage.backends import pg_bulk
from quire.storage.backends.postgres import PostgresDatabase
from quire.storage.db import Database
from quire.storage.migrate import open_database
from tests import legs
from tests.e2e.helpers import quire
from tests.pg import PgServer
from tests.retrieval.conftest import LIBRARY, ingest_library


def index_page_of(db: Database, note: int) -> tuple[int, str]:
    """The index document of a note and its indexed text (written if missing)."""
    with db.write() as conn:
        index_id, page = notes.index_page(conn, note)
    return index_id, page.text


def test_a_sqlite_library_moves_to_postgresql_whole(tmp_path: Path, pg_server: PgServer) -> None:
    settings, sqlite = ingest_library(tmp_path, LIBRARY[:3])
    with sqlite.write() as conn:
        conv = conversations.create(conn, "moved along")
        conversations.add_message(conn, conv, "user", "What does section 1201 prohibit?")
        people.add_user(conn, "ada", admin=True)
        _, token = people.issue_token(conn, "ada", "laptop")
        note = notes.create(conn, {"document_id": 1, "page": 1, "body": "moved with it"})
    note_index = index_page_of(sqlite, note)
    url = pg_server.create_database()
    try:
        r = quire(settings.data_dir, "migrate-to-postgres", url, timeout=600)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "✗" not in r.stdout and "QUIRE_ORIGINALS_DIR=" in r.stdout
        # The indexes dropped for the copy were built at its end (not by the open below).
        raw = PostgresDatabase(url)
        assert pg_bulk.missing(raw) == []
        raw.dispose()
        postgres = open_database(Settings(data_dir=tmp_path / "pg", database_url=url))
        tables = ("users", "api_tokens", "documents", "pages", "page_chunks", "ingest_jobs")
        tables += ("messages", "notes")
        for table in tables:
            with sqlite.read() as a, postgres.read() as b:
                rows = f"SELECT * FROM {table} ORDER BY id"
                want = [tuple(r) for r in a.execute(text(rows))]
                got = [tuple(r) for r in b.execute(text(rows))]
            assert len(got) == len(want) > 0, table
            assert [r[0] for r in got] == [r[0] for r in want], table
        for query in ("copyright circumvention", "White Rabbit pocket watch", "sister on the bank"):
            with sqlite.read() as a, postgres.read() as b:
                want = legs.lexical(a).bm25(a, query, limit=10, flt=Filter())
                got = legs.lexical(b).bm25(b, query, limit=10, flt=Filter())
            assert [c for c, _ in got] == [c for c, _ in want] and got, query
            assert np.allclose([s for _, s in got], [s for _, s in want], rtol=1e-9)
        with sqlite.read() as a:
            probe = a.execute(
                text("SELECT embedding FROM vec.page_vecs ORDER BY rowid LIMIT 1")
            ).scalar_one()
            query_vec = np.frombuffer(probe, dtype=np.float32)
            want = dense.knn_sqlite(a, query_vec, k=5, flt=Filter())
        with postgres.read() as b:
            got = dense.knn_postgres(b, query_vec, k=5, flt=Filter())
        assert [c for c, _ in got] == [c for c, _ in want]
        assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-5)
        # New rows get new ids after the copied ones; Ada's token still signs her in.
        with postgres.write() as conn:
            assert conversations.create(conn, "next") > conv
            assert notes.get_note(conn, note)["body"] == "moved with it"
            assert index_page_of(postgres, note) == note_index
            reader = people.reader_for(conn, token)
            assert reader is not None and reader.name == "ada" and reader.admin
        postgres.dispose()
        # Into a library that is not empty: refused, nothing written.
        again = quire(settings.data_dir, "migrate-to-postgres", url, timeout=600)
        assert again.returncode == 1 and "empty database" in again.stderr
    finally:
        sqlite.dispose()
        pg_server.drop_database(url)
