"""The ingest pipeline in-process: versions re-embed only what changed, model changes rebuild
the vector store, a dead embedder is retried and then fails the job with a clear reason."""

from __future__ import annotations

import json
from pathlib import Path

from quire.config import Settings
from quire.ingest.intake import Intake, add_file
from quire.ingest.worker import Worker
from quire.storage import vectors
from quire.storage.db import Database
from tests.e2e.helpers import integrity, write_long_text
from tests.fakes import FakeOllama


def _add(db: Database, settings: Settings, path: Path, key: str | None = None) -> Intake:
    return add_file(
        db,
        settings.files_dir,
        path,
        path.name,
        max_bytes=settings.max_upload_bytes,
        source_key=key,
    )


def _detail(db: Database, job_id: int | None) -> dict[str, object]:
    with db.read() as conn:
        raw = conn.exec_driver_sql(
            "SELECT detail FROM ingest_jobs WHERE id = ?", (job_id,)
        ).scalar_one()
    return dict(json.loads(raw))


def test_changed_document_reembeds_only_changed_chunks(
    tmp_path: Path, settings: Settings, db: Database
) -> None:
    path = write_long_text(tmp_path / "notes.txt", paragraphs=12)
    key = f"path:{path}"
    first = _add(db, settings, path, key)
    worker = Worker(settings, db=db)
    worker.run(drain=True)
    d1 = _detail(db, first.job_id)
    total = d1["chunks"]
    assert isinstance(total, int) and total >= 12
    assert d1["embedded"] == total

    # Same bytes again: one document, nothing queued.
    again = _add(db, settings, path, key)
    assert again.status == "duplicate" and again.document_id == first.document_id

    text = path.read_text()
    path.write_text(text.replace("Paragraph 5.", "Paragraph 5 (revised).", 1))
    second = _add(db, settings, path, key)
    assert second.status == "updated" and second.document_id == first.document_id
    worker.run(drain=True)
    d2 = _detail(db, second.job_id)
    assert d2["chunks"] == total
    assert 1 <= int(d2["embedded"]) <= 2  # the edited paragraph's chunk(s) only
    assert d2["kept"] == total - int(d2["inserted"])
    counts = integrity(db)
    assert counts["chunks"] == counts["vectors"] == total
    assert counts["orphan_vectors"] == 0
    with db.read() as conn:
        hit = conn.exec_driver_sql(
            "SELECT count(*) FROM page_chunks_fts WHERE page_chunks_fts MATCH 'revised'"
        ).scalar_one()
        docs = conn.exec_driver_sql("SELECT count(*), min(status) FROM documents").one()
    assert hit == 1 and tuple(docs) == (1, "ready")
    # The old original was replaced, not kept beside the new one.
    assert len(list(settings.files_dir.rglob("*.txt"))) == 1


def test_embedding_model_change_rebuilds_the_vector_store(
    tmp_path: Path, settings: Settings, db: Database
) -> None:
    path = write_long_text(tmp_path / "notes.txt", paragraphs=5)
    _add(db, settings, path)
    Worker(settings, db=db).run(drain=True)
    with db.read() as conn:
        meta = vectors.read_meta(conn)
    assert meta is not None and meta.model.startswith("local:") and meta.dim == 384

    with FakeOllama(["nomic-embed-text:latest"], dim=64) as fake:
        ollama = settings.model_copy(update={"embedder": "ollama", "ollama_url": fake.url})
        worker = Worker(ollama, db=db)
        worker.run(drain=True)
        worker.close()
        with db.read() as conn:
            meta = vectors.read_meta(conn)
            chunks = conn.exec_driver_sql("SELECT count(*) FROM page_chunks").scalar_one()
            jobs = conn.exec_driver_sql("SELECT kind, status FROM ingest_jobs ORDER BY id").all()
        assert meta is not None
        assert (meta.model, meta.dim, meta.state) == ("ollama:nomic-embed-text", 64, "ready")
        assert [tuple(j) for j in jobs] == [("ingest", "done"), ("reembed", "done")]
        assert integrity(db)["vectors"] == chunks
        assert fake.requests_to("/api/embed")


def test_dead_embedder_is_retried_then_fails_with_a_reason(
    tmp_path: Path, settings: Settings, db: Database
) -> None:
    path = write_long_text(tmp_path / "notes.txt", paragraphs=2)
    intake = _add(db, settings, path)
    ollama = settings.model_copy(update={"embedder": "ollama", "job_max_attempts": 2})
    with FakeOllama(["nomic-embed-text:latest"], dim=32) as fake:
        worker = Worker(ollama.model_copy(update={"ollama_url": fake.url}), db=db)
        assert worker.embedder.dim == 32  # learned while the server was up
    # The server is gone now: embedding fails as with a stopped Ollama.
    worker.run(drain=True)
    with db.read() as conn:
        job = conn.exec_driver_sql(
            "SELECT status, attempts, error FROM ingest_jobs WHERE id = ?", (intake.job_id,)
        ).one()
        doc = conn.exec_driver_sql("SELECT status, error FROM documents").one()
    assert job.status == "queued" and job.attempts == 1  # waiting for its retry
    assert doc.status == "queued" and doc.error.startswith("retrying:")
    with db.write() as conn:
        conn.exec_driver_sql("UPDATE ingest_jobs SET not_before = NULL")
    worker.run(drain=True)
    with db.read() as conn:
        job = conn.exec_driver_sql(
            "SELECT status, attempts, error FROM ingest_jobs WHERE id = ?", (intake.job_id,)
        ).one()
        doc = conn.exec_driver_sql("SELECT status, error FROM documents").one()
    worker.close()
    assert job.status == "failed" and job.attempts == 2
    assert "127.0.0.1" in job.error and doc.status == "failed"


def test_per_document_time_limit_fails_the_job(
    tmp_path: Path, settings: Settings, db: Database
) -> None:
    from tests.conftest import DOCS

    slow = settings.model_copy(update={"job_timeout_s": 1.0, "ocr_dpi": 300})
    intake = _add(db, slow, DOCS / "pdf" / "scan-grumman-175.pdf")
    worker = Worker(slow, db=db)
    worker.run(drain=True)
    worker.close()
    with db.read() as conn:
        job = conn.exec_driver_sql(
            "SELECT status, error FROM ingest_jobs WHERE id = ?", (intake.job_id,)
        ).one()
        chunks = conn.exec_driver_sql("SELECT count(*) FROM page_chunks").scalar_one()
    assert job.status == "failed" and "1 s limit" in job.error
    assert chunks == 0
