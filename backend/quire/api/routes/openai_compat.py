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
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, Field

from quire.api.routes.chat import ERRORS, EngineDep
from quire.errors import InputError, NotFound
from quire.synthesis.pipeline import ChatRequest

router = APIRouter(prefix="/v1", tags=["openai"])
MODELS = {
    "quire": "Hybrid retrieval over your library, answered by the configured LLM "
    "(extractive when none is reachable).",
    "quire-extractive": "Hybrid retrieval over your library, answered with quoted sentences.",
}
_KIND_LABEL = {"pdf": "p.", "epub": "section", "perplexity": "turn"}


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


def sources_text(sources: list[dict[str, Any]], cited: list[int]) -> str:
    """The "Sources" list after the answer: the cited ones (all when none is cited)."""
    if not sources:
        return ""
    wanted = [s for s in sources if s["n"] in cited] or sources
    lines = []
    for s in wanted:
        where = f"{_KIND_LABEL.get(s['kind'], 'p.')} {s['page']}"
        heading = f", {s['heading_path']}" if s.get("heading_path") else ""
        lines.append(f"[{s['n']}] {s['title']}, {where}{heading} — {s['url']}")
    return "\n\nSources:\n" + "\n".join(lines)


@router.get("/models")
def list_models() -> dict[str, Any]:
    now = int(time.time())
    return {
        "object": "list",
        "data": [
            {"id": name, "object": "model", "created": now, "owned_by": "quire"} for name in MODELS
        ],
    }


@router.post("/chat/completions", responses=ERRORS)
async def chat_completions(body: CompletionRequest, engine: EngineDep) -> Any:
    """A chat completion; `stream: true` gives `chat.completion.chunk` events and `[DONE]`."""
    prepared = await asyncio.to_thread(engine.prepare, _request(body))
    completion_id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        data = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": body.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"

    if body.stream:

        async def events() -> AsyncIterator[str]:
            yield chunk({"role": "assistant", "content": ""})
            sources: list[dict[str, Any]] = []
            async for name, data in engine.stream(prepared):
                if name == "token":
                    yield chunk({"content": data["text"]})
                elif name == "sources":
                    sources = data["sources"]
                elif name == "done":
                    tail = sources_text(sources, data["citations"])
                    if tail:
                        yield chunk({"content": tail})
                    yield chunk({}, "stop")
                elif name == "error":
                    err = {"message": data["message"], "type": data["code"], "code": data["code"]}
                    yield f"data: {json.dumps({'error': err})}\n\n"
            yield "data: [DONE]\n\n"

        return StreamingResponse(
            events(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    answer, sources, cited, failure = "", [], [], None
    async for name, data in engine.stream(prepared):
        if name == "sources":
            sources = data["sources"]
        elif name == "done":
            answer, cited = data["answer"], data["citations"]
        elif name == "error":
            failure = data
    if failure is not None:
        return JSONResponse(
            {"error": {**failure, "type": failure["code"]}}, status_code=failure["status"]
        )
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
        "sources": sources,
    }
