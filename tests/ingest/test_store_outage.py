"""The originals store (QUIRE_ORIGINALS_DIR, a share every machine mounts) going away: a job
waits for it however long it takes, never failing the document, and runs once it is back;
the file route answers 503 meanwhile. A file missing from a store that is there fails its job
with the reason. Both backends."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from quire.config import Settings
from quire.ingest.intake import add_file
from quire.ingest.worker import Worker
from quire.storage.migrate import open_database
from tests.api.test_documents import assert_error_shape
from tests.runtime import make_app

pytestmark = pytest.mark.both_backends


def _state(settings: Settings, doc_id: int) -> tuple[str, str | None, str, str | None, int]:
    db = open_database(settings)
    with db.read() as conn:
        row = conn.execute(
            text(
                "SELECT d.status, d.error, j.status, j.error, j.attempts FROM documents d "
                "JOIN ingest_jobs j ON j.document_id = d.id WHERE d.id = :d "
                "ORDER BY j.id DESC LIMIT 1"
            ),
            {"d": doc_id},
        ).one()
    db.dispose()
    return row[0], row[1], row[2], row[3], int(row[4])


def _due_now(worker: Worker) -> None:
    with worker.db.write() as conn:
        conn.execute(text("UPDATE ingest_jobs SET not_before = NULL WHERE status = 'queued'"))


def test_a_job_waits_for_an_unreachable_store_and_runs_when_it_is_back(
    tmp_path: Path, database_url: str | None
) -> None:
    store = tmp_path / "share" / "originals"
    settings = Settings(
        data_dir=tmp_path / "data",
        database_url=database_url,
        originals_dir=store,
        llm_backends="none",
        job_max_attempts=2,
    )
    note = tmp_path / "tide.md"
    note.write_text("# Tide\n\nThe tide at Brest rose 7.4 metres on the equinox.\n")
    worker = Worker(settings)
    doc_id = add_file(worker.db, settings.files_dir, note, "tide.md", max_bytes=1 << 20).document_id
    unmounted = store.rename(tmp_path / "share" / "elsewhere")  # the share went away
    for _ in range(4):  # twice job_max_attempts: still waiting, never failed
        worker.run(drain=True)
        status, error, job_status, job_error, attempts = _state(settings, doc_id)
        assert (status, job_status) == ("queued", "queued"), (status, job_status, job_error)
        assert "cannot be read (is the share mounted?)" in (job_error or "")
        assert error is not None and error.startswith("retrying:")
        _due_now(worker)
    assert attempts == 4
    with TestClient(make_app(settings)) as client:
        r = client.get(f"/api/documents/{doc_id}/file")
        assert r.status_code == 503
        assert_error_shape(r.json(), 503, "store_unavailable")
    unmounted.rename(store)  # back
    worker.run(drain=True)
    assert _state(settings, doc_id)[0] == "ready"

    # The store is there but the file is not: the job fails, saying which file.
    other = tmp_path / "gone.md"
    other.write_text("# Gone\n\nA note whose original will vanish.\n")
    gone = add_file(worker.db, settings.files_dir, other, "gone.md", max_bytes=1 << 20)
    with worker.db.read() as conn:
        stored = conn.execute(
            text("SELECT stored_path FROM documents WHERE id = :d"), {"d": gone.document_id}
        ).scalar_one()
    assert Path(stored).is_relative_to(store)
    Path(stored).unlink()
    worker.run(drain=True)
    status, error, job_status, job_error, _ = _state(settings, gone.document_id)
    assert (status, job_status) == ("failed", "failed")
    assert error is not None and "is missing from" in error and str(store) in error
    with TestClient(make_app(settings)) as client:
        r = client.get(f"/api/documents/{gone.document_id}/file")
        assert r.status_code == 404 and "is missing" in r.json()["error"]["message"]
    worker.close()
