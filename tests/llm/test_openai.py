"""OpenAIChat against the fake's OpenAI-compatible routes (as Ollama serves them) over HTTP."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from quire.errors import LLMInterrupted, LLMModelNotPulled, LLMUnavailable
from quire.llm.base import Message
from quire.llm.openai import OpenAIChat
from quire.llm.streaming import Line
from tests.fakes import FakeOllama, Reply, unused_url
from tests.llm.conftest import CHAT_MODEL, eventually

pytestmark = pytest.mark.anyio

HELLO: list[Message] = [{"role": "user", "content": "Name a tide."}]


def chat(url: str, model: str = CHAT_MODEL, **kw: Any) -> OpenAIChat:
    options: dict[str, Any] = {"retries": 2, "backoff_s": 0.0, "first_token_timeout_s": 5.0}
    return OpenAIChat(url, model, **(options | kw))


async def collect(backend: OpenAIChat, **kw: Any) -> list[str]:
    return [delta async for delta in backend.stream(HELLO, **kw)]


def completions(fake: FakeOllama) -> list[dict[str, Any]]:
    return [r.body for r in fake.requests_to("/v1/chat/completions")]


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/"])
async def test_streams_deltas_and_the_usage_chunk(fake: FakeOllama, suffix: str) -> None:
    fake.responder = lambda messages, body: Reply(tokens=["Spring", " tide", "."])
    async with chat(fake.url + suffix) as backend:
        assert await collect(backend) == ["Spring", " tide", "."]
        usage = backend.last_usage
    assert usage is not None
    assert (usage.completion_tokens, usage.finish_reason, usage.backend) == (3, "stop", "openai")
    assert usage.prompt_tokens is not None and usage.prompt_tokens > 0
    [body] = completions(fake)
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == HELLO
    assert "response_format" not in body and "max_tokens" not in body


async def test_json_mode_options_and_api_key(fake: FakeOllama) -> None:
    fake.responder = lambda messages, body: Reply('{"ok": true}')
    async with chat(fake.url, api_key="sk-local") as backend:
        text = await backend.complete(HELLO, json_mode=True, max_tokens=50, temperature=0.2)
    assert text == '{"ok": true}'
    [request] = fake.requests_to("/v1/chat/completions")
    assert request.body["response_format"] == {"type": "json_object"}
    assert (request.body["max_tokens"], request.body["temperature"]) == (50, 0.2)
    assert request.headers["authorization"] == "Bearer sk-local"


async def test_no_model_configured_takes_the_first_served(fake: FakeOllama) -> None:
    async with chat(fake.url, model="") as backend:
        assert "".join(await collect(backend)) == "You said: Name a tide."
        assert backend.model == "llama3.2:latest"
    assert completions(fake)[0]["model"] == "llama3.2:latest"
    assert len(fake.requests_to("/v1/models")) == 1


async def test_the_context_is_the_setting_capped_by_what_the_listing_advertises(
    fake: FakeOllama,
) -> None:
    async with chat(fake.url) as backend:  # Ollama's /v1/models says nothing of it
        assert await backend.context_window() == 4096
        assert await backend.context_window() == 4096
    assert len(fake.requests_to("/v1/models")) == 1  # listed once
    fake.v1_model_fields = {"max_model_len": 2048}  # as vLLM lists a model
    async with chat(fake.url, context_tokens=32768) as backend:
        assert await backend.context_window() == 2048
    fake.v1_model_fields = {"max_model_len": 131072}
    async with chat(fake.url, context_tokens=16384) as backend:
        assert await backend.context_window() == 16384


async def test_model_not_served(fake: FakeOllama) -> None:
    async with chat(fake.url, "gpt-4o") as backend:
        with pytest.raises(LLMModelNotPulled, match="QUIRE_OPENAI_MODEL") as checked:
            await backend.check()
        with pytest.raises(LLMModelNotPulled, match=r"not found.*run `ollama pull gpt-4o`"):
            await collect(backend)
    assert "llama3.2:latest" in checked.value.message
    assert len(completions(fake)) == 1


async def test_http_500_then_success_is_retried(fake: FakeOllama) -> None:
    fake.fail_next(1, status=500, path="/v1/chat/completions")
    async with chat(fake.url) as backend:
        assert "".join(await collect(backend)) == "You said: Name a tide."
    assert len(completions(fake)) == 2


async def test_error_event_mid_stream_is_an_interruption(fake: FakeOllama) -> None:
    fake.responder = lambda messages, body: Reply("a b c", error_after=1, error="KV cache full")
    received: list[str] = []
    async with chat(fake.url) as backend:
        with pytest.raises(LLMInterrupted, match="KV cache full"):
            async for delta in backend.stream(HELLO):
                received.append(delta)
    assert received == ["a"]
    assert len(completions(fake)) == 1


async def test_connection_cut_mid_stream_is_an_interruption(fake: FakeOllama) -> None:
    fake.responder = lambda messages, body: Reply("a b c d", cut_after=2)
    async with chat(fake.url) as backend:
        with pytest.raises(LLMInterrupted, match="connection lost"):
            await collect(backend)
    assert len(completions(fake)) == 1


async def test_slow_first_token_and_server_down_are_unavailable(fake: FakeOllama) -> None:
    fake.responder = lambda messages, body: Reply("late", first_token_delay_s=2.0)
    async with chat(fake.url, first_token_timeout_s=0.2, retries=0) as slow:
        with pytest.raises(LLMUnavailable, match="no answer within 0.2 s") as caught:
            await collect(slow)
    assert not isinstance(caught.value, LLMInterrupted)
    async with chat(unused_url()) as down:
        with pytest.raises(LLMUnavailable, match="unreachable"):
            await down.check()


async def test_cancelling_the_consumer_closes_the_upstream_stream(fake: FakeOllama) -> None:
    fake.responder = lambda messages, body: Reply("tok " * 100, token_delay_s=0.05)

    async def consume(backend: OpenAIChat, seen: asyncio.Event) -> None:
        async for _ in backend.stream(HELLO):
            seen.set()

    async with chat(fake.url) as backend:
        seen = asyncio.Event()
        task = asyncio.create_task(consume(backend, seen))
        await asyncio.wait_for(seen.wait(), 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await eventually(lambda: fake.cancelled_streams == 1)


@pytest.mark.parametrize(
    ("line", "parsed"),
    [
        ('data:{"choices":[{"delta":{"content":"x"}}]}', Line(text="x")),
        ('data: {"choices":[{"delta":{},"finish_reason":"length"}]}', Line(finish_reason="length")),
        ("data: [DONE]", Line(done=True)),
        (": ping", None),
        ("event: message", None),
        ('data: {"error":{"message":"boom","type":"server_error"}}', Line(error="boom")),
        # llama-server's own error field
        ('error: {"code":400,"message":"context exceeded","type":"invalid_request_error"}',
         Line(error="context exceeded")),
        ('data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2}}',
         Line(prompt_tokens=7, completion_tokens=2)),
        ('data: {"choices":[],"timings":{"prompt_ms":1.5,"predicted_ms":2.5}}', Line(total_ms=4.0)),
        ("data: {not json", Line(error="unreadable line '{not json'")),
    ],
)  # fmt: skip
def test_sse_lines_of_the_servers_we_target(line: str, parsed: Line | None) -> None:
    assert OpenAIChat("http://127.0.0.1:1", "m")._parse(line) == parsed
