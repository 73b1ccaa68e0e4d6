"""OpenAI-compatible endpoints, so other clients can use Quire as a model with retrieval
built in: ``POST /v1/chat/completions`` (streaming and not) and ``GET /v1/models``.

The last user message is the question, earlier messages are the conversation (nothing is
stored). The answer cites ``[n]``; the sources follow the answer as a "Sources" list, in the
same content (OpenAI's format has no field for them). Model ``quire`` answers with the LLM when
one is reachable (else extractively); ``quire-extractive`` always answers extractively.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any, Literal

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from fastapi.sse import ServerSentEvent
from pydantic import BaseModel, Field

from quire.api.deps import EngineDep
from quire.api.links import linked
from quire.api.schemas import error_responses
from quire.api.sse import EventStream
from quire.errors import ErrorBody, InputError, NotFound
from quire.storage.web_sources import describe
from quire.synthesis.answer import ChatRequest, Prepared
from quire.synthesis.engine import ChatEngine
from quire.synthesis.events import DoneEvent, ErrorEvent, Source, SourcesEvent, TokenEvent

router = APIRouter(prefix="/v1", tags=["openai"])
MODELS = {
    "quire": "Hybrid retrieval over your library, answered by the configured LLM "
    "(extractive when none is reachable).",
    "quire-extractive": "Hybrid retrieval over your library, answered with quoted sentences.",
}


class OAIMessage(BaseModel):
    role: Literal["system", "user", "assistant", "tool", "developer"]
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        if isinstance(self.content, list):
            return "\n".join(
                str(p.get("text", "")) for p in self.content if p.get("type") == "text"
            )
        return ""


class CompletionRequest(BaseModel):
    model: str = "quire"
    messages: list[OAIMessage] = Field(min_length=1, max_length=200)
    stream: bool = False
    # Accepted for compatibility; retrieval and the configured LLM decide the rest.
    temperature: float | None = None
    max_tokens: int | None = None
    user: str | None = None


def _request(body: CompletionRequest) -> ChatRequest:
    if body.model not in MODELS:
        raise NotFound(f"no such model: {body.model} (available: {', '.join(MODELS)})")
    turns = [(m.role, m.text()) for m in body.messages if m.role in ("user", "assistant")]
    if not turns or turns[-1][0] != "user" or not turns[-1][1].strip():
        raise InputError("the last message must be a non-empty user message")
    return ChatRequest(
        message=turns[-1][1],
        history=tuple((r, c) for r, c in turns[:-1] if c.strip()),
        use_llm=body.model == "quire",
        persist=False,
    )


def sources_text(sources: list[Source], cited: list[int]) -> str:
    """The "Sources" list after the answer: the cited ones (all when none is cited)."""
    if not sources:
        return ""
    wanted = [s for s in sources if s.n in cited] or sources
    lines = []
    for s in map(linked, wanted):
        heading = f", {s.section}" if s.section else ""
        lines.append(f"[{s.n}] {s.title}, {s.place}{heading} — {s.url}")
        lines.extend(f"    web {describe(w)}" for w in s.web_sources)
    return "\n\nSources:\n" + "\n".join(lines)


def _openai_error(error: ErrorBody) -> dict[str, Any]:
    """Our error with OpenAI's ``type`` beside its ``code`` (OpenAI clients read both)."""
    return {"error": {**error.model_dump(mode="json"), "type": error.code}}


@router.get("/models")
def list_models() -> dict[str, Any]:
    now = int(time.time())
    return {
        "object": "list",
        "data": [
            {"id": name, "object": "model", "created": now, "owned_by": "quire"} for name in MODELS
        ],
    }


@router.post("/chat/completions", responses=error_responses(400, 404, 422))
async def chat_completions(body: CompletionRequest, engine: EngineDep) -> Any:
    """A chat completion; `stream: true` gives `chat.completion.chunk` events and `[DONE]`."""
    prepared = await asyncio.to_thread(engine.prepare, _request(body))
    completion_id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
    created = int(time.time())
    if body.stream:
        return EventStream(_chunks(engine, prepared, body.model, completion_id, created))

    answer, sources, cited, failure = "", [], [], None
    async for event in engine.stream(prepared):
        if isinstance(event, SourcesEvent):
            sources = event.sources
        elif isinstance(event, DoneEvent):
            answer, cited = event.answer, event.citations
        elif isinstance(event, ErrorEvent):
            failure = event.error
    if failure is not None:
        return JSONResponse(_openai_error(failure), status_code=failure.status)
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": body.model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": answer + sources_text(sources, cited)},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        "sources": [linked(s).model_dump(mode="json") for s in sources],
    }


async def _chunks(
    engine: ChatEngine, prepared: Prepared, model: str, completion_id: str, created: int
) -> AsyncIterator[ServerSentEvent]:
    """The answer as OpenAI's ``chat.completion.chunk`` events, then ``[DONE]``."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> ServerSentEvent:
        data = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return ServerSentEvent(raw_data=json.dumps(data, ensure_ascii=False))

    yield chunk({"role": "assistant", "content": ""})
    sources: list[Source] = []
    async for event in engine.stream(prepared):
        if isinstance(event, TokenEvent):
            yield chunk({"content": event.text})
        elif isinstance(event, SourcesEvent):
            sources = event.sources
        elif isinstance(event, DoneEvent):
            tail = sources_text(sources, event.citations)
            if tail:
                yield chunk({"content": tail})
            yield chunk({}, "stop")
        elif isinstance(event, ErrorEvent):
            yield ServerSentEvent(raw_data=json.dumps(_openai_error(event.error)))
    yield ServerSentEvent(raw_data="[DONE]")
