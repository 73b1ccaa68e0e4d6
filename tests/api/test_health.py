"""GET /api/health: what the service holds and which models it runs with."""

from __future__ import annotations

import io
import logging
import time

import pytest
from fastapi.testclient import TestClient

from quire.config import Settings
from tests.runtime import drain, make_app

pytestmark = pytest.mark.both_backends


def test_health_names_the_embedder_and_the_reranker_state(client: TestClient) -> None:
    body = client.get("/api/health").json()
    assert body["status"] == "ok" and body["documents"] == 0
    assert body["embedder"] == {"name": "local:all-MiniLM-L6-v2-int8", "dim": 384}
    reranker = body["reranker"]
    assert reranker["loaded"] is False and "not installed" in reranker["error"]
    assert "quire models pull reranker" in reranker["error"]
    assert reranker["model"].endswith("cross-encoder/ms-marco-MiniLM-L-6-v2")


def test_search_warms_up_in_the_background_at_start_and_health_says_so(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    with TestClient(make_app(settings)) as client:
        r = client.post(
            "/api/documents",
            files=[("files", ("notes.md", io.BytesIO(b"# Tides\n\nThe tide turns twice a day.")))],
        )
        assert r.status_code == 202, r.text
        assert drain(settings) == 1
        assert client.get("/api/health").json()["warm"] is False  # QUIRE_WARM_UP=0 here
    warming = settings.model_copy(update={"warm_up": True})
    caplog.set_level(logging.INFO, logger="quire")
    with TestClient(make_app(warming)) as client:
        deadline = time.monotonic() + 60
        while not client.get("/api/health").json()["warm"]:
            assert time.monotonic() < deadline, "search did not warm up in 60 s"
            time.sleep(0.05)
    warmed = [r.getMessage() for r in caplog.records if "warmed up" in r.getMessage()]
    assert warmed, "the warm-up did not search"
    if settings.database_url is None:  # SQLite serves vectors from a mirror it loads then
        loaded = [r.getMessage() for r in caplog.records if "dense mirror loaded" in r.getMessage()]
        assert loaded and loaded[0].endswith(": 1 vectors")
