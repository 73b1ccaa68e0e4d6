"""OllamaChat against the fake Ollama over real HTTP."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

import pytest

from quire.errors import LLMInterrupted, LLMModelNotPulled, LLMUnavailable
from quire.llm.base import ChatBackend, Message, estimate_tokens
from quire.llm.ollama import OllamaChat, context_size
from tests.fakes import FakeOllama, Reply, unused_url
from tests.fakes.ollama import FakeOllamaModel
from tests.llm.conftest import CHAT_MODEL, eventually

pytestmark = pytest.mark.anyio

HELLO: list[Message] = [
    {"role": "system", "content": "Answer briefly."},
    {"role": "user", "content": "Why is the sea salty?"},
]


def chat(url: str, model: str = CHAT_MODEL, **kw: Any) -> OllamaChat:
    options: dict[str, Any] = {"retries": 2, "backoff_s": 0.0, "first_token_timeout_s": 5.0}
    return OllamaChat(url, model, **(options | kw))


async def collect(backend: OllamaChat, messages: list[Message] = HELLO, **kw: Any) -> list[str]:
    return [delta async for delta in backend.stream(messages, **kw)]


def chats(fake: FakeOllama) -> list[dict[str, Any]]:
    return [r.body for r in fake.requests_to("/api/chat")]


async def test_streams_deltas_in_order_and_reports_the_done_statistics(fake: FakeOllama) -> None:
    fake.responder = lambda messages, body: Reply(tokens=["Salt", " comes", " from", " rocks."])
    async with chat(fake.url) as backend:
        assert isinstance(backend, ChatBackend)
        assert await collect(backend, purpose="answer") == ["Salt", " comes", " from", " rocks."]
        usage = backend.last_usage
    assert usage is not None
    assert (usage.completion_tokens, usage.finish_reason) == (4, "stop")
    assert usage.prompt_tokens is not None and usage.prompt_tokens > 0
    assert usage.total_ms is not None and usage.total_ms > 0
    assert (usage.backend, usage.model) == ("ollama", CHAT_MODEL)
    [body] = chats(fake)
    assert body["model"] == CHAT_MODEL
    assert body["messages"] == HELLO
    assert body["stream"] is True
    assert body["keep_alive"] == "30m"
    assert body["options"] == {"num_ctx": 2048}
    # A prompt longer than num_ctx fails instead of losing its start; so does a reply that
    # would push the prompt out of the context.
    assert (body["truncate"], body["shift"]) == (False, False)
    assert "format" not in body


async def test_complete_json_mode_and_options(fake: FakeOllama) -> None:
    fake.responder = lambda messages, body: Reply('{"strategy": "precise"}')
    async with chat(fake.url) as backend:
        text = await backend.complete(HELLO, json_mode=True, max_tokens=200, temperature=0.0)
    assert text == '{"strategy": "precise"}'
    [body] = chats(fake)
    assert body["format"] == "json"
    assert body["options"] == {"num_ctx": 2048, "temperature": 0.0, "num_predict": 200}


def test_context_size_rounds_up_within_bounds() -> None:
    assert context_size(10, 100, 8192) == 2048
    assert context_size(2000, 1024, 8192) == 3072
    assert context_size(3072, 0, 8192) == 3072
    assert context_size(3073, 0, 8192) == 4096
    assert context_size(50_000, 1024, 8192) == 8192


async def test_num_ctx_is_sized_to_the_prompt_and_never_shrinks(fake: FakeOllama) -> None:
    big: list[Message] = [{"role": "user", "content": "word " * 2800}]  # ~4,000 tokens
    bigger: list[Message] = [{"role": "user", "content": "word " * 3900}]  # ~5,600 tokens
    async with chat(fake.url, num_ctx_max=6144) as backend:
        await collect(backend, HELLO, max_tokens=100)
        await collect(backend, big, max_tokens=100)
        await collect(backend, HELLO, max_tokens=100)  # stays: a new num_ctx reloads the model
        await collect(backend, bigger)  # fits, but not with 1,024 tokens of reply
    sent = [b["options"] for b in chats(fake)]
    assert [o["num_ctx"] for o in sent] == [2048, 5120, 5120, 6144]
    # The reply gets what is left, so that it never pushes the prompt out.
    prompt = estimate_tokens(bigger)
    assert sent[-1]["num_predict"] == 6144 - prompt and 256 <= 6144 - prompt < 1024
    assert fake.truncated == 0


async def test_a_prompt_that_cannot_fit_is_refused_without_a_request(fake: FakeOllama) -> None:
    huge: list[Message] = [{"role": "user", "content": "word " * 20_000}]  # ~28,600 tokens
    async with chat(fake.url, num_ctx_max=6144) as backend:
        with pytest.raises(
            LLMUnavailable,
            match=r"~28,5\d\d tokens does not fit the model's "
            r"6,144-token context",
        ) as caught:
            await collect(backend, huge)
    assert not caught.value.retryable  # not the server's fault: it stays up for others
    assert chats(fake) == []


async def test_the_model_s_advertised_context_caps_num_ctx(fake: FakeOllama) -> None:
    fake.models = [
        replace(m, context_length=3072) if m.name.startswith("llama") else m for m in fake.models
    ]
    big: list[Message] = [{"role": "user", "content": "word " * 2800}]  # ~4,000 tokens
    medium: list[Message] = [{"role": "user", "content": "word " * 1400}]  # ~2,000 tokens
    try:
        async with chat(fake.url, num_ctx_max=8192) as backend:
            assert await backend.context_window() == 3072
            await collect(backend, medium)
            with pytest.raises(LLMUnavailable, match="3,072-token context"):
                await collect(backend, big)
    finally:
        fake.models = [
            replace(m, context_length=FakeOllamaModel.named(m.name).context_length)
            for m in fake.models
        ]
    [show] = fake.requests_to("/api/show")  # asked once
    assert show.body == {"model": CHAT_MODEL}
    [body] = chats(fake)
    assert body["options"]["num_ctx"] == 3072 and fake.truncated == 0


async def test_without_api_show_num_ctx_stays_within_the_setting(fake: FakeOllama) -> None:
    fake.fail_next(2, status=404, error="404 page not found", path="/api/show")  # an old server
    async with chat(fake.url, num_ctx_max=4096) as backend:
        assert await backend.context_window() == 4096
        await collect(backend)
    assert [b["options"]["num_ctx"] for b in chats(fake)] == [2048]
    assert len(fake.requests_to("/api/show")) == 2  # asked again: it may have been upgraded


async def test_a_server_counting_more_tokens_refuses_rather_than_cuts(fake: FakeOllama) -> None:
    # The fake counts one token per word and four per message; "a " is 2 characters, which
    # the estimate counts as well under one token: the server sees more than was sized for.
    dense: list[Message] = [{"role": "user", "content": "a " * 5000}]  # sized to 4,096
    async with chat(fake.url, num_ctx_max=8192) as backend:
        with pytest.raises(LLMUnavailable, match="HTTP 400.*exceeds the context length"):
            await collect(backend, dense)
    assert fake.truncated == 0


async def test_check_accepts_the_name_without_latest_and_lists_models(fake: FakeOllama) -> None:
    async with chat(fake.url, "llama3.2") as short, chat(fake.url, "llama3.2:latest") as tagged:
        models = await short.check()
        await tagged.check()
    assert {m.name for m in models} == {"llama3.2:latest", "nomic-embed-text:latest"}
    llama = next(m for m in models if m.name == "llama3.2:latest")
    assert llama.details["family"] == "llama"


async def test_model_missing_says_how_to_pull_it(fake: FakeOllama) -> None:
    async with chat(fake.url, "mistral") as backend:
        with pytest.raises(LLMModelNotPulled, match=r"run `ollama pull mistral`") as checked:
            await backend.check()
        with pytest.raises(LLMModelNotPulled, match=r"run `ollama pull mistral`") as streamed:
            await collect(backend)
    assert checked.value.detail == {
        "model": "mistral",
        "url": fake.url,
        "available": ["llama3.2", "nomic-embed-text"],
    }
    assert 'model "mistral" not found, try pulling it first' in streamed.value.message
    assert len(fake.requests_to("/api/chat")) == 1  # a 404 is not retried


async def test_http_500_before_the_stream_is_retried(fake: FakeOllama) -> None:
    fake.fail_next(2, status=500, path="/api/chat")
    async with chat(fake.url, retries=2) as backend:
        assert "".join(await collect(backend)) == "You said: Why is the sea salty?"
    assert len(fake.requests_to("/api/chat")) == 3


async def test_http_503_beyond_the_retries_is_unavailable(fake: FakeOllama) -> None:
    fake.fail_next(5, status=503, error="server busy", path="/api/chat")
    async with chat(fake.url, retries=1) as backend:
        with pytest.raises(LLMUnavailable, match="2 attempts.*HTTP 503: server busy") as caught:
            await collect(backend)
    assert not isinstance(caught.value, LLMInterrupted)
    assert caught.value.retryable
    assert len(fake.requests_to("/api/chat")) == 2


async def test_http_400_is_not_retried(fake: FakeOllama) -> None:
    fake.fail_next(1, status=400, error="invalid options", path="/api/chat")
    async with chat(fake.url) as backend:
        with pytest.raises(LLMUnavailable, match="HTTP 400.*invalid options") as caught:
            await collect(backend)
    assert not caught.value.retryable
    assert len(fake.requests_to("/api/chat")) == 1


async def test_error_line_after_text_is_an_interruption_and_not_retried(fake: FakeOllama) -> None:
    fake.responder = lambda messages, body: Reply("one two three four", error_after=2)
    received: list[str] = []
    async with chat(fake.url) as backend:
        with pytest.raises(LLMInterrupted, match="unexpected EOF"):
            async for delta in backend.stream(HELLO):
                received.append(delta)
    assert received == ["one", " two"]
    assert len(fake.requests_to("/api/chat")) == 1
    assert fake.stream_outcomes["error"] == 1


async def test_error_line_before_any_text_is_unavailable(fake: FakeOllama) -> None:
    # A thinking model streams lines with empty content before its answer.
    fake.responder = lambda messages, body: Reply(tokens=["", ""], error_after=2, error="OOM")
    async with chat(fake.url) as backend:
        with pytest.raises(LLMUnavailable, match="failed before answering: OOM") as caught:
            await collect(backend)
    assert not isinstance(caught.value, LLMInterrupted)
    assert len(fake.requests_to("/api/chat")) == 1  # the body had begun: no retry


async def test_connection_cut_mid_stream_is_an_interruption(fake: FakeOllama) -> None:
    fake.responder = lambda messages, body: Reply("one two three four", cut_after=3)
    received: list[str] = []
    async with chat(fake.url) as backend:
        with pytest.raises(LLMInterrupted, match="connection lost"):
            async for delta in backend.stream(HELLO):
                received.append(delta)
    assert received == ["one", " two", " three"]
    assert len(fake.requests_to("/api/chat")) == 1
    assert backend.last_usage is None


async def test_a_cut_before_the_first_line_is_retried(fake: FakeOllama) -> None:
    replies = iter([Reply("lost", cut_after=0), Reply("second try")])
    fake.responder = lambda messages, body: next(replies)
    async with chat(fake.url) as backend:
        assert await collect(backend) == ["second", " try"]
    assert len(fake.requests_to("/api/chat")) == 2
    assert fake.stream_outcomes["cut"] == 1


async def test_slow_first_token_times_out_on_every_attempt(fake: FakeOllama) -> None:
    fake.responder = lambda messages, body: Reply("late", first_token_delay_s=2.0)
    async with chat(fake.url, first_token_timeout_s=0.3, retries=1) as backend:
        started = time.monotonic()
        with pytest.raises(LLMUnavailable, match=r"no answer within 0.3 s"):
            await collect(backend)
        took = time.monotonic() - started
    assert 0.6 <= took < 1.8
    assert len(fake.requests_to("/api/chat")) == 2


async def test_silence_between_tokens_beyond_the_idle_timeout(fake: FakeOllama) -> None:
    fake.responder = lambda messages, body: Reply("one two", token_delay_s=1.0)
    async with chat(fake.url, idle_timeout_s=0.3) as backend:
        with pytest.raises(LLMInterrupted, match=r"no output for 0.3 s"):
            await collect(backend)
    assert len(fake.requests_to("/api/chat")) == 1


async def test_server_down_is_unavailable_fast() -> None:
    async with chat(unused_url(), retries=2) as backend:
        started = time.monotonic()
        with pytest.raises(LLMUnavailable, match="unreachable"):
            await backend.check()
        with pytest.raises(LLMUnavailable, match="3 attempts.*cannot connect"):
            await collect(backend)
        assert time.monotonic() - started < 2.0


async def test_cancelling_the_consumer_closes_the_upstream_stream(fake: FakeOllama) -> None:
    # 30 s of reply: on a busy machine the fake may notice the closed connection seconds
    # late, and it must still be mid-reply then (a 5 s reply could end first).
    fake.responder = lambda messages, body: Reply("word " * 600, token_delay_s=0.05)
    first = asyncio.Event()

    async def consume(backend: OllamaChat) -> None:
        async for _ in backend.stream(HELLO):
            first.set()

    async with chat(fake.url) as backend:
        task = asyncio.create_task(consume(backend))
        await asyncio.wait_for(first.wait(), 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await eventually(lambda: fake.cancelled_streams == 1)
    assert fake.stream_outcomes["completed"] == 0
