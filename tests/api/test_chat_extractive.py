"""POST /api/chat without an LLM: extractive answers on real documents, conversations,
feedback, and a 4xx (never a 500) for bad requests."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.api.library import FILES
from tests.api.sse import answer_text, chat_events, first, parse_sse
from tests.api.test_documents import assert_error_shape
from tests.libraries import library_copy
from tests.runtime import make_app

pytestmark = pytest.mark.both_backends


@pytest.fixture(scope="module")
def loaded(request: pytest.FixtureRequest, backend: str) -> Iterator[TestClient]:
    """The API on this module's copy of the Alice + DMCA library (tests/libraries.py)."""
    for settings in library_copy(request, backend, FILES, llm_backends="none"):
        with TestClient(make_app(settings)) as client:
            yield client


def ask(client: TestClient, **body: Any) -> list[tuple[str, Any]]:
    with client.stream("POST", "/api/chat", json=body) as r:
        assert r.status_code == 200, r.read()
        assert r.headers["content-type"].startswith("text/event-stream")
        return chat_events(r.iter_lines())


def _norm(text: str) -> str:
    return " ".join(text.split())


def test_extractive_answer_quotes_and_cites_the_right_pages(loaded: TestClient) -> None:
    events = ask(loaded, message="What did the White Rabbit take out of its waistcoat-pocket?")
    names = [e for e, _ in events]
    assert names[:3] == ["start", "plan", "retrieval"]
    assert names[-1] == "done" and "error" not in names
    start, done = first(events, "start"), first(events, "done")
    assert start["mode"] == "extractive" and start["model"] is None
    assert done["mode"] == "extractive" and done["status"] == "complete"
    sources = first(events, "sources")["sources"]
    answer = answer_text(events)
    assert answer.startswith("*Extractive answer:") and "no language model" in answer.lower()
    assert done["answer"] == answer
    quotes = re.findall(r"“(.+?)” \[(\d+)\]", answer)
    # Issue 12: only what supports the answer is quoted (the best sentence, and those that
    # score nearly as well), not a fixed five.
    assert 1 <= len(quotes) <= 5
    assert done["citations"] == sorted(
        {int(n) for _, n in quotes}, key=[int(n) for _, n in quotes].index
    )
    assert any("watch" in q.lower() for q, _ in quotes)
    # Every citation follows the sentence it quotes word for word: held by construction.
    assert done["citations_checked"] == {
        "checked": len(quotes),
        "kept": len(quotes),
        "dropped": 0,
        "method": "verbatim",
        "dropped_citations": [],
    }
    for quote, n in quotes:
        src = sources[int(n) - 1]
        assert src["n"] == int(n)
        # The sentence overlaps the passage (a chunk boundary may cut it: it is quoted whole
        # from the page) ...
        words = _norm(quote).split()
        assert " ".join(words[:4]) in _norm(src["passage"]) or (
            " ".join(words[-4:]) in _norm(src["passage"])
        )
        # ... and the cited page really contains the quoted sentence.
        page = loaded.get(src["view"]).json()
        assert page["page"] == src["page"] and _norm(quote) in _norm(page["text"])
        assert src["url"].startswith(f"/api/documents/{src['document_id']}/file")
    epub = next(s for s in sources if s["kind"] == "epub")
    assert epub["heading_path"] and epub["title"].startswith("Alice")


def test_pdf_sources_link_to_the_page(loaded: TestClient) -> None:
    events = ask(
        loaded, message="Who is liable for copyright infringement under the DMCA safe harbor?"
    )
    sources = first(events, "sources")["sources"]
    pdf = [s for s in sources if s["kind"] == "pdf"]
    assert pdf, sources
    assert pdf[0]["url"].endswith(f"#page={pdf[0]['page']}")
    r = loaded.get(pdf[0]["url"].split("#")[0])
    assert r.status_code == 200 and r.content.startswith(b"%PDF")


def test_conversation_is_stored_and_follow_up_uses_it(loaded: TestClient) -> None:
    events = ask(loaded, message="Why did Alice fall down the rabbit hole?")
    conv = first(events, "start")["conversation_id"]
    events2 = ask(loaded, message="What did she find there?", conversation_id=conv)
    start2 = first(events2, "start")
    assert start2["conversation_id"] == conv
    # No LLM: a short follow-up is searched together with the previous question.
    assert "rabbit hole" in start2["standalone_question"]
    body = loaded.get(f"/api/conversations/{conv}").json()
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user", "assistant"]
    assistant = body["messages"][1]
    assert assistant["mode"] == "extractive" and assistant["status"] == "complete"
    assert assistant["sources"] and assistant["citations"]
    assert assistant["content"] == first(events, "done")["answer"]
    assert body["title"].startswith("Why did Alice fall")
    listed = loaded.get("/api/conversations").json()["conversations"]
    assert listed[0]["id"] == conv and listed[0]["message_count"] == 4

    message_id = first(events2, "done")["message_id"]
    r = loaded.post(
        f"/api/messages/{message_id}/feedback", json={"rating": -1, "comment": " too short "}
    )
    assert r.status_code == 201 and r.json()["comment"] == "too short"
    r = loaded.post(f"/api/messages/{message_id}/feedback", json={"rating": 1})
    assert r.status_code == 201
    msgs = loaded.get(f"/api/conversations/{conv}").json()["messages"]
    assert msgs[3]["feedback"] == {"rating": 1, "comment": None}  # the latest rating counts
    assert msgs[1]["feedback"] is None

    assert loaded.delete(f"/api/conversations/{conv}").status_code == 204
    r = loaded.get(f"/api/conversations/{conv}")
    assert_error_shape(r.json(), 404, "not_found")
    r = loaded.post(f"/api/messages/{message_id}/feedback", json={"rating": 1})
    assert_error_shape(r.json(), 404, "not_found")


def test_nothing_found_is_said_plainly(loaded: TestClient) -> None:
    events = ask(loaded, message="zyxwvut qqqq")
    done = first(events, "done")
    assert done["answer"].startswith("Nothing in your library clearly answers this question.")
    # The nearest passages are still cited, and no sentence is passed off as an answer.
    assert "“" not in done["answer"]
    assert done["citations"] == [s["n"] for s in first(events, "sources")["sources"]]


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"message": ""}, 422, "validation_error"),
        ({"message": "   "}, 400, "bad_input"),
        ({"message": "x" * 8001}, 400, "bad_input"),
        ({"message": "x" * 40_000}, 422, "validation_error"),
        ({}, 422, "validation_error"),
        ({"message": "rabbit", "conversation_id": 99999}, 404, "not_found"),
        ({"message": "rabbit", "document_ids": [999]}, 404, "not_found"),
        ({"message": "rabbit", "kinds": ["doc"]}, 422, "validation_error"),
        ({"message": "rabbit", "strategy": "sloppy"}, 422, "validation_error"),
    ],
)
def test_bad_chat_requests_get_4xx_before_any_stream(
    loaded: TestClient, body: dict[str, Any], status: int, code: str
) -> None:
    r = loaded.post("/api/chat", json=body)
    assert r.status_code == status, r.text
    assert_error_shape(r.json(), status, code)


def test_bad_feedback(loaded: TestClient) -> None:
    events = ask(loaded, message="rabbit watch")
    user_id = first(events, "start")["user_message_id"]
    answer_id = first(events, "done")["message_id"]
    r = loaded.post(f"/api/messages/{user_id}/feedback", json={"rating": 1})
    assert_error_shape(r.json(), 400, "bad_input")
    r = loaded.post(f"/api/messages/{answer_id}/feedback", json={"rating": 5})
    assert_error_shape(r.json(), 422, "validation_error")
    r = loaded.post("/api/messages/424242/feedback", json={"rating": 1})
    assert_error_shape(r.json(), 404, "not_found")
    assert loaded.delete("/api/conversations/424242").status_code == 404


@pytest.mark.parametrize("message", ['AND OR NOT "(', "emoji 🐇🕰️", "العربية", "x" * 8000])
def test_strange_messages_get_an_answer(loaded: TestClient, message: str) -> None:
    events = ask(loaded, message=message)
    assert events[-1][0] == "done"


def test_openai_models_and_completion(loaded: TestClient) -> None:
    models = loaded.get("/v1/models").json()
    assert models["object"] == "list"
    assert {m["id"] for m in models["data"]} == {"quire", "quire-extractive"}
    r = loaded.post(
        "/v1/chat/completions",
        json={
            "model": "quire",
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": [{"type": "text", "text": "White Rabbit watch"}]},
            ],
        },
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["object"] == "chat.completion"
    content = body["choices"][0]["message"]["content"]
    assert body["choices"][0]["finish_reason"] == "stop"
    answer, _, sources = content.partition("\n\nSources:\n")
    assert "[1]" in answer and sources.startswith("[1] ")
    assert "Alice" in sources and "/api/documents/" in sources
    # Stateless: nothing was stored.
    assert all(
        c["title"] != "White Rabbit watch"
        for c in loaded.get("/api/conversations").json()["conversations"]
    )


def test_openai_streaming_sends_chunks_then_sources_then_done(loaded: TestClient) -> None:
    body = {
        "model": "quire-extractive",
        "stream": True,
        "messages": [{"role": "user", "content": "Why was Alice so small?"}],
    }
    with loaded.stream("POST", "/v1/chat/completions", json=body) as r:
        assert r.status_code == 200
        events = [d for _, d in parse_sse(r.iter_lines())]
    assert events[-1] == "[DONE]"
    chunks = events[:-1]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
    assert text.index("“") < text.index("\n\nSources:\n[")


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"model": "gpt-4", "messages": [{"role": "user", "content": "hi"}]}, 404, "not_found"),
        (
            {"model": "quire", "messages": [{"role": "assistant", "content": "hi"}]},
            400,
            "bad_input",
        ),
        ({"model": "quire", "messages": [{"role": "user", "content": "  "}]}, 400, "bad_input"),
        ({"model": "quire", "messages": []}, 422, "validation_error"),
    ],
)
def test_openai_bad_requests(
    loaded: TestClient, body: dict[str, Any], status: int, code: str
) -> None:
    r = loaded.post("/v1/chat/completions", json=body)
    assert r.status_code == status, r.text
    assert_error_shape(r.json(), status, code)
