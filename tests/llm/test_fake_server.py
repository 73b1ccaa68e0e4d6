"""The fake's chat routes keep the documented wire shapes (what the clients are tested against)."""

from __future__ import annotations

import json

import httpx

from tests.fakes import FakeOllama, Reply

MESSAGES = [{"role": "user", "content": "hi there"}]


def test_api_chat_streams_ndjson_by_default_and_ends_with_statistics(fake: FakeOllama) -> None:
    fake.responder = lambda messages, body: Reply(tokens=["Hel", "lo"])
    with httpx.Client(base_url=fake.url) as client:
        response = client.post("/api/chat", json={"model": "llama3.2", "messages": MESSAGES})
    assert response.headers["content-type"] == "application/x-ndjson"
    lines = [json.loads(line) for line in response.text.splitlines()]
    assert [line["message"] for line in lines] == [
        {"role": "assistant", "content": "Hel"},
        {"role": "assistant", "content": "lo"},
        {"role": "assistant", "content": ""},
    ]
    assert [line["done"] for line in lines] == [False, False, True]
    assert all(line["model"] == "llama3.2" and line["created_at"].endswith("Z") for line in lines)
    final = lines[-1]
    assert final["done_reason"] == "stop"
    assert final["eval_count"] == 2
    assert final["prompt_eval_count"] > 0
    assert final["total_duration"] >= final["eval_duration"] > 0
    assert fake.stream_outcomes["completed"] == 1


def test_api_chat_without_streaming_and_its_errors(fake: FakeOllama) -> None:
    with httpx.Client(base_url=fake.url) as client:
        whole = client.post(
            "/api/chat", json={"model": "llama3.2", "messages": MESSAGES, "stream": False}
        ).json()
        missing = client.post("/api/chat", json={"model": "phi3", "messages": MESSAGES})
        fake.responder = lambda messages, body: Reply("x", error_after=0, error="no memory")
        early = client.post("/api/chat", json={"model": "llama3.2", "messages": MESSAGES})
        fake.responder = lambda messages, body: Reply("x", status=400, error="bad format")
        rejected = client.post("/api/chat", json={"model": "llama3.2", "messages": MESSAGES})
    assert whole["message"] == {"role": "assistant", "content": "You said: hi there"}
    assert (whole["done"], whole["done_reason"], whole["eval_count"]) == (True, "stop", 4)
    assert missing.status_code == 404
    assert missing.json() == {"error": 'model "phi3" not found, try pulling it first'}
    assert (early.status_code, early.json()) == (500, {"error": "no memory"})
    assert (rejected.status_code, rejected.json()) == (400, {"error": "bad format"})


def test_openai_routes_stream_sse_and_answer_whole(fake: FakeOllama) -> None:
    fake.responder = lambda messages, body: Reply(tokens=["A", "B"])
    body = {"model": "llama3.2", "messages": MESSAGES}
    with httpx.Client(base_url=fake.url) as client:
        streamed = client.post(
            "/v1/chat/completions",
            json={**body, "stream": True, "stream_options": {"include_usage": True}},
        )
        whole = client.post("/v1/chat/completions", json=body).json()
        models = client.get("/v1/models").json()
        missing = client.post("/v1/chat/completions", json={**body, "model": "phi3"})
    assert streamed.headers["content-type"].startswith("text/event-stream")
    events = [e for e in streamed.text.split("\n\n") if e]
    assert all(e.startswith("data: ") for e in events)
    assert events[-1] == "data: [DONE]"
    chunks = [json.loads(e.removeprefix("data: ")) for e in events[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert [c["choices"][0]["delta"]["content"] for c in chunks[:2]] == ["A", "B"]
    assert chunks[2]["choices"][0]["finish_reason"] == "stop"
    assert chunks[3]["choices"] == []
    assert chunks[3]["usage"]["completion_tokens"] == 2
    assert whole["object"] == "chat.completion"
    assert whole["choices"][0]["message"] == {"role": "assistant", "content": "AB"}
    assert whole["usage"]["total_tokens"] == whole["usage"]["prompt_tokens"] + 2
    assert models["object"] == "list"
    assert {m["id"] for m in models["data"]} == {"llama3.2:latest", "nomic-embed-text:latest"}
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "not_found_error"


def test_injected_failures_use_each_route_family_s_error_shape(fake: FakeOllama) -> None:
    fake.fail_next(1, status=502, error="bad gateway", path="/v1/chat/completions")
    fake.fail_next(1, status=502, error="bad gateway", path="/api/chat")
    body = {"model": "llama3.2", "messages": MESSAGES}
    with httpx.Client(base_url=fake.url) as client:
        openai = client.post("/v1/chat/completions", json=body)
        ollama = client.post("/api/chat", json=body)
    assert openai.json()["error"]["message"] == "bad gateway"
    assert ollama.json() == {"error": "bad gateway"}


def test_api_show_advertises_the_context_length(fake: FakeOllama) -> None:
    with httpx.Client(base_url=fake.url) as client:
        llama = client.post("/api/show", json={"model": "llama3.2"}).json()
        embed = client.post("/api/show", json={"model": "nomic-embed-text"}).json()
        missing = client.post("/api/show", json={"model": "phi3"})
    assert llama["model_info"]["general.architecture"] == "llama"
    assert llama["model_info"]["llama.context_length"] == 131072
    assert llama["details"]["family"] == "llama" and "completion" in llama["capabilities"]
    assert embed["model_info"]["nomic-bert.context_length"] == 2048
    assert (missing.status_code, missing.json()) == (404, {"error": "model 'phi3' not found"})


def test_a_prompt_over_num_ctx_is_cut_silently_unless_truncate_is_false(fake: FakeOllama) -> None:
    long = [{"role": "user", "content": "word " * 3000}]  # 3,004 tokens as the fake counts
    body = {"model": "llama3.2", "messages": long, "stream": False}
    with httpx.Client(base_url=fake.url) as client:
        fits = client.post("/api/chat", json={**body, "options": {"num_ctx": 4096}}).json()
        cut = client.post("/api/chat", json={**body, "options": {"num_ctx": 2048}}).json()
        refused = client.post(
            "/api/chat", json={**body, "options": {"num_ctx": 2048}, "truncate": False}
        )
        default = client.post("/v1/chat/completions", json={**body, "messages": long * 2}).json()
    assert fits["prompt_eval_count"] == 3004
    assert cut["done"] and cut["prompt_eval_count"] == 2048  # HTTP 200, nothing said
    assert refused.status_code == 400
    assert refused.json() == {"error": "the input length exceeds the context length"}
    assert default["usage"]["prompt_tokens"] == 4096  # Ollama's default num_ctx
    assert fake.truncated == 2


def test_reset_waits_for_the_streams_still_being_sent(fake: FakeOllama) -> None:
    # A stream the last test left is counted when it ends; reset() waits for that, so the
    # count never lands in the next test (a cancelled stream once made a later test see 2).
    fake.responder = lambda messages, body: Reply("word " * 10, token_delay_s=0.05)
    with (
        httpx.Client(base_url=fake.url, timeout=10) as client,
        client.stream("POST", "/api/chat", json={"model": "llama3.2", "messages": MESSAGES}) as r,
    ):
        lines = r.iter_lines()
        next(lines)
        assert fake.streaming == 1
        fake.reset()
        assert fake.streaming == 0
        assert sum(1 for _ in lines) > 0  # the rest was sent, after the reset waited
    assert fake.stream_outcomes == {}
