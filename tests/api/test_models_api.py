"""/api/models against the fake Ollama over HTTP: the server and its chat models, the
recommendation, a pull streamed as progress events, and the model chosen here writing the
next answer of the running app (no restart), whether chosen through the API or by
`quire models use` in another process (which only writes the choice file)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from quire.config import Settings
from quire.llm.choice import Choice, choice_path, save_choice
from tests.api.library import FILES, make_client
from tests.api.sse import chat_events, first, parse_sse
from tests.fakes.chat import Reply
from tests.fakes.ollama import FakeOllama, FakeOllamaModel, unused_url
from tests.libraries import library_copy

QUESTION = "What did the White Rabbit take out of its waistcoat-pocket?"


@pytest.fixture(scope="module")
def library(request: pytest.FixtureRequest, backend: str) -> Iterator[Settings]:
    yield from library_copy(request, backend, FILES, llm_backends="none")


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOllama]:
    with FakeOllama(models=["nomic-embed-text:latest"]) as fake:
        yield fake


@pytest.fixture
def fake(server: FakeOllama, library: Settings) -> Iterator[FakeOllama]:
    server.reset()
    server.models = [FakeOllamaModel.named("nomic-embed-text:latest")]
    server.pull_step_s = 0.0
    # Each model signs its answer: who wrote it is plain in the text.
    server.responder = lambda messages, body: Reply(f"Written by {body['model']} [1].")
    choice_path(library.data_dir).unlink(missing_ok=True)
    yield server
    choice_path(library.data_dir).unlink(missing_ok=True)


def ask(client: TestClient) -> list[tuple[str, Any]]:
    with client.stream("POST", "/api/chat", json={"message": QUESTION}) as r:
        assert r.status_code == 200, r.read()
        return chat_events(r.iter_lines())


def pull(client: TestClient, name: str) -> list[tuple[str, Any]]:
    with client.stream("POST", "/api/models/pull", json={"name": name}) as r:
        assert r.status_code == 200, r.read()
        return list(parse_sse(r.iter_lines()))


def test_the_server_its_chat_models_the_recommendation_and_the_reranker(
    library: Settings, fake: FakeOllama
) -> None:
    fake.add_model("llama3.2:1b")
    with make_client(library, fake.url) as client:
        body = client.get("/api/models").json()
    ours = body["servers"][0]
    assert ours["url"] == fake.url and ours["ok"] and ours["can_pull"]
    assert [m["name"] for m in ours["models"]] == ["llama3.2:1b"]
    assert ours["embedding_only"] == ["nomic-embed-text:latest"]
    pick = body["recommendation"]
    assert pick["reason"] and pick["memory_bytes"] > 0
    assert pick["installed"] == (pick["name"] == "llama3.2:1b")  # 1.2B fits any machine
    assert body["in_use"] == "ollama:llama3.2" and body["choice"] is None and body["llm_enabled"]
    assert set(body["install"]) == {"linux", "macos", "windows"}
    assert body["reranker"]["command"] == "quire models pull reranker"
    assert body["reranker"]["installed"] is False and body["reranker"]["loaded"] is False


def test_pull_use_and_the_next_answer_is_written_by_it(library: Settings, fake: FakeOllama) -> None:
    with make_client(library, fake.url) as client:
        before = first(ask(client), "start")
        assert before["mode"] == "extractive"  # llama3.2 is not there
        assert "[Settings](/settings#s-answer)" in before["extractive_reason"]
        assert fake.url not in before["extractive_reason"]  # no server address in an answer

        events = pull(client, "qwen2.5:3b")
        kinds = [e for e, _ in events]
        assert kinds[-1] == "done" and set(kinds[:-1]) == {"progress"}
        fractions = [d["fraction"] for e, d in events if e == "progress" and d["fraction"]]
        assert any(0 < f < 1 for f in fractions) and fractions[-1] <= 1
        assert all(d["completed"] <= d["total"] for e, d in events if e == "progress")
        assert events[-1][1] == {"name": "qwen2.5:3b", "url": fake.url}
        listed = client.get("/api/models").json()["servers"][0]["models"]
        assert [m["name"] for m in listed] == ["qwen2.5:3b"]

        used = client.put("/api/models/use", json={"name": "qwen2.5:3b"})
        assert used.status_code == 200, used.text
        assert used.json() == {"backend": "ollama", "url": fake.url, "model": "qwen2.5:3b"}
        events = ask(client)
        start, done = first(events, "start"), first(events, "done")
        assert start["mode"] == "llm" and start["model"] == "ollama:qwen2.5:3b"
        assert "Written by qwen2.5:3b" in done["answer"]
        status = client.get("/api/models").json()
        assert status["in_use"] == "ollama:qwen2.5:3b"
        assert status["servers"][0]["models"][0]["in_use"] is True
        assert client.get("/api/llm").json()["mode"] == "llm"

    # A restart keeps the choice.
    with make_client(library, fake.url) as client:
        assert first(ask(client), "start")["model"] == "ollama:qwen2.5:3b"
        assert client.delete("/api/models/use").status_code == 204
        assert first(ask(client), "start")["mode"] == "extractive"  # llama3.2 again: absent


def test_a_choice_written_by_another_process_answers_the_next_question(
    library: Settings, fake: FakeOllama
) -> None:
    fake.add_model("llama3.2:3b")
    fake.add_model("qwen2.5:7b")
    with make_client(library, fake.url, ollama_chat_model="llama3.2:3b") as client:
        assert first(ask(client), "start")["model"] == "ollama:llama3.2:3b"
        # What `quire models use qwen2.5:7b` does: write the file, nothing else.
        save_choice(library.data_dir, Choice(backend="ollama", url=fake.url, model="qwen2.5:7b"))
        done = first(ask(client), "done")
        assert "Written by qwen2.5:7b" in done["answer"] and done["model"] == "ollama:qwen2.5:7b"


def test_bad_pulls_and_uses_are_said_plainly(library: Settings, fake: FakeOllama) -> None:
    fake.registry = {"qwen2.5:3b"}
    with make_client(library, fake.url) as client:
        events = pull(client, "llama9:400b")
        assert events[-1][0] == "error"
        error = events[-1][1]
        assert error["code"] == "model_not_in_library" and "ollama.com/library" in error["message"]

        fake.pull_cut_after = 2
        events = pull(client, "qwen2.5:3b")
        assert [e for e, _ in events][-1] == "error"
        assert "stopped answering during the pull" in events[-1][1]["message"]
        fake.pull_cut_after = None

        bad = client.post("/api/models/pull", json={"name": "rm -rf /"})
        assert bad.status_code == 400 and "not a model name" in bad.json()["error"]["message"]

        missing = client.put("/api/models/use", json={"name": "qwen2.5:3b"})
        assert missing.status_code == 404 and "pull it first" in missing.json()["error"]["message"]
        embedder = client.put("/api/models/use", json={"name": "nomic-embed-text"})
        assert embedder.status_code == 404
        assert not choice_path(library.data_dir).exists()

    with make_client(library, unused_url()) as client:
        down = client.post("/api/models/pull", json={"name": "qwen2.5:3b"})
        assert down.status_code == 503 and down.json()["error"]["code"] == "ollama_not_running"
        assert "ollama serve" in down.json()["error"]["message"]

    with make_client(library, fake.url, llm_backends="none") as client:
        off = client.put("/api/models/use", json={"name": "qwen2.5:3b"})
        assert off.status_code == 409 and "QUIRE_LLM_BACKENDS=none" in off.text
        off = client.post("/api/models/pull", json={"name": "qwen2.5:3b"})
        assert off.status_code == 409 and "QUIRE_LLM_BACKENDS=none" in off.text
        assert client.get("/api/models").json()["llm_enabled"] is False
