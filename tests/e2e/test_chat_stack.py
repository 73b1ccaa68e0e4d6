"""Chat through the real stack (nginx → uvicorn API, worker), the LLM being the fake Ollama
over HTTP: answer tokens reach the client as they are written (no buffering anywhere), and a
client that goes away closes the upstream LLM request."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import DOCS
from tests.e2e.helpers import wait_until
from tests.e2e.stack import Stack, run_stack
from tests.fakes.chat import Reply
from tests.fakes.ollama import FakeOllama
from tests.fakes.rag_model import RagModel

pytestmark = pytest.mark.slow
QUESTION = "What did the White Rabbit take out of its waistcoat-pocket?"
TOKEN_GAP_S = 0.3


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(models=["llama3.2:latest"]) as server:
        yield server


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, fake: FakeOllama) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("chat-stack")
    env = {"QUIRE_LLM_BACKENDS": "ollama", "QUIRE_OLLAMA_URL": fake.url, "QUIRE_LLM_RETRIES": "0"}
    with run_stack(tmp, **env) as running:
        epub = DOCS / "epub" / "alice-epub3.epub"
        with httpx.Client(base_url=running.web, timeout=60) as http:
            r = http.post("/api/documents", files={"files": (epub.name, epub.read_bytes())})
            assert r.status_code == 202, r.text
            doc = r.json()["files"][0]["document_id"]
            wait_until(
                lambda: http.get(f"/api/documents/{doc}").json()["status"] == "ready",
                180,
                "the EPUB to be ingested",
            )
        yield running


def _events(response: httpx.Response) -> Iterator[tuple[str, Any, float]]:
    event = "message"
    for line in response.iter_lines():
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            yield event, json.loads(line[6:]), time.monotonic()


def test_tokens_arrive_through_nginx_as_the_model_writes_them(
    stack: Stack, fake: FakeOllama
) -> None:
    words = [f"word{i}" for i in range(8)]
    sent_at: list[float] = []

    def answer(prompt: str) -> Reply:
        sent_at.append(time.monotonic())  # the fake sends token i at about this + i * gap
        return Reply(" ".join(words) + " [1].", token_delay_s=TOKEN_GAP_S)

    fake.responder = RagModel(overrides={"answer": answer})
    arrivals: list[float] = []
    with (
        httpx.Client(base_url=stack.web, timeout=60) as http,
        http.stream("POST", "/api/chat", json={"message": QUESTION}) as r,
    ):
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        names = []
        for name, _, at in _events(r):
            names.append(name)
            if name == "token":
                arrivals.append(at)
    assert names[0] == "start" and names[-1] == "done", names
    assert len(sent_at) == 1 and len(arrivals) == len(words) + 1
    lags = [at - (sent_at[0] + i * TOKEN_GAP_S) for i, at in enumerate(arrivals)]
    # The tokens are on the client as the model writes them, not held back by nginx, uvicorn
    # or the pipeline until the end: the first half arrive before the fake writes the last
    # (a buffered stream delivers them all after it), and the arrivals spread over the
    # writing. A stall of the busy machine may delay a token by a few hundred ms, so the
    # bound is the answer's length, not each token's own time.
    last_written = sent_at[0] + len(words) * TOKEN_GAP_S
    assert all(at < last_written for at in arrivals[: len(words) // 2]), lags
    assert arrivals[-1] - arrivals[0] > 0.8 * TOKEN_GAP_S * len(words), lags


def test_client_disconnect_closes_the_upstream_llm_request(stack: Stack, fake: FakeOllama) -> None:
    long_answer = " ".join(f"w{i}" for i in range(400))
    fake.responder = RagModel(
        overrides={"answer": lambda _: Reply(long_answer, token_delay_s=0.05)}
    )
    cancelled_before = fake.stream_outcomes["cancelled"]
    tokens = 0
    with httpx.Client(base_url=stack.web, timeout=60) as http:
        with http.stream("POST", "/api/chat", json={"message": QUESTION}) as r:
            for name, data, _ in _events(r):
                if name == "start":
                    conversation = data["conversation_id"]
                if name == "token":
                    tokens += 1
                    if tokens == 5:
                        break  # the browser tab is closed
        assert tokens == 5
        # nginx drops the upstream connection, the API cancels the answer, and the LLM's
        # HTTP stream is closed long before its 20 s of tokens are over.
        t0 = time.monotonic()
        wait_until(
            lambda: fake.stream_outcomes["cancelled"] > cancelled_before,
            10,
            "the fake LLM to see its stream cancelled",
        )
        assert time.monotonic() - t0 < 10

        def stored() -> dict[str, Any] | None:
            messages = http.get(f"/api/conversations/{conversation}").json()["messages"]
            return messages[-1] if messages[-1]["role"] == "assistant" else None

        reply = wait_until(stored, 10, "the interrupted answer to be stored")
    assert reply["status"] == "interrupted"
    assert reply["content"].startswith("w0 w1 w2 w3") and len(reply["content"]) < len(long_answer)


def test_the_llm_can_be_switched_off_per_question(stack: Stack, fake: FakeOllama) -> None:
    fake.responder = RagModel()
    with httpx.Client(base_url=stack.web, timeout=60) as http:
        status = http.get("/api/llm").json()
        assert status["mode"] == "llm" and status["backends"][0]["ok"] is True
        with http.stream("POST", "/api/chat", json={"message": QUESTION, "llm": False}) as r:
            events = [(n, d) for n, d, _ in _events(r)]
    done = events[-1][1]
    assert events[-1][0] == "done" and done["mode"] == "extractive"
    assert "“" in done["answer"] and done["citations"]
