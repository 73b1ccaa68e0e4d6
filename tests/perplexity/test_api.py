"""POST /api/perplexity/sync and GET /api/perplexity/status through TestClient (lifespan runs):
a background sync against the fake site in real Chromium, 409s, the status, search after it."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from playwright.sync_api import Browser

from quire.config import Settings
from quire.ingest.worker import Worker
from quire.sources.perplexity.checkpoint import root
from tests.api.test_documents import assert_error_shape
from tests.e2e.helpers import wait_until
from tests.fakes.perplexity import FakePerplexity, make_thread
from tests.perplexity.conftest import fast_settings, log_in
from tests.runtime import make_app

pytestmark = pytest.mark.slow  # real Chromium against the fake site

THREADS = [make_thread(i, space="API") for i in range(1, 5)]


@pytest.fixture
def settings(tmp_path: Path, fake: FakePerplexity) -> Settings:
    fake.reset()
    return fast_settings(tmp_path / "data", fake)


def status(client: TestClient, **params: Any) -> dict[str, Any]:
    r = client.get("/api/perplexity/status", params=params)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def test_sync_without_a_login_is_a_409_with_the_hint(settings: Settings) -> None:
    with TestClient(make_app(settings)) as client:
        before = status(client)
        assert before["running"] is False and before["last_run"] is None
        assert before["login"] == {
            "saved": False,
            "saved_at": None,
            "valid": False,
            "checked_at": None,
            "expires": None,
            "user": None,
        }
        r = client.post("/api/perplexity/sync")
        assert r.status_code == 409
        assert_error_shape(r.json(), 409, "perplexity_login_required")
        assert "quire perplexity login" in r.json()["error"]["message"]
        assert status(client, verify=True)["login"]["saved"] is False
        bad = client.post("/api/perplexity/sync", json={"limit": 0})
        assert bad.status_code == 422
        assert_error_shape(bad.json(), 422, "validation_error")


def test_background_sync_one_at_a_time_then_status_and_search(
    settings: Settings, fake: FakePerplexity, chromium: Browser
) -> None:
    log_in(settings, fake, chromium)
    fake.latency_s = 0.15  # long enough to find the sync running
    with TestClient(make_app(settings)) as client:
        r = client.post("/api/perplexity/sync")
        assert r.status_code == 202, r.text
        assert r.json()["running"] is True
        again = client.post("/api/perplexity/sync", json={"limit": 2})
        assert again.status_code == 409
        assert_error_shape(again.json(), 409, "perplexity_sync_running")
        running = wait_until(
            lambda: (s := status(client))["current"] and s["current"]["total"] and s, 30, "progress"
        )
        assert running["running"] is True and running["current"]["total"] == 4
        done = wait_until(
            lambda: (s := status(client))["last_run"] and not s["running"] and s, 60, "the sync"
        )
        fake.latency_s = 0
        last = done["last_run"]
        assert last["outcome"] == "ok", last
        assert {
            k: last["counts"][k] for k in ("listed", "changed", "exported", "ingested", "failed")
        } == {
            "listed": 4,
            "changed": 4,
            "exported": 4,
            "ingested": 4,
            "failed": 0,
        }
        assert done["login"]["saved"] and done["login"]["valid"] is True
        assert done["login"]["user"] == "tester@example.com"
        assert done["threads"] == {"synced": 4, "deleted_upstream": 0}
        assert done["current"] is None and done["base_url"] == fake.url

        worker = Worker(settings)  # the worker process's job in production
        assert worker.run(drain=True) == 4
        worker.close()
        hits = client.post(
            "/api/search", json={"query": "glimmerstone count of topic 2 is 2001", "limit": 3}
        ).json()["hits"]
        assert hits[0]["page"] == 2 and hits[0]["kind"] == "perplexity"
        assert hits[0]["metadata"]["url"] == f"{fake.url}/search/{THREADS[1].slug}"

        # A live login check, valid, then after the session was revoked upstream.
        assert status(client, verify=True)["login"]["valid"] is True
        fake.revoke_sessions()
        checked = status(client, verify=True)["login"]
        assert checked["valid"] is False and checked["saved"] is True


def test_shutdown_stops_a_running_sync_which_resumes_later(
    settings: Settings, fake: FakePerplexity, chromium: Browser
) -> None:
    log_in(settings, fake, chromium)
    fake.latency_s = 0.3
    with TestClient(make_app(settings)) as client:
        assert client.post("/api/perplexity/sync").status_code == 202
        wait_until(
            lambda: (root(settings) / "run.json").exists() or fake.thread_fetches >= 1,
            30,
            "a thread",
        )
        started = time.monotonic()
    assert time.monotonic() - started < 20  # the lifespan waited a bounded time
    fake.latency_s = 0
    with TestClient(make_app(settings)) as client:
        last = status(client)["last_run"]
        assert last["outcome"] == "perplexity_sync_cancelled", last
        assert last["counts"]["exported"] < 4
        assert client.post("/api/perplexity/sync").status_code == 202
        done = wait_until(
            lambda: (s := status(client))["last_run"]["outcome"] == "ok" and s, 60, "resume"
        )
        assert done["last_run"]["resumed"] is True
        assert done["threads"]["synced"] == 4
