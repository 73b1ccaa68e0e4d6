"""``ask`` over MCP: the chat engine's answer to one question, its stages reported as MCP
progress notifications, and stopped (the LLM request closed) when the client cancels.

    answer = await answers.ask(runtime, request, links, report)   # report(progress, message)
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from quire.errors import ErrorBody
from quire.mcp import library, schemas
from quire.mcp.citations import Links
from quire.runtime import Runtime
from quire.synthesis.answer import ChatRequest
from quire.synthesis.events import (
    DoneEvent,
    ErrorEvent,
    Event,
    PlanEvent,
    RetrievalEvent,
    Source,
    SourcesEvent,
    StageEvent,
    StartEvent,
    TokenEvent,
    VerifyEvent,
)

#: ``report(progress, message)``: progress in [0, 1], rising with every call.
Report = Callable[[float, str], Awaitable[None]]

# Where each stage puts the progress bar (an LLM answer passes them all; extractive skips some).
_AT = {"start": 0.05, "plan": 0.1, "retrieval": 0.2, "map": 0.2, "filter": 0.6, "sources": 0.65}
_AT |= {"answer": 0.7, "verify": 0.9, "verdict": 0.92, "retrieval_2": 0.94, "sources_2": 0.96}
_MAP_SPAN = 0.35


class AnswerFailed(Exception):
    """The engine ended the answer with an error event."""

    def __init__(self, body: ErrorBody) -> None:
        super().__init__(body.message)
        self.body = body


@dataclass
class _Progress:
    report: Report
    last: float = 0.0

    async def at(self, value: float, message: str) -> None:
        # The protocol wants every notification to rise; a second round must not go back.
        self.last = min(max(value, self.last + 0.001), 1.0)
        await self.report(round(self.last, 3), message)


async def ask(rt: Runtime, request: ChatRequest, links: Links, report: Report) -> schemas.Answer:
    """Answer ``request``; InputError / NotFound before anything runs, AnswerFailed when the
    answer fails on the way. Cancelling the caller closes the engine's stream (and its LLM
    request) at once."""
    rt.sync_llm()  # a model picked in Settings since the last question answers this one
    prepared = await asyncio.to_thread(rt.engine.prepare, request)
    progress = _Progress(report)
    done: DoneEvent | None = None
    sources: list[Source] = []
    previous: Event | None = None
    # An async generator (typed as an iterator): closed on any exit, cancellation included.
    stream = rt.engine.stream(prepared)
    async with contextlib.aclosing(stream) as events:
        async for event in events:
            match event:
                case StartEvent(model=model, extractive_reason=reason):
                    why = f"answering extractively: {reason}" if reason else "extractive"
                    await progress.at(_AT["start"], f"answering with {model}" if model else why)
                case PlanEvent(strategy=strategy, queries=queries):
                    more = f" with {len(queries)} query variations" if len(queries) > 1 else ""
                    await progress.at(_AT["plan"], f"planned a {strategy} search{more}")
                case RetrievalEvent(round=1, candidates=n):
                    await progress.at(_AT["retrieval"], f"found {n} passages")
                case RetrievalEvent(candidates=n):
                    await progress.at(_AT["retrieval_2"], f"searched again: {n} new passages")
                case StageEvent(stage="map", done=k, total=total):
                    value = _AT["map"] + _MAP_SPAN * k / max(total, 1)
                    await progress.at(value, f"reading the passages: batch {k} of {total}")
                case StageEvent(stage="filter"):
                    await progress.at(_AT["filter"], "kept the relevant facts")
                case StageEvent(stage="answer"):
                    await progress.at(_AT["answer"], "writing the answer")
                case StageEvent(stage="verify"):
                    await progress.at(_AT["verify"], "checking the answer against the question")
                case SourcesEvent(sources=listed):
                    key = "sources" if not sources else "sources_2"
                    sources = listed
                    await progress.at(_AT[key], f"{len(listed)} sources")
                case TokenEvent() if not isinstance(previous, TokenEvent | StageEvent):
                    await progress.at(_AT["answer"], "writing the answer")
                case VerifyEvent(status=status):
                    await progress.at(_AT["verdict"], f"checked: {status}")
                case DoneEvent():
                    done = event
                    await progress.at(1.0, "done")
                case ErrorEvent(error=body):
                    raise AnswerFailed(body)
            previous = event
    if done is None:  # the engine always ends with done or error; never leave the caller empty
        raise AnswerFailed(
            ErrorBody(status=500, code="internal_error", message="the answer ended early")
        )
    stored = await asyncio.to_thread(
        library.stored_paths, rt, {s.document_id for s in sources}, links
    )
    return schemas.Answer(
        question=prepared.question,
        answer=done.answer,
        mode=done.mode,
        model=done.model,
        extractive_reason=_why_extractive(done),
        citations=done.citations,
        sources=[_source(s, links, stored.get(s.document_id)) for s in sources],
        notices=done.notices,
    )


def _why_extractive(done: DoneEvent) -> str | None:
    if done.mode != "extractive":
        return None
    return done.extractive_reason or "no passage matched the question, so no model was asked"


def _source(s: Source, links: Links, stored_path: str | None) -> schemas.Source:
    return schemas.Source(
        **library.place_of(s, links, stored_path, s.origin_url),
        n=s.n,
        quote=s.quote,
        passage=s.passage,
        web_sources=s.web_sources,
    )
