"""The real worker process: kill -9 mid-document and resume, failures isolated, many workers."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from tests.conftest import DOCS
from tests.e2e.helpers import (
    integrity,
    open_db,
    quire,
    start_worker,
    wait_until,
    write_long_text,
)

pytestmark = pytest.mark.slow


def _job(db, doc_id: int):  # type: ignore[no-untyped-def]
    with db.read() as conn:
        return conn.exec_driver_sql(
            "SELECT status, stage, progress, attempts, detail, error FROM ingest_jobs "
            "WHERE document_id = ? ORDER BY id DESC",
            (doc_id,),
        ).first()


def _vectors(db) -> int:  # type: ignore[no-untyped-def]
    with db.read() as conn:
        return int(conn.exec_driver_sql("SELECT count(*) FROM vec.page_vecs").scalar_one())


def test_kill_9_during_embedding_resumes_without_duplicates(tmp_path: Path) -> None:
    data = tmp_path / "data"
    doc = write_long_text(tmp_path / "long.txt", paragraphs=120)
    r = quire(data, "ingest", str(doc))
    assert r.returncode == 0, r.stderr
    db = open_db(data)
    log = tmp_path / "worker.log"
    worker = start_worker(data, log, QUIRE_EMBED_BATCH="4")
    try:
        wait_until(lambda: _vectors(db) >= 12, 120, "some vectors to be written")
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=10)
    finally:
        if worker.poll() is None:
            worker.kill()
    before = integrity(db)
    assert 0 < before["vectors"] < before["chunks"], before
    job = _job(db, 1)
    assert job.status == "running" and job.stage == "embed"
    # Killed mid-embedding, the document is searchable by keywords, and a search says so.
    with db.read() as conn:
        assert conn.exec_driver_sql("SELECT status FROM documents").scalar_one() == "searchable"
    found = _search(data, "basalt glacier")
    assert {h["document_id"] for h in found["hits"]} == {1}
    assert any("searchable by keywords only" in n for n in found["notices"])

    worker = start_worker(data, log, QUIRE_EMBED_BATCH="4")
    try:
        wait_until(lambda: _job(db, 1).status == "done", 180, "the resumed job to finish")
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    after = integrity(db)
    assert after["chunks"] == before["chunks"]
    assert after["vectors"] == after["chunks"] == after["fts"] == after["tri"]
    assert after["orphan_vectors"] == after["duplicate_positions"] == 0
    job = _job(db, 1)
    detail = json.loads(job.detail)
    assert job.attempts == 2
    assert detail["kept"] == after["chunks"] and detail["inserted"] == 0
    # Only what was missing was embedded the second time.
    assert detail["embedded"] == after["chunks"] - before["vectors"]
    with db.read() as conn:
        assert conn.exec_driver_sql("SELECT status FROM documents").scalar_one() == "ready"
    assert not any("searchable by keywords" in n for n in _search(data, "basalt")["notices"])
    db.dispose()


def _search(data: Path, query: str) -> dict:  # type: ignore[type-arg]
    r = quire(data, "search", query, "--json", "--limit", "5")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_kill_9_during_ocr_resumes_and_reads_both_pages(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert quire(data, "ingest", str(DOCS / "pdf" / "scan-grumman-175.pdf")).returncode == 0
    db = open_db(data)
    log = tmp_path / "worker.log"
    worker = start_worker(data, log)
    try:
        wait_until(
            lambda: _job(db, 1).stage in ("ocr", "extract") and _job(db, 1).status == "running",
            60,
            "extraction to start",
        )
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=10)
    finally:
        if worker.poll() is None:
            worker.kill()
    worker = start_worker(data, log)
    try:
        wait_until(lambda: _job(db, 1).status in ("done", "failed"), 240, "OCR job to end")
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    assert _job(db, 1).status == "done", _job(db, 1).error
    with db.read() as conn:
        pages = conn.exec_driver_sql("SELECT page, source, char_count FROM pages").all()
    assert [(p[0], p[1]) for p in pages] == [(1, "ocr"), (2, "ocr")]
    assert all(p[2] > 100 for p in pages)
    counts = integrity(db)
    assert counts["vectors"] == counts["chunks"] > 0 and counts["orphan_vectors"] == 0
    db.dispose()


def test_bad_file_fails_its_job_and_the_worker_goes_on(tmp_path: Path) -> None:
    data = tmp_path / "data"
    real = (DOCS / "pdf" / "dmca-summary.pdf").read_bytes()
    truncated = tmp_path / "truncated.pdf"
    truncated.write_bytes(real[: len(real) // 3])
    good = tmp_path / "good.md"
    good.write_text("# Notes\n\nThe worker keeps serving after a bad file.\n", encoding="utf-8")
    r = quire(data, "ingest", str(truncated), str(good))
    assert r.returncode == 0, r.stderr
    log = tmp_path / "worker.log"
    worker = start_worker(data, log)
    db = open_db(data)
    try:
        wait_until(lambda: _job(db, 2) and _job(db, 2).status == "done", 120, "good file")
        assert worker.poll() is None, "worker died"
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    bad = _job(db, 1)
    assert bad.status == "failed" and bad.error
    with db.read() as conn:
        doc = conn.exec_driver_sql("SELECT status, error FROM documents WHERE id = 1").one()
    assert doc.status == "failed" and doc.error == bad.error
    docs = json.loads(quire(data, "docs", "--json").stdout)
    assert {d["id"]: d["status"] for d in docs} == {1: "failed", 2: "ready"}
    db.dispose()


def test_two_workers_share_the_queue(tmp_path: Path) -> None:
    data = tmp_path / "data"
    files = [
        DOCS / "epub" / "alice-epub3.epub",
        DOCS / "epub" / "readium-smoketest-epub2.epub",
        DOCS / "perplexity" / "pnw-states-multiturn.md",
        DOCS / "pdf" / "polish-invoice-identity-cmap.pdf",
    ]
    assert quire(data, "ingest", *map(str, files)).returncode == 0
    log = tmp_path / "worker.log"
    workers = [start_worker(data, log), start_worker(data, log)]
    db = open_db(data)
    try:

        def all_done() -> bool:
            with db.read() as conn:
                return conn.exec_driver_sql(
                    "SELECT count(*) FROM ingest_jobs WHERE status = 'done'"
                ).scalar_one() == len(files)

        wait_until(all_done, 240, "all jobs")
    finally:
        for w in workers:
            w.terminate()
        for w in workers:
            w.wait(timeout=30)
    with db.read() as conn:
        owners = conn.exec_driver_sql("SELECT attempts FROM ingest_jobs").scalars().all()
    assert owners == [1] * len(files)
    counts = integrity(db)
    assert counts["vectors"] == counts["chunks"] and counts["duplicate_positions"] == 0
    db.dispose()


def test_the_worker_lowers_its_cpu_priority(tmp_path: Path) -> None:
    data = tmp_path / "data"
    base = os.getpriority(os.PRIO_PROCESS, 0)
    worker = start_worker(data, tmp_path / "worker.log", QUIRE_WORKER_NICE="7")
    try:
        wait_until(
            lambda: os.getpriority(os.PRIO_PROCESS, worker.pid) == min(19, base + 7),
            30,
            "the worker to lower its priority",
        )
    finally:
        worker.terminate()
        worker.wait(timeout=30)
