"""Document languages through the API: detected at ingest on real EPUBs, listed with the
documents, a search and chat filter, and GET /api/library/languages against the embedder."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from quire.config import Settings
from tests.api.library import load_library
from tests.api.sse import chat_events, first
from tests.api.test_documents import assert_error_shape
from tests.conftest import DOCS
from tests.fakes.ollama import FakeOllama
from tests.runtime import make_app

# slow: four books in four languages ingested
pytestmark = [pytest.mark.both_backends, pytest.mark.slow]

EPUBS = {
    "pg39287-agony-column-ja-epub3.epub": "ja",
    "pg24113-jiuming-qiyuan-zh-epub3.epub": "zh-Hant",
    "idpf-arabic-rtl.epub": "ar",
    "alice-epub3.epub": "en",
}


@pytest.fixture(scope="module")
def library(
    tmp_path_factory: pytest.TempPathFactory, module_database_url: str | None
) -> Iterator[tuple[TestClient, Settings]]:
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("languages") / "data",
        llm_backends="none",
        database_url=module_database_url,
    )
    with TestClient(make_app(settings)) as client:
        load_library(client, settings, [DOCS / "epub" / name for name in EPUBS])
        yield client, settings


@pytest.fixture(scope="module")
def loaded(library: tuple[TestClient, Settings]) -> TestClient:
    return library[0]


def languages_by_file(client: TestClient) -> dict[str, str | None]:
    r = client.get("/api/documents")
    assert r.status_code == 200
    return {d["filename"]: d["language"] for d in r.json()["documents"]}


def test_each_document_gets_its_language_at_ingest(loaded: TestClient) -> None:
    assert languages_by_file(loaded) == EPUBS
    docs = loaded.get("/api/documents").json()["documents"]
    ja = next(d for d in docs if d["language"] == "ja")
    assert loaded.get(f"/api/documents/{ja['id']}").json()["language"] == "ja"


def test_search_keeps_to_the_languages_asked_for(loaded: TestClient) -> None:
    ids = {d["language"]: d["id"] for d in loaded.get("/api/documents").json()["documents"]}

    def hit_documents(query: str, **body: object) -> set[int]:
        r = loaded.post("/api/search", json={"query": query, "limit": 20, **body})
        assert r.status_code == 200, r.text
        return {h["document_id"] for h in r.json()["hits"]}

    # A phrase of the Japanese book, searched everywhere and then in English documents only.
    phrase = "カールトン・ホテル"
    assert ids["ja"] in hit_documents(phrase)
    assert hit_documents(phrase, languages=["ja"]) == {ids["ja"]}
    assert ids["ja"] not in hit_documents(phrase, languages=["en"])
    # The dense leg finds something for any query: the filter bounds it too.
    assert hit_documents("the rabbit and the queen", languages=["ar"]) <= {ids["ar"]}
    both = hit_documents("the rabbit and the queen", languages=["en", "zh-hant"])
    assert both and both <= {ids["en"], ids["zh-Hant"]}  # tags are read case-insensitively
    assert hit_documents("rabbit", languages=["fr"]) == set()


def test_a_malformed_language_is_a_422(loaded: TestClient) -> None:
    r = loaded.post("/api/search", json={"query": "rabbit", "languages": ["not a tag"]})
    assert r.status_code == 422
    assert_error_shape(r.json(), 422, "validation_error")


def test_chat_takes_the_language_filter(loaded: TestClient) -> None:
    with loaded.stream(
        "POST", "/api/chat", json={"message": "Who is the White Rabbit?", "languages": ["ja"]}
    ) as r:
        assert r.status_code == 200, r.read()
        events = chat_events(r.iter_lines())
    sources = first(events, "sources")["sources"]
    titles = {s["title"] for s in sources}
    assert not any("Alice" in t for t in titles)


def test_the_local_embedder_does_not_cover_japanese(loaded: TestClient) -> None:
    r = loaded.get("/api/library/languages")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["embedder"] == {
        "name": "local:all-MiniLM-L6-v2-int8",
        "languages": ["en"],
        "multilingual": False,
        "known": True,
    }
    rows = {row["language"]: row for row in body["languages"]}
    assert set(rows) == {"ja", "zh-Hant", "ar", "en"}
    assert rows["ja"]["name"] == "Japanese" and rows["ja"]["documents"] == 1
    assert rows["ja"]["chunks"] > 10 and rows["ja"]["covered"] is False
    assert rows["zh-Hant"]["name"] == "Chinese (Traditional)"
    assert rows["en"]["covered"] is True
    chunks = [row["chunks"] for row in body["languages"]]
    assert chunks == sorted(chunks, reverse=True)
    assert body["undetected"] == 0
    hint = body["hint"]
    assert "Japanese" in hint and "Arabic" in hint and "English" not in hint
    assert "QUIRE_EMBEDDER=ollama QUIRE_OLLAMA_EMBED_MODEL=bge-m3" in hint
    assert "quire worker" in hint and "re-embeds" in hint


def test_a_multilingual_ollama_model_covers_them_all(
    library: tuple[TestClient, Settings],
) -> None:
    _, settings = library
    with FakeOllama(models=["bge-m3:latest"], dim=1024) as fake:
        multilingual = settings.model_copy(
            update={"embedder": "ollama", "ollama_url": fake.url, "ollama_embed_model": "bge-m3"}
        )
        with TestClient(make_app(multilingual)) as client:
            body = client.get("/api/library/languages").json()
    assert body["embedder"] == {
        "name": "ollama:bge-m3",
        "languages": None,
        "multilingual": True,
        "known": True,
    }
    assert {row["covered"] for row in body["languages"]} == {True}
    assert body["hint"] is None


def test_an_unknown_embedder_is_said_so_and_the_setting_decides(
    library: tuple[TestClient, Settings],
) -> None:
    _, settings = library
    with FakeOllama(models=["my-embedder:latest"], dim=64) as fake:
        unknown = settings.model_copy(
            update={
                "embedder": "ollama",
                "ollama_url": fake.url,
                "ollama_embed_model": "my-embedder",
            }
        )
        with TestClient(make_app(unknown)) as client:
            body = client.get("/api/library/languages").json()
        assert body["embedder"]["known"] is False and body["embedder"]["multilingual"] is False
        assert {row["covered"] for row in body["languages"]} == {None}
        assert "QUIRE_EMBED_LANGUAGES" in body["hint"]

        told = unknown.model_copy(update={"embed_languages": "en,ja"})
        with TestClient(make_app(told)) as client:
            body = client.get("/api/library/languages").json()
    rows = {row["language"]: row["covered"] for row in body["languages"]}
    assert rows == {"ja": True, "en": True, "zh-Hant": False, "ar": False}
    assert body["embedder"]["languages"] == ["en", "ja"]


def test_an_empty_library_holds_no_languages(client: TestClient) -> None:
    body = client.get("/api/library/languages").json()
    assert body["languages"] == [] and body["undetected"] == 0 and body["hint"] is None
