"""OllamaEmbedder against a fake Ollama over real HTTP."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

import httpx
import numpy as np
import pytest

from quire.config import Settings
from quire.embed import Embedder, make_embedder
from quire.embed.ollama import OllamaEmbedder
from quire.errors import EmbedderUnavailable, ModelNotPulled
from tests.fakes import FakeOllama, FakeOllamaModel, unused_url

MODEL = "nomic-embed-text"


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOllama]:
    with FakeOllama(models=["nomic-embed-text:latest", "all-minilm:l6-v2"], dim=768) as fake:
        yield fake


@pytest.fixture
def fake(server: FakeOllama) -> Iterator[FakeOllama]:
    server.reset()
    server.latency_s = 0.0
    server.normalize = True
    yield server
    server.reset()


@pytest.fixture
def client(fake: FakeOllama) -> Iterator[OllamaEmbedder]:
    with OllamaEmbedder(fake.url, MODEL, backoff_s=0.01, timeout_s=5) as c:
        yield c


def test_happy_path_batches_of_64(fake: FakeOllama, client: OllamaEmbedder) -> None:
    texts = [f"passage number {i}" for i in range(130)]
    vectors = client.embed(texts)

    assert vectors.shape == (130, 768)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    embeds = fake.requests_to("/api/embed")
    assert [len(r.body["input"]) for r in embeds] == [64, 64, 2]
    assert all(r.body["model"] == MODEL for r in embeds)
    assert [t for r in embeds for t in r.body["input"]] == texts  # order kept across batches
    np.testing.assert_allclose(vectors[129], fake.vector(MODEL, texts[129]), atol=1e-6)
    assert len(fake.requests_to("/api/tags")) == 1
    assert client.dim == 768
    assert client.name == "ollama:nomic-embed-text"


def test_tags_checked_once_and_embeddings_deterministic(
    fake: FakeOllama, client: OllamaEmbedder
) -> None:
    a = client.embed(["alpha", "beta"])
    b = client.embed(["beta", "alpha"])
    np.testing.assert_array_equal(a, b[::-1])
    assert not np.allclose(a[0], a[1])
    assert len(fake.requests_to("/api/tags")) == 1
    assert len(fake.requests_to("/api/embed")) == 2


def test_vectors_are_normalised_even_if_the_server_does_not(
    fake: FakeOllama, client: OllamaEmbedder
) -> None:
    fake.normalize = False
    raw_norms = [np.linalg.norm(fake.vector(MODEL, t)) for t in ("one", "two", "three")]
    assert max(raw_norms) > 1.5  # the fake really sends unnormalised vectors
    vectors = client.embed(["one", "two", "three"])
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_model_with_explicit_tag_and_latest_suffix(fake: FakeOllama) -> None:
    with OllamaEmbedder(fake.url, "nomic-embed-text:latest", backoff_s=0.01) as c:
        assert c.embed(["x"]).shape == (1, 768)
        assert c.name == "ollama:nomic-embed-text"  # one identity for both spellings
    with OllamaEmbedder(fake.url, "all-minilm:l6-v2", backoff_s=0.01) as c:
        assert c.embed(["x"]).shape == (1, 768)
    with OllamaEmbedder(fake.url, "all-minilm", backoff_s=0.01) as c:  # :latest is not pulled
        with pytest.raises(ModelNotPulled):
            c.embed(["x"])


def test_dim_learned_from_first_response(fake: FakeOllama) -> None:
    fake.models.append(FakeOllamaModel("mxbai-embed-large:latest", dim=1024))
    try:
        with OllamaEmbedder(fake.url, "mxbai-embed-large", backoff_s=0.01) as c:
            assert c.dim == 1024  # probes the server when nothing was embedded yet
            assert c.embed([]).shape == (0, 1024)
    finally:
        fake.models.pop()


def test_missing_model_says_how_to_pull_it(fake: FakeOllama) -> None:
    with OllamaEmbedder(fake.url, "nomic-embed-text-v2", backoff_s=0.01) as c:
        with pytest.raises(ModelNotPulled) as info:
            c.embed(["hello"])
    assert "ollama pull nomic-embed-text-v2" in str(info.value)
    assert not info.value.retryable
    assert fake.requests_to("/api/embed") == []  # checked before embedding anything


def test_missing_model_message_for_default_model(fake: FakeOllama) -> None:
    fake.models.pop(0)
    try:
        with OllamaEmbedder(fake.url, MODEL, backoff_s=0.01) as c:
            with pytest.raises(ModelNotPulled, match="ollama pull nomic-embed-text"):
                c.check()
    finally:
        fake.models.insert(0, FakeOllamaModel("nomic-embed-text:latest"))


def test_model_removed_after_check_maps_404_to_model_not_pulled(
    fake: FakeOllama, client: OllamaEmbedder
) -> None:
    client.embed(["warm"])
    removed = fake.models.pop(0)
    try:
        with pytest.raises(ModelNotPulled) as info:
            client.embed(["cold"])
    finally:
        fake.models.insert(0, removed)
    assert 'model "nomic-embed-text" not found, try pulling it first' in str(info.value)
    assert "ollama pull nomic-embed-text" in str(info.value)


def test_server_down_is_embedder_unavailable_naming_the_url() -> None:
    url = unused_url()
    with OllamaEmbedder(url, MODEL, attempts=2, backoff_s=0.01) as c:
        with pytest.raises(EmbedderUnavailable) as info:
            c.embed(["hello"])
    assert url in str(info.value)
    assert info.value.retryable
    assert not isinstance(info.value, ModelNotPulled)


def test_timeout_is_retried_then_embedder_unavailable(fake: FakeOllama) -> None:
    fake.latency_s = 0.3
    with OllamaEmbedder(fake.url, MODEL, attempts=2, backoff_s=0.01, timeout_s=0.1) as c:
        with pytest.raises(EmbedderUnavailable, match="timed out") as info:
            c.embed(["hello"])
    assert fake.url in str(info.value)
    assert len(fake.requests_to("/api/tags")) == 2


def test_500_twice_then_success_is_retried(
    fake: FakeOllama, client: OllamaEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    client.check()
    fake.fail_next(2, status=500, path="/api/embed")
    with caplog.at_level(logging.WARNING, logger="quire.embed.ollama"):
        vectors = client.embed(["retry me"])
    assert vectors.shape == (1, 768)
    assert len(fake.requests_to("/api/embed")) == 3
    assert sum("retrying" in r.getMessage() for r in caplog.records) == 2


def test_5xx_gives_up_after_attempts_with_the_error_text(fake: FakeOllama) -> None:
    with OllamaEmbedder(fake.url, MODEL, attempts=3, backoff_s=0.01) as c:
        c.check()
        fake.fail_next(5, status=503, error="server busy, please try again", path="/api/embed")
        with pytest.raises(EmbedderUnavailable, match="server busy, please try again"):
            c.embed(["x"])
    assert len(fake.requests_to("/api/embed")) == 3


def test_400_is_not_retried_and_error_is_surfaced(fake: FakeOllama, client: OllamaEmbedder) -> None:
    client.check()
    fake.fail_next(1, status=400, error="input length exceeds maximum context length")
    with pytest.raises(EmbedderUnavailable) as info:
        client.embed(["too long"])
    assert "input length exceeds maximum context length" in str(info.value)
    assert "400" in str(info.value)
    assert not info.value.retryable  # the worker must not retry a rejected request
    assert len(fake.requests_to("/api/embed")) == 1


def test_error_body_on_tags_is_surfaced(fake: FakeOllama, client: OllamaEmbedder) -> None:
    fake.fail_next(1, status=401, error="unauthorized: missing token", path="/api/tags")
    with pytest.raises(EmbedderUnavailable, match="unauthorized: missing token"):
        client.embed(["x"])
    assert client.embed(["x"]).shape == (1, 768)  # a failed check is tried again next time


def test_wrong_number_of_embeddings_is_an_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/tags":
            return httpx.Response(200, json={"models": [{"name": "m:latest", "model": "m:latest"}]})
        return httpx.Response(200, json={"model": "m", "embeddings": [[1.0, 0.0]]})

    c = OllamaEmbedder("http://ollama.test", "m", transport=httpx.MockTransport(handler))
    with pytest.raises(EmbedderUnavailable, match="shape"):
        c.embed(["a", "b"])
    c.close()


def test_error_inside_a_200_body_is_surfaced() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/tags":
            return httpx.Response(200, json={"models": [{"name": "m:latest", "model": "m:latest"}]})
        return httpx.Response(200, json={"error": "llama runner process has terminated"})

    with OllamaEmbedder("http://ollama.test", "m", transport=httpx.MockTransport(handler)) as c:
        with pytest.raises(EmbedderUnavailable, match="llama runner process has terminated"):
            c.embed(["a"])


def test_old_ollama_without_api_embed_is_not_model_not_pulled() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/tags":
            return httpx.Response(200, json={"models": [{"name": "m:latest", "model": "m:latest"}]})
        return httpx.Response(404, text="404 page not found")

    with OllamaEmbedder("http://ollama.test", "m", transport=httpx.MockTransport(handler)) as c:
        with pytest.raises(EmbedderUnavailable, match="upgrade") as info:
            c.embed(["a"])
    assert not isinstance(info.value, ModelNotPulled)
    assert not info.value.retryable


def test_bare_string_is_rejected(client: OllamaEmbedder) -> None:
    with pytest.raises(TypeError):
        client.embed("not a list")


def test_factory_builds_ollama_embedder(fake: FakeOllama) -> None:
    settings = Settings(embedder="ollama", ollama_url=fake.url, ollama_embed_model=MODEL)
    embedder: Embedder = make_embedder(settings)
    try:
        assert isinstance(embedder, OllamaEmbedder)
        assert embedder.batch_size == settings.embed_batch
        assert fake.requests == []  # lazy: nothing sent before first use
        assert embedder.embed(["x"]).shape == (1, 768)
    finally:
        embedder.close()


def test_fake_latency_knob(fake: FakeOllama) -> None:
    fake.latency_s = 0.2
    with httpx.Client(base_url=fake.url) as http:
        t0 = time.monotonic()
        r = http.get("/api/tags")
    assert time.monotonic() - t0 >= 0.2
    assert r.json()["models"][0]["details"]["family"] == "nomic-bert"
