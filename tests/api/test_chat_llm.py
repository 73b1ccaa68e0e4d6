"""The chat pipeline end to end through the API, with the LLM served by the fake Ollama over
HTTP (no real model can run here): plan → retrieve → map → filter → answer → verify, the
second retrieval round, and every way a model can fail."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from fastapi.testclient import TestClient

from quire.config import Settings
from quire.llm.base import estimate_tokens
from tests.api.library import FILES, make_client
from tests.api.sse import answer_text, chat_events, first
from tests.fakes.chat import Reply
from tests.fakes.ollama import FakeOllama, FakeOllamaModel, unused_url
from tests.fakes.rag_model import RagModel, listed_facts, restate
from tests.libraries import library_copy

pytestmark = pytest.mark.both_backends

QUESTION = "What did the White Rabbit take out of its waistcoat-pocket?"


@pytest.fixture(scope="module")
def library(request: pytest.FixtureRequest, backend: str) -> Iterator[Settings]:
    """This module's copy of the Alice + DMCA library (tests/libraries.py)."""
    yield from library_copy(request, backend, FILES, llm_backends="none")


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(models=["llama3.2:latest", "nomic-embed-text:latest"]) as server:
        yield server


@pytest.fixture
def model(fake: FakeOllama) -> Iterator[RagModel]:
    fake.reset()
    rag = RagModel()
    fake.responder = rag
    yield rag
    fake.reset()


def ask(client: TestClient, **body: Any) -> list[tuple[str, Any]]:
    with client.stream("POST", "/api/chat", json={"message": QUESTION, **body}) as r:
        assert r.status_code == 200, r.read()
        return chat_events(r.iter_lines())


def _norm(text: str) -> str:
    return " ".join(text.split())


def chat_requests(fake: FakeOllama) -> list[dict[str, Any]]:
    return [r.body for r in fake.requests_to("/api/chat")]


def test_full_pipeline_streams_a_cited_answer(
    library: Settings, fake: FakeOllama, model: RagModel
) -> None:
    with make_client(library, fake.url) as client:
        events = ask(client)
    names = [e for e, _ in events]
    assert names[0] == "start" and names[-1] == "done", names
    assert names.index("plan") < names.index("retrieval") < names.index("sources")
    assert names.index("sources") < names.index("token") < names.index("verify")
    assert names.count("token") > 3  # streamed piece by piece
    start, plan, done = first(events, "start"), first(events, "plan"), first(events, "done")
    assert start["mode"] == "llm" and start["model"] == "ollama:llama3.2"
    assert plan["source"] == "llm" and plan["hyde_passage"]
    stages = [d["stage"] for e, d in events if e == "stage"]
    assert stages[-3:] == ["filter", "answer", "verify"] and set(stages[:-3]) == {"map"}
    assert model.seen[:2] == ["plan", "map"] and model.seen[-2:] == ["answer", "verify"]
    assert "filter" in model.seen

    sources = first(events, "sources")["sources"]
    assert [s["n"] for s in sources] == list(range(1, len(sources) + 1))
    # Map yields facts only for passages sharing a word with the question; each is quoted
    # from its own passage, one per page.
    assert all(_norm(s["quote"]) in _norm(s["passage"]) for s in sources)
    assert len({(s["document_id"], s["page"]) for s in sources}) == len(sources)
    answer = answer_text(events)
    assert answer == done["answer"] and "[1]" in answer
    assert done["citations"] and set(done["citations"]) <= {s["n"] for s in sources}
    assert first(events, "verify") == {
        "event": "verify",
        "status": "ok",
        "suggestion": None,
        "round": 1,
    }
    assert done["model"] == "ollama:llama3.2" and done["timings_ms"]["answer"] > 0

    bodies = chat_requests(fake)
    answer_call = next(b for b in bodies if "Answer the question using ONLY" in str(b))
    assert answer_call["stream"] is True and answer_call["options"]["num_ctx"] >= 2048
    assert all(b.get("format") == "json" for b in bodies if b is not answer_call)

    with make_client(library, fake.url) as client:
        stored = client.get(f"/api/conversations/{done['conversation_id']}").json()
    reply = stored["messages"][-1]
    assert reply["status"] == "complete" and reply["mode"] == "llm"
    assert reply["model"] == "ollama:llama3.2" and reply["content"] == answer
    assert reply["sources"] == sources and reply["verify"]["status"] == "ok"


def test_junk_plan_and_junk_facts_fall_back_without_losing_the_answer(
    library: Settings, fake: FakeOllama, model: RagModel
) -> None:
    model.overrides["plan"] = "I think you should search for rabbits!"
    model.overrides["map"] = '{"facts": [{"node_id": "x", "fact": 3}, "nonsense"]}'
    model.overrides["filter"] = "all good"
    model.overrides["verify"] = "yes"
    with make_client(library, fake.url) as client:
        events = ask(client)
    assert first(events, "plan")["source"] == "heuristic"
    done = first(events, "done")
    assert any("plan was unusable" in n for n in done["notices"])
    assert any("verification was unusable" in n for n in done["notices"])
    # Every map batch gave nothing usable: the passages went on as raw snippets.
    sources = first(events, "sources")["sources"]
    assert sources and all(_norm(s["quote"]) in _norm(s["passage"]) for s in sources)
    assert done["status"] == "complete" and "[1]" in done["answer"]
    assert "verify" not in [e for e, _ in events]


def test_invented_citations_are_removed(
    library: Settings, fake: FakeOllama, model: RagModel
) -> None:
    model.overrides["answer"] = "The watch came out [1]. Also see [99] and [0]."
    with make_client(library, fake.url) as client:
        events = ask(client)
    done = first(events, "done")
    # A sentence left without a real source is marked.
    assert done["answer"] == "The watch came out [1]. Also see and [unsupported]."
    assert done["citations"] == [1]
    checked = done["citations_checked"]
    assert (checked["checked"], checked["kept"], checked["dropped"]) == (3, 1, 2)


#: True of the DMCA, cited below to passages of Alice: their sources hold none of their names
#: and numbers.
WRONG = [
    "President Clinton signed the Digital Millennium Copyright Act on October 28, 1998",
    "Title II of the DMCA creates four limitations on liability for online service providers",
    "Hulls of vessels up to 200 feet long are protected for ten years once registered",
]


def ten_citations(prompt: str) -> str:
    """An answer citing ten times: seven facts restated and cited to their own source, and the
    three WRONG sentences (at places 2, 5 and 8) cited to a source from Alice."""
    facts = listed_facts(prompt)
    alice = [n for n, where, _ in facts if where.startswith("Alice")]
    right = iter([restate(n, fact) for n, _, fact in facts] * 7)
    wrong = iter(f"{w} [{alice[i % len(alice)]}]." for i, w in enumerate(WRONG))
    return " ".join(next(wrong) if i in (2, 5, 8) else next(right) for i in range(10))


def test_of_ten_citations_the_three_wrong_ones_are_removed_and_reported(
    library: Settings, fake: FakeOllama, model: RagModel
) -> None:
    model.overrides["answer"] = ten_citations
    with make_client(library, fake.url) as client:
        events = ask(client)
        done = first(events, "done")
        stored = client.get(f"/api/conversations/{done['conversation_id']}").json()
    streamed = answer_text(events)
    assert len(re.findall(r"\[\d+\]", streamed)) == 10
    checked = done["citations_checked"]
    assert (checked["checked"], checked["kept"], checked["dropped"]) == (10, 7, 3)
    assert checked["method"] == "checked"
    dropped = checked["dropped_citations"]
    assert [d["claim"] for d in dropped] == WRONG
    assert all(d["reason"].startswith("the source does not contain") for d in dropped), dropped
    # The wrong marks are gone from the answer; their sentences, left without a source, are
    # marked. The right ones are as the model wrote them.
    answer = done["answer"]
    for sentence in re.findall(r"[^.]*?\[\d+\]\.", streamed):
        claim = sentence.strip()
        if any(claim.startswith(w) for w in WRONG):
            assert claim not in answer
            assert re.sub(r" \[\d+\]\.$", " [unsupported].", claim) in answer
        else:
            assert claim in answer
    assert len(re.findall(r"\[\d+\]", answer)) == 7
    assert "3 of 10 citations were removed" in " ".join(done["notices"])
    # What is stored is what the done event said.
    reply = stored["messages"][-1]
    assert reply["content"] == answer and reply["citations"] == done["citations"]
    assert reply["citations_checked"] == checked


@pytest.mark.parametrize(
    ("advertised", "num_ctx_max", "question"),
    [
        (2048, 8192, QUESTION),  # a small model: its own limit decides
        (131_072, 4096, QUESTION + " " + "Explain it in detail, with every circumstance. " * 60),
    ],
    ids=["small-model", "long-question"],
)
def test_passages_are_trimmed_to_fit_the_context_and_the_answer_says_so(
    library: Settings, advertised: int, num_ctx_max: int, question: str
) -> None:
    llama = replace(FakeOllamaModel.named("llama3.2"), context_length=advertised)
    with FakeOllama(models=[llama]) as small:
        small.responder = RagModel()
        with make_client(library, small.url, llm_num_ctx_max=num_ctx_max) as client:
            events = ask(client, message=question)
        bodies = chat_requests(small)
        truncated = small.truncated
    window = min(advertised, num_ctx_max)
    done = first(events, "done")
    assert done["mode"] == "llm" and done["status"] == "complete"
    trimmed = [n for n in done["notices"] if n.startswith("To fit the model's")]
    assert trimmed and trimmed[0].startswith(f"To fit the model's {window:,}-token context, ")
    left_out = re.search(r"(\d+) of (\d+) passages were left out", trimmed[0])
    shortened = re.search(r"(\d+)(?: of \d+)? passages were shortened", trimmed[0])
    assert left_out or shortened, trimmed
    candidates = first(events, "retrieval")["candidates"]
    prompts = [b["messages"][-1]["content"] for b in bodies]
    maps = [p for p in prompts if "numbered passages from the user's documents" in p]
    shown = sum(len(re.findall(r"^\[\d+\] ", p, re.M)) for p in maps)
    assert shown == candidates - (int(left_out.group(1)) if left_out else 0)
    # Every call was sized to its prompt, within the model's limit, and nothing was cut.
    for body in bodies:
        prompt = estimate_tokens(body["messages"])
        num_ctx = body["options"]["num_ctx"]
        assert prompt < num_ctx <= window
        assert body["truncate"] is False
    assert truncated == 0


def test_missed_info_triggers_one_more_retrieval_round(
    library: Settings, fake: FakeOllama, model: RagModel
) -> None:
    model.overrides["verify"] = json.dumps(
        {"status": "missed-info", "suggestion": "DMCA safe harbor service provider"}
    )
    with make_client(library, fake.url) as client:
        events = ask(client)
    names = [e for e, _ in events]
    assert names.count("retrieval") == 2 and names.count("sources") == 2
    assert names.count("verify") == 1  # one extra round at most
    second = [d for e, d in events if e == "retrieval"][1]
    assert second["round"] == 2
    before, after = [d["sources"] for e, d in events if e == "sources"]
    assert after[: len(before)] == before and len(after) > len(before)
    assert any(s["kind"] == "pdf" for s in after[len(before) :])
    done = first(events, "done")
    assert f"[{len(before) + 1}]" in done["answer"]  # the addendum cites the new source
    assert model.seen.count("verify") == 1 and "addendum" in model.seen


def test_error_mid_answer_is_an_error_event_and_the_partial_answer_is_kept(
    library: Settings, fake: FakeOllama, model: RagModel
) -> None:
    model.overrides["answer"] = lambda _: Reply(
        "The Rabbit took out a watch [1] and", error_after=4
    )
    with make_client(library, fake.url) as client:
        events = ask(client)
        assert events[-1][0] == "error"
        error = events[-1][1]
        assert error["error"]["code"] == "llm_interrupted"
        assert "unexpected EOF" in error["error"]["message"]
        assert answer_text(events) == "The Rabbit took out"
        conv = first(events, "start")["conversation_id"]
        stored = client.get(f"/api/conversations/{conv}").json()["messages"][-1]
    assert stored["id"] == error["message_id"]
    assert stored["status"] == "interrupted" and stored["content"] == "The Rabbit took out"


def test_stream_cut_mid_answer_is_an_error_event(
    library: Settings, fake: FakeOllama, model: RagModel
) -> None:
    model.overrides["answer"] = lambda _: Reply("one two three four five six", cut_after=2)
    with make_client(library, fake.url) as client:
        events = ask(client)
    assert events[-1][0] == "error" and events[-1][1]["error"]["code"] == "llm_interrupted"
    assert answer_text(events) == "one two"


@pytest.mark.parametrize(
    ("override", "settings", "why"),
    [
        (lambda _: Reply("x", status=500, error="model runner crashed"), {}, "runner crashed"),
        (
            lambda _: Reply("late", first_token_delay_s=5),
            {"llm_first_token_timeout_s": 0.5},
            "no answer within",
        ),
        ("   ", {}, "empty answer"),
    ],
    ids=["http-500", "slow-first-token", "empty-answer"],
)
def test_answer_failing_before_any_text_gives_the_extractive_answer(
    library: Settings,
    fake: FakeOllama,
    model: RagModel,
    override: Any,
    settings: dict[str, Any],
    why: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    _assert_extractive_fallback(library, fake, model, "answer", override, settings, why, caplog)


def test_a_map_call_cut_mid_reply_gives_the_extractive_answer(
    library: Settings, fake: FakeOllama, model: RagModel, caplog: pytest.LogCaptureFixture
) -> None:
    def cut(_: str) -> Reply:
        return Reply('{"facts": [{"node_id": 1, "fact": "x y z"}]}', cut_after=2)

    _assert_extractive_fallback(library, fake, model, "map", cut, {}, "connection lost", caplog)


def _assert_extractive_fallback(
    library: Settings,
    fake: FakeOllama,
    model: RagModel,
    purpose: str,
    override: Any,
    settings: dict[str, Any],
    why: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    model.overrides[purpose] = override
    with (
        caplog.at_level(logging.WARNING, logger="quire"),
        make_client(library, fake.url, **settings) as client,
    ):
        events = ask(client)
    done = first(events, "done")
    assert done["mode"] == "extractive" and done["status"] == "complete"
    assert done["answer"].startswith("*Extractive answer: The language model failed")
    assert done["extractive_reason"].startswith("the language model failed")
    # The server's own error goes to the log, never into the answer or its notices.
    assert why not in done["answer"] and not any(why in n for n in done["notices"])
    assert any(why in r.getMessage() for r in caplog.records), why
    assert "“" in done["answer"] and done["citations"]
    # The sources event was sent again for the extractive answer: the last one is what counts.
    last_sources = [d for e, d in events if e == "sources"][-1]["sources"]
    assert all(_norm(s["quote"]) in _norm(s["passage"]) for s in last_sources)


def test_missing_model_and_dead_server_answer_extractively_with_the_reason(
    library: Settings, fake: FakeOllama, model: RagModel
) -> None:
    with make_client(library, fake.url, ollama_chat_model="qwen2.5:7b") as client:
        events = ask(client)
        status = client.get("/api/llm").json()
    start = first(events, "start")
    assert start["mode"] == "extractive"
    # A model that is not pulled is the one server error worth showing: it says the fix.
    assert "ollama pull qwen2.5:7b" in start["extractive_reason"]
    assert status["mode"] == "extractive" and status["backends"][0]["ok"] is False
    assert model.seen == []  # the model was never asked

    with make_client(library, unused_url()) as client:
        events = ask(client)
        status = client.get("/api/llm").json()
        exported = client.get(f"/api/messages/{first(events, 'done')['message_id']}/export")
    start, done = first(events, "start"), first(events, "done")
    assert exported.status_code == 200 and "unreachable" not in exported.text
    assert start["mode"] == "extractive" and start["notices"] == []  # said once, not twice
    assert done["answer"].startswith("*Extractive answer: No language model is reachable")
    assert "[Settings](/settings#s-answer)" in done["answer"].split("\n")[0]
    # The connection error is the server status's to tell (and the log's), not the answer's.
    raw = status["backends"][0]["error"]
    assert "unreachable" in raw and "unreachable" not in done["answer"]
    assert not any("rerank" in n or "cross-encoder" in n for n in done["notices"])


def test_follow_up_is_rewritten_by_the_model(
    library: Settings, fake: FakeOllama, model: RagModel
) -> None:
    with make_client(library, fake.url) as client:
        conv = first(ask(client), "start")["conversation_id"]
        events = ask(client, message="And what did it do next?", conversation_id=conv)
    start = first(events, "start")
    assert start["standalone_question"] == "And what did it do next? (rewritten)"
    rewrite = next(b for b in chat_requests(fake) if "Rewrite the last question" in str(b))
    prompt = rewrite["messages"][-1]["content"]
    assert QUESTION in prompt and "Assistant:" in prompt


def test_openai_backend_serves_the_same_pipeline(
    library: Settings, fake: FakeOllama, model: RagModel
) -> None:
    settings = {"llm_backends": "openai", "openai_url": fake.url, "openai_model": "llama3.2"}
    with make_client(library, fake.url, **settings) as client:
        events = ask(client)
        r = client.post(
            "/v1/chat/completions",
            json={"model": "quire", "messages": [{"role": "user", "content": QUESTION}]},
        )
    assert first(events, "start")["model"] == "openai:llama3.2"
    assert first(events, "done")["mode"] == "llm"
    assert fake.requests_to("/v1/chat/completions") and not fake.requests_to("/api/chat")
    content = r.json()["choices"][0]["message"]["content"]
    assert "[1]" in content and "\n\nSources:\n[1] " in content
