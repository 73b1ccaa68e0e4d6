"""`quire perplexity login|sync|status` as a user runs them (real processes, real Chromium):
a headless login, a sync killed with -9 mid-way that resumes, and the login-needed exit."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.e2e.helpers import QUIRE, env_for, open_db, quire, wait_until
from tests.fakes.perplexity import FakePerplexity, make_thread

pytestmark = pytest.mark.slow  # real processes

THREADS = [make_thread(i) for i in range(1, 7)]


def knobs(fake: FakePerplexity) -> dict[str, str]:
    return {
        "QUIRE_PERPLEXITY_URL": fake.url,
        "QUIRE_PERPLEXITY_DELAY_S": "0",
        "QUIRE_PERPLEXITY_BACKOFF_S": "0.05",
        "QUIRE_PERPLEXITY_RETRIES": "2",
        "QUIRE_PERPLEXITY_CHECKPOINT_EVERY": "1",
        "QUIRE_PERPLEXITY_TIMEOUT_S": "10",
    }


def test_login_sync_killed_then_resumed(tmp_path: Path, fake: FakePerplexity) -> None:
    data = tmp_path / "data"
    fake.auto_login = True
    r = quire(
        data, "perplexity", "login", "--headless", "--timeout", "20", timeout=60, **knobs(fake)
    )
    fake.auto_login = False
    assert r.returncode == 0, r.stdout + r.stderr
    assert "logged in as tester@example.com" in r.stdout
    assert oct((data / "perplexity" / "auth.json").stat().st_mode & 0o777) == "0o600"

    fake.reset()
    fake.latency_s = 0.25
    proc = subprocess.Popen(
        [*QUIRE, "perplexity", "sync", "--no-wait"],
        env=env_for(data, **knobs(fake)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its Playwright driver and Chromium share its process group
    )
    try:
        wait_until(lambda: fake.thread_fetches >= 3, 60, "three threads fetched")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    fake.latency_s = 0
    done = json.loads((data / "perplexity" / "run.json").read_text())["done"]
    assert 2 <= len(done) < len(THREADS)
    finished = {t.slug for t in THREADS if t.uuid in done}

    fake.reset()
    again = quire(data, "perplexity", "sync", timeout=240, **knobs(fake))
    assert again.returncode == 0, again.stdout + again.stderr
    assert "resumed an interrupted sync" in again.stdout
    fetched = {
        r.path.rsplit("/", 1)[1] for r in fake.requests_to("/rest/thread/") if "list" not in r.path
    }
    assert fetched == {t.slug for t in THREADS} - finished
    db = open_db(data)
    with db.read() as conn:
        rows = conn.exec_driver_sql("SELECT source_key, status FROM documents").all()
        dupes = conn.exec_driver_sql(
            "SELECT count(*) FROM (SELECT document_id, page, ordinal FROM page_chunks "
            "GROUP BY 1, 2, 3 HAVING count(*) > 1)"
        ).scalar_one()
    db.dispose()
    assert sorted(rows) == sorted((f"perplexity:{t.slug}", "ready") for t in THREADS)
    assert dupes == 0

    report = json.loads(quire(data, "perplexity", "status", "--json", **knobs(fake)).stdout)
    assert report["last_run"]["outcome"] == "ok" and report["threads"]["synced"] == len(THREADS)
    assert report["login"]["valid"] is True and report["running"] is False

    fake.revoke_sessions()
    out = quire(data, "perplexity", "sync", timeout=60, **knobs(fake))
    assert out.returncode == 3 and "quire perplexity login" in out.stderr
