"""The job queue: atomic claims, reclaiming jobs of dead workers, retry backoff."""

from __future__ import annotations

import subprocess
import sys
import threading
from datetime import timedelta

import pytest
from sqlalchemy import text

from quire.storage import jobs
from quire.storage.db import Database
from quire.storage.schema import utcnow

pytestmark = pytest.mark.both_backends


def _doc(db: Database, n: int) -> int:
    with db.write() as conn:
        return int(
            conn.execute(
                text(
                    "INSERT INTO documents (kind, filename, sha256, byte_size, stored_path, "
                    f"created_at, updated_at) VALUES ('text', 'f{n}', 'sha{n}', 1, '/x', :t, :t) "
                    "RETURNING id"
                ),
                {"t": utcnow()},
            ).scalar_one()
        )


def test_a_job_taken_is_starting_until_its_first_stage(db: Database) -> None:
    doc = _doc(db, 0)
    with db.write() as conn:
        job_id = jobs.enqueue(conn, doc)
        assert jobs.get(conn, job_id).stage == "queued"
        job = jobs.claim(conn, "w1", stale_s=3600)
        assert job is not None and (job.status, job.stage) == ("running", "starting")
        jobs.report(conn, job_id, owner="w1", stage="extract")
        assert jobs.get(conn, job_id).stage == "extract"


def test_each_job_is_claimed_by_exactly_one_of_many_workers(db: Database) -> None:
    ids: set[int] = set()
    for n in range(40):
        doc = _doc(db, n)
        with db.write() as conn:
            ids.add(jobs.enqueue(conn, doc))
    claimed: list[int] = []
    lock = threading.Lock()

    def work(name: str) -> None:
        while True:
            with db.write() as conn:
                job = jobs.claim(conn, f"{name}", stale_s=3600)
            if job is None:
                return
            with lock:
                claimed.append(job.id)

    threads = [threading.Thread(target=work, args=(f"w{i}",)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(claimed) == sorted(ids)
    assert len(claimed) == len(set(claimed)) == 40


def test_enqueue_reuses_the_unfinished_job_of_a_document(db: Database) -> None:
    doc = _doc(db, 1)
    with db.write() as conn:
        first = jobs.enqueue(conn, doc)
        assert jobs.enqueue(conn, doc) == first
        assert jobs.enqueue(conn, None, "reembed") == jobs.enqueue(conn, None, "reembed")


def test_writers_enqueuing_one_document_at_once_make_one_job(db: Database) -> None:
    """Eight threads (as API replicas would) queue the same document, and the same kind of
    library-wide job, at the same moment: one open job each, every caller told its id."""
    doc = _doc(db, 1)
    barrier = threading.Barrier(8)
    got: list[tuple[int, int]] = []
    lock = threading.Lock()

    def enqueue() -> None:
        barrier.wait(timeout=30)
        with db.write() as conn:
            pair = (jobs.enqueue(conn, doc), jobs.enqueue(conn, None, "reembed"))
        with lock:
            got.append(pair)

    threads = [threading.Thread(target=enqueue) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(got) == 8 and len(set(got)) == 1, got
    with db.read() as conn:
        open_jobs = conn.execute(
            text("SELECT count(*) FROM ingest_jobs WHERE status = 'queued'")
        ).scalar_one()
    assert open_jobs == 2


def test_job_of_a_dead_worker_process_is_claimed_again(db: Database) -> None:
    doc = _doc(db, 1)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    pid = int(dead.stdout)
    host_identity = jobs.worker_identity().split(":")[0]
    with db.write() as conn:
        job_id = jobs.enqueue(conn, doc)
        job = jobs.claim(conn, f"{host_identity}:{pid}:0", stale_s=3600)
        assert job is not None and job.id == job_id
    with db.write() as conn:
        again = jobs.claim(conn, jobs.worker_identity(), stale_s=3600)
    assert again is not None and again.id == job_id and again.attempts == 2


def test_running_job_of_a_live_worker_is_left_alone_until_stale(db: Database) -> None:
    doc = _doc(db, 1)
    with db.write() as conn:
        jobs.enqueue(conn, doc)
        assert jobs.claim(conn, "otherhost:1:0", stale_s=3600) is not None
    with db.write() as conn:
        assert jobs.claim(conn, jobs.worker_identity(), stale_s=3600) is None
    with db.write() as conn:
        conn.execute(
            text("UPDATE ingest_jobs SET heartbeat = :t"), {"t": utcnow() - timedelta(hours=2)}
        )
        stale = jobs.claim(conn, jobs.worker_identity(), stale_s=60)
    assert stale is not None


def test_retry_waits_for_not_before(db: Database) -> None:
    doc = _doc(db, 1)
    with db.write() as conn:
        jobs.enqueue(conn, doc)
        job = jobs.claim(conn, "w", stale_s=3600)
        assert job is not None
        jobs.fail(conn, job.id, "ollama down", retry_at=utcnow() + timedelta(hours=1))
        assert jobs.claim(conn, "w", stale_s=3600) is None
        conn.execute(
            text("UPDATE ingest_jobs SET not_before = :t"), {"t": utcnow() - timedelta(seconds=1)}
        )
        retried = jobs.claim(conn, "w", stale_s=3600)
    assert retried is not None and retried.attempts == 2 and retried.error is None
