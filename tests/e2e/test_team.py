"""The team library: worker processes of two "machines" (separate data directories, the shared
store mounted at different paths) ingest one PostgreSQL queue; one is killed with SIGKILL
mid-job and the other finishes everything, every document once."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from quire.config import Settings
from quire.storage.db import Database
from quire.storage.migrate import open_database
from tests.e2e.helpers import quire, start_worker, wait_until, write_long_text
from tests.pg import PgServer
from tests.runtime import make_app

pytestmark = pytest.mark.slow

DOCUMENTS = 4


def _counts(db: Database) -> dict[str, int]:
    """What must agree after any crash, in PostgreSQL's terms."""
    with db.read() as conn:

        def q(sql: str) -> int:
            return int(conn.execute(text(sql)).scalar_one())

        return {
            "documents": q("SELECT count(*) FROM documents"),
            "ready": q("SELECT count(*) FROM documents WHERE status = 'ready'"),
            "jobs_done": q("SELECT count(*) FROM ingest_jobs WHERE status = 'done'"),
            "jobs": q("SELECT count(*) FROM ingest_jobs"),
            "chunks": q("SELECT count(*) FROM page_chunks"),
            "indexed": q("SELECT count(*) FROM page_chunks WHERE bm25_len IS NOT NULL"),
            "vectors": q("SELECT count(*) FROM vec.page_vecs"),
            "bm25_rows": q("SELECT sum(rows) FROM bm25_totals"),
            "duplicate_positions": q(
                "SELECT count(*) FROM (SELECT document_id, page, ordinal FROM page_chunks "
                "GROUP BY 1, 2, 3 HAVING count(*) > 1) AS d"
            ),
            "retried": q("SELECT count(*) FROM ingest_jobs WHERE attempts > 1"),
            "workers": q("SELECT count(DISTINCT worker_id) FROM ingest_jobs"),
        }


def test_two_machines_share_one_queue_and_survive_a_kill_9(
    tmp_path: Path, pg_server: PgServer
) -> None:
    url = pg_server.create_database()
    shared = tmp_path / "nfs" / "originals"
    shared.mkdir(parents=True)
    # Machine B mounts the same store elsewhere: it finds originals by content address.
    mount_b = tmp_path / "mnt-b"
    mount_b.symlink_to(shared)
    machine_a = {"QUIRE_DATABASE_URL": url, "QUIRE_ORIGINALS_DIR": str(shared)}
    machine_b = {"QUIRE_DATABASE_URL": url, "QUIRE_ORIGINALS_DIR": str(mount_b)}
    docs = [
        write_long_text(tmp_path / f"doc{i}.txt", paragraphs=30, seed=100 + i)
        for i in range(DOCUMENTS)
    ]
    r = quire(tmp_path / "a", "ingest", *map(str, docs), **machine_a)
    assert r.returncode == 0, r.stderr
    db = open_database(Settings(data_dir=tmp_path / "observer", database_url=url))
    try:
        assert _counts(db)["jobs"] == DOCUMENTS
        log_a, log_b = tmp_path / "a.log", tmp_path / "b.log"
        worker_a = start_worker(tmp_path / "a", log_a, QUIRE_EMBED_BATCH="4", **machine_a)
        worker_b = start_worker(tmp_path / "b", log_b, QUIRE_EMBED_BATCH="4", **machine_b)
        try:
            # Kill A while it holds a job, mid-embedding.
            wait_until(lambda: _counts(db)["vectors"] >= 8, 180, "some vectors to be written")
            worker_a.send_signal(signal.SIGKILL)
            worker_a.wait(timeout=10)
            wait_until(lambda: _counts(db)["jobs_done"] == DOCUMENTS, 600, "B to finish every job")
        finally:
            for worker in (worker_a, worker_b):
                if worker.poll() is None:
                    worker.terminate()
                    worker.wait(timeout=30)
        counts = _counts(db)
        logs = log_a.read_text() + log_b.read_text()
        assert counts["documents"] == counts["ready"] == DOCUMENTS, (counts, logs[-3000:])
        assert counts["jobs"] == DOCUMENTS  # no job lost, none duplicated
        assert counts["chunks"] == counts["indexed"] == counts["vectors"] == counts["bm25_rows"]
        assert counts["duplicate_positions"] == 0
        assert counts["retried"] >= 1  # A's job, taken over by B
        assert counts["workers"] == 2 or "attempt 2" in log_b.read_text()
        # Every document is found by a keyword search from a third machine.
        r = quire(tmp_path / "c", "search", "Paragraph 7", "--json", "--limit", "60", **machine_b)
        assert r.returncode == 0, r.stderr
        assert len({h["document_id"] for h in json.loads(r.stdout)["hits"]}) == DOCUMENTS
    finally:
        db.dispose()
        pg_server.drop_database(url)


@pytest.fixture
def own_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PgServer]:
    """A server of this test's own, to stop and start again."""
    server = PgServer.start(tmp_path_factory.mktemp("pgown"))
    yield server
    server.stop()


def test_the_database_going_away_mid_ingest_and_mid_search(
    tmp_path: Path, own_server: PgServer
) -> None:
    url = own_server.create_database()
    env = {"QUIRE_DATABASE_URL": url, "QUIRE_JOB_STALE_S": "3"}
    settings = Settings(data_dir=tmp_path / "api", database_url=url)
    doc = write_long_text(tmp_path / "long.txt", paragraphs=60, seed=3)
    r = quire(tmp_path / "cli", "ingest", str(doc), **env)
    assert r.returncode == 0, r.stderr
    db = open_database(settings)
    log = tmp_path / "worker.log"
    worker = start_worker(tmp_path / "w", log, QUIRE_EMBED_BATCH="4", **env)
    try:
        with TestClient(make_app(settings)) as client:
            wait_until(lambda: _counts(db)["vectors"] >= 8, 180, "some vectors to be written")
            assert client.post("/api/search", json={"query": "basalt glacier"}).status_code == 200
            own_server.pg_ctl("stop", "-m", "fast")
            down = client.post("/api/search", json={"query": "basalt glacier"})
            assert down.status_code == 503, down.text
            assert down.json()["error"]["code"] == "unavailable"
            assert "database is unreachable" in down.json()["error"]["message"]
            time.sleep(2)  # the worker meets the outage too
            own_server.pg_ctl("restart")
            wait_until(lambda: _counts(db)["jobs_done"] == 1, 300, "the job to finish")
            back = client.post("/api/search", json={"query": "basalt glacier"})
            assert back.status_code == 200 and back.json()["hits"], back.text
        assert worker.poll() is None, "the worker must outlive the outage"
        counts = _counts(db)
        assert counts["documents"] == counts["ready"] == counts["jobs"] == 1
        assert counts["chunks"] == counts["indexed"] == counts["vectors"] == counts["bm25_rows"]
        assert counts["duplicate_positions"] == 0
        assert "database unreachable" in log.read_text()
    finally:
        worker.terminate()
        worker.wait(timeout=30)
        db.dispose()
