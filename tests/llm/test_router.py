"""LLMRouter over real clients and the fake server: order, failover, health cache, settings."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from quire.config import Settings
from quire.errors import LLMInterrupted, LLMUnavailable
from quire.llm.base import ChatBackend, Message
from quire.llm.ollama import OllamaChat
from quire.llm.openai import OpenAIChat
from quire.llm.router import LLMRouter, make_router
from tests.fakes import FakeOllama, Reply, unused_url
from tests.llm.conftest import CHAT_MODEL, eventually

pytestmark = pytest.mark.anyio

HELLO: list[Message] = [{"role": "user", "content": "What is a neap tide?"}]
FAST: dict[str, Any] = {"retries": 0, "backoff_s": 0.0, "first_token_timeout_s": 5.0}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def router(*backends: OllamaChat | OpenAIChat, clock: Clock | None = None) -> LLMRouter:
    return LLMRouter(backends, health_ttl_s=30, clock=clock or Clock())


async def answer(r: LLMRouter) -> str:
    return (await answered(r))[0]


async def answered(r: LLMRouter, **options: Any) -> tuple[str, ChatBackend | None]:
    """The reply's text and the backend that gave it (the reply's own, not the router's)."""
    reply = r.stream(HELLO, purpose="answer", **options)
    return "".join([delta async for delta in reply]), reply.backend


async def test_the_context_is_the_smallest_of_the_backends_that_are_up(fake: FakeOllama) -> None:
    ollama = OllamaChat(fake.url, CHAT_MODEL, num_ctx_max=8192, **FAST)
    openai = OpenAIChat(fake.url, CHAT_MODEL, context_tokens=6144, **FAST)
    down = OpenAIChat(unused_url(), CHAT_MODEL, context_tokens=2048, **FAST)
    async with router(ollama, openai, down) as r:
        assert await r.context_window() == 6144
    async with router(OllamaChat(fake.url, CHAT_MODEL, num_ctx_max=8192, **FAST)) as r:
        assert await r.context_window() == 8192


async def test_first_backend_answers_and_becomes_active(fake: FakeOllama) -> None:
    ollama = OllamaChat(fake.url, CHAT_MODEL, **FAST)
    openai = OpenAIChat(fake.url, CHAT_MODEL, **FAST)
    async with router(ollama, openai) as r:
        reply = r.stream(HELLO, purpose="answer")
        assert reply.backend is None and reply.label is None
        assert await r.available() == [ollama, openai]
        assert "".join([delta async for delta in reply]) == "You said: What is a neap tide?"
        assert reply.backend is ollama
        assert reply.label == "ollama:llama3.2"
    assert len(fake.requests_to("/api/chat")) == 1
    assert fake.requests_to("/v1/chat/completions") == []


async def test_fails_over_before_the_first_token(fake: FakeOllama) -> None:
    ollama = OllamaChat(fake.url, CHAT_MODEL, **FAST)
    openai = OpenAIChat(fake.url, CHAT_MODEL, **FAST)
    fake.fail_next(1, status=500, error="runner crashed", path="/api/chat")
    async with router(ollama, openai) as r:
        assert await r.complete(HELLO, json_mode=True) == '{"echo": "What is a neap tide?"}'
        text, backend = await answered(r, json_mode=True)  # ollama is cached as down
        assert text == '{"echo": "What is a neap tide?"}'
        assert backend is openai
        status = await r.status()
    assert [(s["name"], s["ok"]) for s in status] == [
        ("ollama:llama3.2", False),
        ("openai:llama3.2", True),
    ]
    assert "runner crashed" in status[0]["error"]
    assert status[1]["error"] is None
    assert status[1]["url"] == fake.url
    assert "llama3.2:latest" in status[1]["models"]
    assert completions_format(fake) == [{"type": "json_object"}] * 2


def completions_format(fake: FakeOllama) -> list[Any]:
    return [r.body.get("response_format") for r in fake.requests_to("/v1/chat/completions")]


async def test_no_failover_once_text_was_yielded(fake: FakeOllama) -> None:
    fake.responder = lambda messages, body: Reply("half an answer", cut_after=2)
    async with router(
        OllamaChat(fake.url, CHAT_MODEL, **FAST), OpenAIChat(fake.url, CHAT_MODEL, **FAST)
    ) as r:
        received: list[str] = []
        with pytest.raises(LLMInterrupted):
            async for delta in r.stream(HELLO):
                received.append(delta)
    assert received == ["half", " an"]
    assert fake.requests_to("/v1/chat/completions") == []


async def test_a_dead_backend_is_not_contacted_again_within_the_ttl(fake: FakeOllama) -> None:
    clock = Clock()
    missing = OllamaChat(fake.url, "mistral", **FAST)  # not pulled: its check fails
    openai = OpenAIChat(fake.url, CHAT_MODEL, **FAST)
    async with router(missing, openai, clock=clock) as r:
        for _ in range(3):
            assert await answer(r) == "You said: What is a neap tide?"
        assert await r.available() == [openai]
        assert len(fake.requests_to("/api/tags")) == 1
        assert fake.requests_to("/api/chat") == []

        clock.now += 29
        await answer(r)
        assert len(fake.requests_to("/api/tags")) == 1

        clock.now += 2  # past the TTL: checked again, once
        await answer(r)
        await answer(r)
        assert len(fake.requests_to("/api/tags")) == 2
    assert len(fake.requests_to("/v1/chat/completions")) == 6
    assert len(fake.requests_to("/v1/models")) == 1  # its successful calls keep it fresh


async def test_a_backend_failing_a_call_is_marked_down(fake: FakeOllama) -> None:
    clock = Clock()
    down = unused_url()
    async with router(
        OllamaChat(fake.url, CHAT_MODEL, **FAST), OpenAIChat(down, CHAT_MODEL, **FAST), clock=clock
    ) as r:
        fake.fail_next(1, status=503, path="/api/chat")
        with pytest.raises(LLMUnavailable, match=r"answered: ollama.*503.*openai"):
            await answer(r)
        chats = len(fake.requests_to("/api/chat"))
        with pytest.raises(LLMUnavailable, match="no language model answered"):
            await answer(r)  # both cached as down: nothing is contacted
        assert len(fake.requests_to("/api/chat")) == chats == 1
        assert await r.available() == []
        clock.now += 31
        assert await answer(r) == "You said: What is a neap tide?"


async def test_a_rejected_request_fails_over_but_keeps_the_backend_up(fake: FakeOllama) -> None:
    ollama = OllamaChat(fake.url, CHAT_MODEL, **FAST)
    async with router(ollama, OpenAIChat(fake.url, CHAT_MODEL, **FAST)) as r:
        fake.fail_next(1, status=400, error="bad options", path="/api/chat")
        assert (await answered(r))[1] is not ollama
        assert (await answered(r))[1] is ollama
    assert len(fake.requests_to("/api/chat")) == 2


async def test_cancelling_a_consumer_closes_the_upstream_stream(fake: FakeOllama) -> None:
    fake.responder = lambda messages, body: Reply("tide " * 100, token_delay_s=0.05)
    async with router(OllamaChat(fake.url, CHAT_MODEL, **FAST)) as r:
        seen = asyncio.Event()

        async def consume() -> None:
            async for _ in r.stream(HELLO):
                seen.set()

        task = asyncio.create_task(consume())
        await asyncio.wait_for(seen.wait(), 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await eventually(lambda: fake.cancelled_streams == 1)
        assert await r.available()  # a cancelled call says nothing against the backend


async def test_closing_the_stream_early_closes_the_upstream_stream(fake: FakeOllama) -> None:
    fake.responder = lambda messages, body: Reply("tide " * 100, token_delay_s=0.05)
    async with router(OllamaChat(fake.url, CHAT_MODEL, **FAST)) as r:
        deltas = r.stream(HELLO)
        assert await anext(deltas) == "tide"
        await deltas.aclose()
        await eventually(lambda: fake.cancelled_streams == 1)


def settings(tmp_path: Path, **kw: Any) -> Settings:
    return Settings(data_dir=tmp_path, **kw)


def test_make_router_follows_the_settings(tmp_path: Path) -> None:
    assert make_router(settings(tmp_path, llm_backends="none")) is None
    assert make_router(settings(tmp_path, llm_backends="openai")) is None  # no openai_url

    only = make_router(settings(tmp_path, ollama_chat_model="qwen2.5:3b", llm_retries=0))
    assert only is not None
    [ollama] = only.backends
    assert isinstance(ollama, OllamaChat)
    assert (ollama.url, ollama.model, ollama.retries) == ("http://127.0.0.1:11434", "qwen2.5:3b", 0)

    both = make_router(
        settings(
            tmp_path,
            llm_backends=" OpenAI , ollama",
            openai_url="http://127.0.0.1:8081/v1/",
            openai_api_key="sk-x",
            llm_first_token_timeout_s=9,
            llm_num_ctx_max=4096,
            openai_context_tokens=16384,
        )
    )
    assert both is not None
    openai, ollama = both.backends
    assert isinstance(openai, OpenAIChat) and isinstance(ollama, OllamaChat)
    assert openai.url == "http://127.0.0.1:8081"
    assert openai._client.headers["authorization"] == "Bearer sk-x"
    assert (openai.first_token_timeout_s, ollama.num_ctx_max) == (9, 4096)
    assert openai.context_tokens == 16384


@pytest.mark.parametrize("value", ["ollama,gpt", "ollama,ollama", "none,ollama"])
def test_bad_backend_lists_fail_at_start_up(tmp_path: Path, value: str) -> None:
    with pytest.raises(ValidationError, match="llm_backends"):
        settings(tmp_path, llm_backends=value)
