"""GET /api/health: what the service holds and which models it runs with."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

pytestmark = pytest.mark.both_backends


def test_health_names_the_embedder_and_the_reranker_state(client: TestClient) -> None:
    body = client.get("/api/health").json()
    assert body["status"] == "ok" and body["documents"] == 0
    assert body["embedder"] == {"name": "local:all-MiniLM-L6-v2-int8", "dim": 384}
    reranker = body["reranker"]
    assert reranker["loaded"] is False and "not installed" in reranker["error"]
    assert "quire models pull reranker" in reranker["error"]
    assert reranker["model"].endswith("cross-encoder/ms-marco-MiniLM-L-6-v2")
