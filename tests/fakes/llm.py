"""In-process fakes for unit tests of the answer engine (the ``MockModel`` pattern of the llm
CLI): a chat backend that answers from a script without any HTTP, and a searcher that returns
given hits. The real ``LLMRouter`` routes between fake backends, so failover and which backend
answered are the router's own logic. The end-to-end tests use the fake Ollama server instead.

    backend = ScriptedChat(RagModel().reply, name="ollama", model="llama3.2")
    engine = ChatEngine(db, settings, FakeSearcher(hits), LLMRouter([backend]))
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from quire.errors import LLMUnavailable
from quire.llm.base import Message, ModelInfo, Purpose, Usage
from quire.retrieval.hits import Hit, SearchResult
from quire.retrieval.options import SearchOptions
from quire.retrieval.planner import Plan, heuristic_plan
from tests.fakes.chat import Reply

#: ``respond(prompt) -> str | Reply``: the last user message in, what the model says out.
Respond = Callable[[str], "str | Reply"]


class ScriptedChat:
    """A ``ChatBackend`` whose replies come from ``respond``; a ``Reply`` scripts failures
    (``status`` != 200: an error before any text; ``error_after``/``cut_after``: a break after
    that many pieces) and timing (``first_token_delay_s``, ``token_delay_s``)."""

    def __init__(
        self,
        respond: Respond,
        *,
        name: str = "ollama",
        model: str = "llama3.2",
        context_tokens: int = 8192,
    ) -> None:
        self.respond = respond
        self.name = name
        self.model = model
        self.context_tokens = context_tokens
        self.url = f"inprocess://{name}"
        self.down: str | None = None  # a reason: the health check fails with it
        self.prompts: list[tuple[Purpose, str]] = []
        self.messages: list[list[Message]] = []  # every call's messages, as sent

    async def check(self) -> list[ModelInfo]:
        if self.down:
            raise LLMUnavailable(self.down)
        return [ModelInfo(self.model)]

    async def stream(
        self,
        messages: Sequence[Message],
        *,
        purpose: Purpose = "other",
        json_mode: bool = False,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> AsyncIterator[str]:
        prompt = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
        self.prompts.append((purpose, prompt))
        self.messages.append(list(messages))
        said = self.respond(prompt)
        reply = said if isinstance(said, Reply) else Reply(said)
        if reply.first_token_delay_s:
            await asyncio.sleep(reply.first_token_delay_s)
        if reply.status != 200:
            raise LLMUnavailable(f"HTTP {reply.status}: {reply.error}")
        for i, piece in enumerate(reply.pieces()):
            if i in (reply.error_after, reply.cut_after):
                raise LLMUnavailable(reply.error if i == reply.error_after else "connection lost")
            if reply.token_delay_s:
                await asyncio.sleep(reply.token_delay_s)
            yield piece

    async def complete(self, messages: Sequence[Message], **options: Any) -> str:
        return "".join([d async for d in self.stream(messages, **options)])

    async def context_window(self) -> int:
        return self.context_tokens

    @property
    def last_usage(self) -> Usage | None:
        return None

    async def aclose(self) -> None:
        return None


@dataclass
class FakeSearcher:
    """Stands in for ``Searcher``: returns ``hits``, or ``more[query]`` for the queries listed
    there (a verification's second round); records what it was asked."""

    hits: list[Hit]
    more: dict[str, list[Hit]] = field(default_factory=dict)
    embedder: Any = None
    known_documents: set[int] = field(default_factory=set)
    queries: list[tuple[str, SearchOptions, Plan]] = field(default_factory=list)
    checked: list[SearchOptions] = field(default_factory=list)

    def check(self, options: SearchOptions) -> None:
        from quire.errors import NotFound

        self.checked.append(options)
        missing = [d for d in options.document_ids if d not in self.known_documents]
        if missing:
            raise NotFound(f"no such document: {', '.join(map(str, missing))}")

    def run(self, query: str, options: SearchOptions, *, plan: Plan | None = None) -> SearchResult:
        plan = plan or heuristic_plan(query)
        self.queries.append((query, options, plan))
        hits = self.more.get(query, self.hits)
        return SearchResult(
            query=query,
            plan=plan,
            strategy=options.strategy or plan.strategy,
            hits=list(hits),
            counts={"bm25": len(hits), "fused": len(hits)},
            timings_ms={"total": 1.0},
            cpu_ms=1.0,
            notices=[],
        )


def hit(chunk_id: int, text: str, *, document_id: int = 1, page: int = 1, **more: Any) -> Hit:
    """A search hit as the real searcher returns one."""
    values: dict[str, Any] = {
        "title": "Alice's Adventures in Wonderland",
        "kind": "epub",
        "filename": "alice.epub",
        "heading_path": "Chapter I",
        "highlights": [],
        "ranks": {"bm25": chunk_id},
        "scores": {"bm25": 1.0},
        "fused": 1.0 / chunk_id,
        **more,
    }
    return Hit(chunk_id=chunk_id, document_id=document_id, page=page, text=text, **values)
