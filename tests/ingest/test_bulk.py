"""Bulk ingest of text records: documents, pages, chunks, FTS and vectors stay in step."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text

from quire.config import Settings
from quire.ingest.bulk import Record, ingest_records
from quire.retrieval.filters import Filter
from quire.storage import chunks, vectors
from quire.storage.db import Database
from tests import legs
from tests.fakes.embedder import CountingEmbedder


def _records(n: int = 12) -> list[Record]:
    return [
        Record(
            key=f"doc-{i}",
            title=f"Title number {i}",
            text=f"Body of record {i} mentions the marker zq{i}x. " + "Filler sentence. " * i,
            meta={"corpus_id": str(i)},
        )
        for i in range(n)
    ]


def _counts(db: Database) -> dict[str, int]:
    with db.read() as conn:

        def one(sql: str) -> int:
            return int(conn.exec_driver_sql(sql).scalar_one())

        return {
            "documents": one("SELECT count(*) FROM documents"),
            "ready": one("SELECT count(*) FROM documents WHERE status = 'ready'"),
            "pages": one("SELECT count(*) FROM pages"),
            "chunks": one("SELECT count(*) FROM page_chunks"),
            "chunk_count_sum": one("SELECT coalesce(sum(chunk_count), 0) FROM documents"),
            "fts": one("SELECT count(*) FROM page_chunks_fts_docsize"),
            "trigram": one("SELECT count(*) FROM page_chunks_tri_docsize"),
            "vectors": vectors.count(conn),
        }


@pytest.fixture
def small_chunks(settings: Settings) -> Settings:
    # Small chunks so that the longer records span several.
    return settings.model_copy(update={"chunk_chars": 200, "chunk_overlap": 20, "embed_batch": 5})


def test_records_become_ready_documents_with_chunks_fts_and_vectors(
    db: Database, small_chunks: Settings
) -> None:
    emb = CountingEmbedder()
    calls: list[tuple[str, int, int]] = []
    stats = ingest_records(db, small_chunks, emb, _records(), progress=lambda *a: calls.append(a))
    assert (stats.added, stats.skipped, stats.updated) == (12, 0, 0)
    counts = _counts(db)
    assert counts["documents"] == counts["ready"] == counts["pages"] == 12
    assert counts["chunks"] > 12  # the longer records were split
    assert (
        counts["chunks"]
        == counts["chunk_count_sum"]
        == counts["fts"]
        == counts["trigram"]
        == counts["vectors"]
        == stats.chunks_inserted
        == stats.embedded
    )
    assert len(emb.texts) == counts["chunks"]
    with db.read() as conn:
        conn.exec_driver_sql(
            "INSERT INTO page_chunks_fts(page_chunks_fts, rank) VALUES ('integrity-check', 1)"
        )
        meta = vectors.read_meta(conn)
        assert meta is not None and meta.model == emb.name and meta.state == "ready"
        doc = conn.execute(
            text(
                "SELECT d.id, d.kind, d.title, d.source_key, d.stored_path, d.metadata, "
                "p.heading_path, p.page FROM documents d JOIN pages p ON p.document_id = d.id "
                "WHERE d.source_key = 'doc-3'"
            )
        ).one()
        # The title is the heading and opens the page text; every marker is findable by BM25.
        assert doc.kind == "text" and doc.title == doc.heading_path == "Title number 3"
        whole = chunks.page_texts(conn, [(doc.id, doc.page)])[(doc.id, doc.page)]
        assert whole.startswith("Title number 3\n\nBody of record 3")
        assert Path(doc.stored_path).read_text(encoding="utf-8") == whole
        assert '"corpus_id": "3"' in doc.metadata
        hits = legs.lexical(conn).bm25(conn, "zq3x", limit=5, flt=Filter())
        owners = {
            conn.execute(
                text("SELECT document_id FROM page_chunks WHERE id = :c"), {"c": cid}
            ).scalar_one()
            for cid, _ in hits
        }
        assert owners == {doc.id}
    assert calls[0] == ("store", 0, 12) and ("store", 12, 12) in calls
    embeds = [c for c in calls if c[0] == "embed"]
    assert embeds[-1][1] == embeds[-1][2] == counts["chunks"]


def test_second_import_skips_unchanged_and_reembeds_only_changed_chunks(
    db: Database, small_chunks: Settings
) -> None:
    ingest_records(db, small_chunks, CountingEmbedder(), _records())
    before = _counts(db)
    emb = CountingEmbedder()
    again = ingest_records(db, small_chunks, emb, _records())
    assert (again.added, again.updated, again.skipped, again.embedded) == (0, 0, 12, 0)
    assert emb.texts == [] and _counts(db) == before

    records = _records()
    # Change the last sentence of a multi-chunk record: its first chunks keep their vectors.
    records[10] = Record(records[10].key, records[10].title, records[10].text + " Amended end.")
    with db.read() as conn:
        old_file = conn.exec_driver_sql(
            "SELECT stored_path FROM documents WHERE source_key = 'doc-10'"
        ).scalar_one()
        old_ids = {
            int(r[0])
            for r in conn.exec_driver_sql(
                "SELECT c.id FROM page_chunks c JOIN documents d ON d.id = c.document_id "
                "WHERE d.source_key = 'doc-10'"
            )
        }
    emb = CountingEmbedder()
    changed = ingest_records(db, small_chunks, emb, records)
    assert (changed.updated, changed.skipped) == (1, 11)
    assert changed.chunks_kept >= 1 and changed.embedded == changed.chunks_inserted >= 1
    assert all("Amended" in t or t.startswith("Filler") for t in emb.texts)
    after = _counts(db)
    assert after["documents"] == after["ready"] == 12
    assert after["chunks"] == after["vectors"] == after["fts"]
    with db.read() as conn:
        new_ids = {
            int(r[0])
            for r in conn.exec_driver_sql(
                "SELECT c.id FROM page_chunks c JOIN documents d ON d.id = c.document_id "
                "WHERE d.source_key = 'doc-10'"
            )
        }
    assert old_ids & new_ids  # unchanged chunks kept their rows (and vectors)
    with db.read() as conn:
        new_file = conn.exec_driver_sql(
            "SELECT stored_path FROM documents WHERE source_key = 'doc-10'"
        ).scalar_one()
    assert not Path(old_file).exists() and "Amended end." in Path(new_file).read_text()


def test_a_key_repeated_in_one_import_keeps_its_last_text(db: Database, settings: Settings) -> None:
    first, second = Record("k", "T", "First text."), Record("k", "T", "Second text.")
    stats = ingest_records(db, settings, CountingEmbedder(), [first, second, second])
    assert (stats.added, stats.updated, stats.skipped) == (1, 1, 1)
    with db.read() as conn:
        rows = conn.exec_driver_sql(
            "SELECT p.document_id, p.page, d.status FROM pages p "
            "JOIN documents d ON d.id = p.document_id"
        ).all()
        texts = chunks.page_texts(conn, [(r[0], r[1]) for r in rows])
    assert [(texts[(r[0], r[1])], r[2]) for r in rows] == [("T\n\nSecond text.", "ready")]


def test_duplicates_empty_records_and_interrupted_runs(db: Database, settings: Settings) -> None:
    records = _records(3)
    dup = Record("copy-of-1", records[1].title, records[1].text)
    empty = Record("blank", "", "   ")
    stats = ingest_records(db, settings, CountingEmbedder(), [*records, dup, empty])
    assert stats.added == 3 and stats.empty == 1
    with db.read() as conn:
        doc1 = conn.execute(
            text("SELECT id FROM documents WHERE source_key = 'doc-1'")
        ).scalar_one()
    assert stats.duplicates == {"copy-of-1": doc1}
    # An interrupted run leaves a document stored but not ready; the next run finishes it.
    with db.write() as conn:
        conn.execute(text("UPDATE documents SET status = 'processing' WHERE id = :d"), {"d": doc1})
    resumed = ingest_records(db, settings, CountingEmbedder(), records)
    assert (resumed.resumed, resumed.skipped) == (1, 2)
    assert _counts(db)["ready"] == 3
