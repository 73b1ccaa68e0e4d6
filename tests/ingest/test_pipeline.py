"""The ingest pipeline in-process: versions re-embed only what changed, model changes rebuild
the vector store, a dead embedder is retried and then fails the job with a clear reason, a
PDF's text layer is searchable while its scanned pages are read."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path

from fpdf import FPDF

from quire.config import Settings
from quire.formats.types import Extracted
from quire.ingest.intake import Intake, add_file
from quire.ingest.isolate import extract_isolated
from quire.ingest.worker import Worker
from quire.retrieval.filters import Filter
from quire.storage import vectors
from quire.storage.db import Database
from tests import legs
from tests.conftest import DOCS
from tests.e2e.helpers import integrity, write_long_text
from tests.fakes import FakeOllama

SCAN = DOCS / "pdf" / "scan-grumman-175.pdf"


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


def mixed_pdf(tmp_path: Path) -> Path:
    """A born-digital text page, then a scanned page (the Grumman scan's first page as an
    image): the second needs OCR, the first does not."""
    png = tmp_path / "scan"
    subprocess.run(
        ["pdftoppm", "-png", "-r", "150", "-f", "1", "-l", "1", "-singlefile", str(SCAN), str(png)],
        check=True,
    )
    pdf = FPDF(format="letter", unit="pt")
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.multi_cell(
        0,
        16,
        "Maintenance timetable. The kingfisher inspection of the landing gear happens every "
        "hundred hours; the kingfisher log records each inspection with its date and mechanic. "
        * 3,
    )
    pdf.add_page()
    pdf.image(str(png) + ".png", x=0, y=0, w=612, h=792)
    out = tmp_path / "mixed.pdf"
    pdf.output(str(out))
    return out


def test_the_text_layer_is_handed_over_before_the_ocr_pages(tmp_path: Path) -> None:
    events: list[tuple[str, object]] = []
    final = extract_isolated(
        mixed_pdf(tmp_path),
        Settings(data_dir=tmp_path / "data", ocr_dpi=200),
        timeout_s=120,
        on_progress=lambda stage, f: events.append(("progress", stage)),
        on_partial=lambda ex: events.append(("partial", ex)),
    )
    partials = [e for e in events if e[0] == "partial"]
    assert len(partials) == 1
    early = partials[0][1]
    assert isinstance(early, Extracted)
    assert early.metadata["ocr_pending"] == [2]
    assert [p.source for p in early.pages] == ["text_layer", "text_layer"]
    assert "kingfisher inspection" in early.pages[0].text
    # The partial comes before OCR starts; the final pages have the scan read.
    assert events.index(partials[0]) < events.index(("progress", "ocr"))
    assert [p.source for p in final.pages] == ["text_layer", "ocr"]
    assert "ACCESSORY KIT" in final.pages[1].text
    assert final.pages[0].text == early.pages[0].text


def test_a_pdf_is_searchable_by_its_text_layer_while_its_scans_are_read(
    tmp_path: Path, settings: Settings, db: Database
) -> None:
    intake = _add(db, settings, mixed_pdf(tmp_path))
    worker = Worker(settings, db=db)
    thread = threading.Thread(target=worker.run, kwargs={"drain": True}, daemon=True)
    thread.start()
    seen: set[tuple[str, bool, bool]] = set()
    deadline = time.monotonic() + 120
    while thread.is_alive() and time.monotonic() < deadline:
        with db.read() as conn:
            status = conn.exec_driver_sql("SELECT status FROM documents").scalar_one()
            text_page = bool(legs.lexical(conn).bm25(conn, "kingfisher", limit=5, flt=Filter()))
            scan_page = bool(legs.lexical(conn).bm25(conn, "accessory kit", limit=5, flt=Filter()))
        seen.add((status, text_page, scan_page))
        time.sleep(0.02)
    thread.join(timeout=10)
    # Searchable by the text page while the scanned page was still being read.
    assert ("searchable", True, False) in seen, seen
    assert all(not (t or s) for status, t, s in seen if status in ("queued", "processing"))
    detail = _detail(db, intake.job_id)
    assert detail["searchable_pages"] == 1 and detail["ocr_pages"] == 1
    assert (detail["kept"], detail["inserted"]) == (0, detail["chunks"])  # a first version
    assert 0 < float(detail["searchable_s"]) < float(sum(detail["timings"].values()))  # type: ignore[arg-type]
    with db.read() as conn:
        assert conn.exec_driver_sql("SELECT status FROM documents").scalar_one() == "ready"
        assert legs.lexical(conn).bm25(conn, "accessory kit", limit=5, flt=Filter())  # the OCR page
    assert integrity(db)["vectors"] == integrity(db)["chunks"]
