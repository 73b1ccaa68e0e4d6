"""Chat: a streamed, cited answer (SSE), conversations, feedback, and the LLM's status.

The event stream is the models of synthesis/events.py (docs/chat-api.md). Bad input (empty or
huge message, unknown conversation or document) is refused with the usual JSON error before
the stream starts.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Response
from fastapi.sse import ServerSentEvent
from pydantic import BaseModel, Field

from quire.api.deps import DbDep, EngineDep
from quire.api.links import linked, linked_event
from quire.api.schemas import IdPath, UtcDateTime, error_responses, stream_error_responses
from quire.api.sse import EventStream
from quire.retrieval.options import RetrievalOptions
from quire.retrieval.planner import Plan
from quire.storage import conversations
from quire.storage.records import Id
from quire.synthesis.answer import ChatRequest, Prepared
from quire.synthesis.engine import MAX_MESSAGE_CHARS
from quire.synthesis.events import (
    AnswerMode,
    ChatEvent,
    CitationCheck,
    Source,
    SourcesEvent,
    VerifyEvent,
)

router = APIRouter(prefix="/api", tags=["chat"])
ERRORS = error_responses(400, 404, 422)
STREAM_ERRORS = stream_error_responses(
    {
        400: "Empty or too long message",
        404: "Unknown conversation or document",
        422: "Malformed request",
    }
)


class ChatIn(RetrievalOptions):
    """A question, and the retrieval options it is answered with."""

    # The length limit is checked by the engine (a clear 400 naming the limit); this bound
    # only stops absurd bodies early.
    message: str = Field(
        min_length=1, max_length=4 * MAX_MESSAGE_CHARS, description="The question."
    )
    conversation_id: Id | None = Field(default=None, description="Continue this conversation.")
    llm: bool = Field(default=True, description="False: answer extractively (no LLM).")


async def prepare_chat(body: ChatIn, engine: EngineDep) -> Prepared:
    """Validates and stores the question before any byte of the stream is sent."""
    request = ChatRequest(
        message=body.message,
        conversation_id=body.conversation_id,
        options=body.retrieval(),
        use_llm=body.llm,
    )
    return await asyncio.to_thread(engine.prepare, request)


@router.post(
    "/chat",
    response_class=EventStream,
    responses={
        200: {"model": ChatEvent, "description": "The answer's events, one model each."},
        **STREAM_ERRORS,
    },
)
async def chat(
    prepared: Annotated[Prepared, Depends(prepare_chat)], engine: EngineDep
) -> EventStream:
    """Answer a question: events `start`, `plan`, `retrieval`, `stage`, `sources`, `token`,
    `verify`, then `done` or `error` (see docs/chat-api.md)."""

    async def events() -> AsyncIterator[ServerSentEvent]:
        async for event in engine.stream(prepared):
            if isinstance(event, SourcesEvent):
                event = linked_event(event)
            yield ServerSentEvent(event=event.event, data=event)

    return EventStream(events())


class ConversationBrief(BaseModel):
    id: int
    title: str
    created_at: UtcDateTime
    updated_at: UtcDateTime
    message_count: int


class ConversationList(BaseModel):
    conversations: list[ConversationBrief]


class FeedbackOut(BaseModel):
    rating: int
    comment: str | None = None


class MessageOut(BaseModel):
    id: int
    role: Literal["user", "assistant", "system"]
    content: str
    sources: list[Source] = Field(description="The numbered sources the answer may cite.")
    citations: list[int] = Field(description="The source numbers the answer cites.")
    plan: Plan | None
    timings_ms: dict[str, float] | None
    mode: AnswerMode | None
    model: str | None
    status: Literal["complete", "interrupted", "error"]
    verify: VerifyEvent | None
    notices: list[str]
    citations_checked: CitationCheck | None = Field(
        default=None, description="How the answer's citations held against their sources."
    )
    created_at: UtcDateTime
    feedback: FeedbackOut | None


class ConversationOut(BaseModel):
    id: int
    title: str
    created_at: UtcDateTime
    updated_at: UtcDateTime
    messages: list[MessageOut]


class FeedbackIn(BaseModel):
    rating: Literal[1, -1]
    comment: str | None = Field(default=None, max_length=4000)


class FeedbackCreated(BaseModel):
    id: int
    message_id: int
    rating: int
    comment: str | None
    created_at: UtcDateTime


@router.get("/conversations", response_model=ConversationList)
def list_conversations(db: DbDep) -> ConversationList:
    with db.read() as conn:
        return ConversationList.model_validate({"conversations": conversations.list_all(conn)})


@router.get("/conversations/{conversation_id}", response_model=ConversationOut, responses=ERRORS)
def get_conversation(conversation_id: IdPath, db: DbDep) -> ConversationOut:
    with db.read() as conn:
        out = ConversationOut.model_validate(conversations.get(conn, conversation_id))
    for message in out.messages:
        message.sources = [linked(s) for s in message.sources]
    return out


@router.delete("/conversations/{conversation_id}", status_code=204, responses=ERRORS)
def delete_conversation(conversation_id: IdPath, db: DbDep) -> Response:
    with db.write() as conn:
        conversations.delete(conn, conversation_id)
    return Response(status_code=204)


@router.post(
    "/messages/{message_id}/feedback",
    status_code=201,
    response_model=FeedbackCreated,
    responses=ERRORS,
)
def add_feedback(message_id: IdPath, body: FeedbackIn, db: DbDep) -> FeedbackCreated:
    """Thumbs up (1) or down (-1) on an answer, with an optional comment; the latest counts."""
    comment = body.comment.strip() if body.comment and body.comment.strip() else None
    with db.write() as conn:
        row = conversations.add_feedback(conn, message_id, body.rating, comment)
    return FeedbackCreated.model_validate(row)


class LLMBackendOut(BaseModel):
    name: str
    url: str
    model: str
    ok: bool
    error: str | None = None
    models: list[str] = Field(default_factory=list)


class LLMStatus(BaseModel):
    mode: AnswerMode
    backends: list[LLMBackendOut]


@router.get("/llm", response_model=LLMStatus)
async def llm_status(engine: EngineDep) -> LLMStatus:
    """Which LLM backends are configured and reachable; `extractive` when none answers."""
    if engine.router is None:
        return LLMStatus(mode="extractive", backends=[])
    backends = await engine.router.status()
    ok = any(b.get("ok") for b in backends)
    return LLMStatus.model_validate({"mode": "llm" if ok else "extractive", "backends": backends})
