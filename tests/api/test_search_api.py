"""POST /api/search: what it returns, and a 4xx (never a 500) for every bad request."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from quire.retrieval.search import NO_CROSS_ENCODER
from tests.api.library import FILES
from tests.api.test_documents import assert_error_shape
from tests.libraries import library_copy
from tests.runtime import make_app

pytestmark = pytest.mark.both_backends


@pytest.fixture(scope="module")
def loaded(request: pytest.FixtureRequest, backend: str) -> Iterator[TestClient]:
    """The API on this module's copy of the Alice + DMCA library (tests/libraries.py)."""
    for settings in library_copy(request, backend, FILES):
        with TestClient(make_app(settings)) as client:
            yield client


def test_search_returns_cited_passages_with_ranks_and_timings(loaded: TestClient) -> None:
    r = loaded.post(
        "/api/search",
        json={"query": "Rabbit took a watch out of its pocket", "limit": 5, "context": True},
    )
    assert r.status_code == 200, r.text
    body = r.json()
    hit = body["hits"][0]
    assert hit["kind"] == "epub" and hit["title"].startswith("Alice")
    assert hit["page"] >= 1 and hit["heading_path"]
    assert hit["ranks"] and hit["scores"] and hit["highlights"]
    s, e = hit["highlights"][0]
    assert hit["text"][s:e]
    assert hit["context"]["pages"][0] <= hit["page"] <= hit["context"]["pages"][-1]
    assert hit["page"] in hit["context"]["pages"] and hit["text"][:40] in hit["context"]["text"]
    assert body["timings_ms"]["total"] > 0 and "bm25" in body["timings_ms"]
    assert body["plan"]["source"] == "heuristic"
    # No cross-encoder here: the first hits are ordered by their best sentence, and say so.
    assert NO_CROSS_ENCODER in body["notices"] and "rerank" in body["timings_ms"]
    plain = loaded.post(
        "/api/search", json={"query": "Rabbit watch pocket", "rerank": False}
    ).json()
    assert NO_CROSS_ENCODER not in plain["notices"] and "rerank" not in plain["timings_ms"]


@pytest.mark.parametrize(
    "query",
    ['AND OR NOT "(', "emoji 🐇🕰️", "العربية", "x" * 10_000, "'; DROP TABLE page_chunks; --"],
)
def test_strange_queries_get_a_result(loaded: TestClient, query: str) -> None:
    r = loaded.post("/api/search", json={"query": query})
    assert r.status_code == 200, r.text
    assert isinstance(r.json()["hits"], list)


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"query": ""}, 422, "validation_error"),
        ({"query": "   "}, 400, "bad_input"),
        ({}, 422, "validation_error"),
        ({"query": "x" * 20_001}, 422, "validation_error"),
        ({"query": "rabbit", "document_ids": [999]}, 404, "not_found"),
        ({"query": "rabbit", "kinds": ["doc"]}, 422, "validation_error"),
        ({"query": "rabbit", "legs": []}, 422, "validation_error"),
        ({"query": "rabbit", "limit": 0}, 422, "validation_error"),
        ({"query": 42}, 422, "validation_error"),
    ],
)
def test_bad_search_requests_get_4xx_in_the_error_shape(
    loaded: TestClient, body: dict[str, object], status: int, code: str
) -> None:
    r = loaded.post("/api/search", json=body)
    assert r.status_code == status, r.text
    assert_error_shape(r.json(), status, code)


def test_filter_by_document_and_kind(loaded: TestClient) -> None:
    docs = {d["kind"]: d["id"] for d in loaded.get("/api/documents").json()["documents"]}
    r = loaded.post("/api/search", json={"query": "copyright", "document_ids": [docs["epub"]]})
    assert r.status_code == 200 and {h["document_id"] for h in r.json()["hits"]} <= {docs["epub"]}
    r = loaded.post("/api/search", json={"query": "copyright", "kinds": ["pdf"]})
    assert r.json()["hits"] and {h["kind"] for h in r.json()["hits"]} == {"pdf"}
