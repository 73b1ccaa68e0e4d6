"""The chat half of the fake Ollama: ``POST /api/chat`` (Ollama's NDJSON), and Ollama's
OpenAI-compatible ``POST /v1/chat/completions`` (SSE) and ``GET /v1/models``.

What the model says comes from ``fake.responder(messages, body) -> str | Reply``::

    fake.responder = lambda messages, body: Reply(
        "The tide turns twice a day.",
        first_token_delay_s=0.2,    # before the response headers, as Ollama loads the model
        token_delay_s=0.01,         # between tokens
        error_after=3,              # then {"error": …}; 0: HTTP 500 before any token
        cut_after=3,                # then the connection is dropped mid-body
    )

Shapes follow Ollama's server (``server/routes.go`` streamResponse, ``openai/openai.go``) and
the ollama-python client: a stream error before anything was written is an HTTP error with an
``{"error": …}`` body; after that it is one more NDJSON line (or SSE ``data:`` event).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.types import Send

if TYPE_CHECKING:
    from tests.fakes.ollama import FakeOllama

# Ollama's own message for a runner that failed while generating.
RUNNER_ERROR = "an error was encountered while running the model: unexpected EOF"
# Ollama's refusal of a prompt longer than num_ctx when the request says truncate: false.
TOO_LONG = "the input length exceeds the context length"
# Ollama's num_ctx when a request sets none.
DEFAULT_NUM_CTX = 4096


@dataclass
class Reply:
    """One answer of the fake model and how it is delivered."""

    text: str = ""
    tokens: Sequence[str] | None = None  # the streamed pieces; default: words, with their spaces
    first_token_delay_s: float = 0.0
    token_delay_s: float = 0.0
    error_after: int | None = None  # an {"error": ...} after this many tokens
    error: str = RUNNER_ERROR
    cut_after: int | None = None  # drop the connection after this many tokens
    status: int = 200  # anything else: this HTTP status with ``error``, no stream
    done_reason: str = "stop"

    def pieces(self) -> list[str]:
        if self.tokens is not None:
            return list(self.tokens)
        return re.findall(r"\s*\S+|\s+$", self.text)


Responder = Callable[[list[dict[str, Any]], dict[str, Any]], "str | Reply | Awaitable[str | Reply]"]


def wants_json(body: dict[str, Any]) -> bool:
    """Whether the request asked for JSON output (Ollama ``format``, OpenAI ``response_format``)."""
    response_format = body.get("response_format")
    return body.get("format") == "json" or (
        isinstance(response_format, dict)
        and response_format.get("type") in ("json_object", "json_schema")
    )


def echo(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """The default responder: the last user message's first 40 words, deterministic."""
    last = next((m.get("content") for m in reversed(messages) if m.get("role") == "user"), "")
    words = " ".join(str(last).split()[:40])
    return json.dumps({"echo": words}) if wants_json(body) else f"You said: {words}"


class CutConnection(Exception):
    """Raised in a response body to make uvicorn drop the connection (``Reply.cut_after``)."""


def _now_iso() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _prompt_tokens(messages: list[dict[str, Any]]) -> int:
    return sum(len(str(m.get("content", "")).split()) + 4 for m in messages)


def ollama_error(status: int, message: str) -> JSONResponse:
    """Ollama's error shape: ``{"error": "..."}``."""
    return JSONResponse({"error": message}, status_code=status)


def openai_error(status: int, message: str) -> JSONResponse:
    """The error shape of Ollama's OpenAI-compatible routes (``openai.NewError``)."""
    kind = {400: "invalid_request_error", 404: "not_found_error"}.get(status, "api_error")
    body = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return JSONResponse(body, status_code=status)


def _not_found(name: str) -> str:
    return f'model "{name}" not found, try pulling it first'


@dataclass
class _Call:
    """One validated chat request."""

    model: str
    messages: list[dict[str, Any]]
    body: dict[str, Any]
    reply: Reply
    started: float
    prompt_tokens: int  # as evaluated: num_ctx when the prompt was cut to it


class _Frames:
    """How one protocol writes a token, an error, the end of a stream and a whole reply."""

    media_type = ""
    error_response: Callable[[int, str], Response]

    def __init__(self, call: _Call) -> None:
        self.call = call

    def streamed(self) -> bool:
        raise NotImplementedError

    def whole(self, text: str) -> dict[str, Any]:
        raise NotImplementedError

    def token(self, text: str) -> str:
        raise NotImplementedError

    def error(self, message: str) -> str:
        raise NotImplementedError

    def end(self, count: int) -> list[str]:
        raise NotImplementedError


class _OllamaFrames(_Frames):
    media_type = "application/x-ndjson"
    error_response = staticmethod(ollama_error)

    def streamed(self) -> bool:
        return self.call.body.get("stream", True) is not False  # Ollama streams by default

    def whole(self, text: str) -> dict[str, Any]:
        return self.final(len(self.call.reply.pieces()), text)

    def _line(self, obj: dict[str, Any]) -> str:
        return json.dumps(obj, separators=(",", ":")) + "\n"

    def token(self, text: str) -> str:
        return self._line(
            {
                "model": self.call.model,
                "created_at": _now_iso(),
                "message": {"role": "assistant", "content": text},
                "done": False,
            }
        )

    def error(self, message: str) -> str:
        return self._line({"error": message})

    def final(self, count: int, content: str) -> dict[str, Any]:
        took = time.perf_counter_ns() - int(self.call.started * 1e9)
        prompt = self.call.prompt_tokens
        return {
            "model": self.call.model,
            "created_at": _now_iso(),
            "message": {"role": "assistant", "content": content},
            "done_reason": self.call.reply.done_reason,
            "done": True,
            "total_duration": took + 2_000_000,
            "load_duration": 1_000_000,
            "prompt_eval_count": prompt,
            "prompt_eval_duration": 500_000,
            "eval_count": count,
            "eval_duration": max(took, 1),
        }

    def end(self, count: int) -> list[str]:
        return [self._line(self.final(count, ""))]


class _OpenAIFrames(_Frames):
    media_type = "text/event-stream"
    error_response = staticmethod(openai_error)

    def streamed(self) -> bool:
        return self.call.body.get("stream") is True

    def whole(self, text: str) -> dict[str, Any]:
        choice = {
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "finish_reason": self.call.reply.done_reason,
        }
        usage = self.usage(len(self.call.reply.pieces()))
        return {**self.chunk([choice], usage=usage), "object": "chat.completion"}

    def __init__(self, call: _Call) -> None:
        super().__init__(call)
        self.id = f"chatcmpl-{uuid.uuid4().int % 1000}"
        self.created = int(time.time())

    def _event(self, obj: dict[str, Any] | str) -> str:
        data = obj if isinstance(obj, str) else json.dumps(obj, separators=(",", ":"))
        return f"data: {data}\n\n"

    def chunk(self, choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.call.model,
            "system_fingerprint": "fp_ollama",
            "choices": choices,
            **extra,
        }

    def usage(self, count: int) -> dict[str, int]:
        prompt = self.call.prompt_tokens
        return {"prompt_tokens": prompt, "completion_tokens": count, "total_tokens": prompt + count}

    def token(self, text: str) -> str:
        delta = {"role": "assistant", "content": text}
        return self._event(self.chunk([{"index": 0, "delta": delta, "finish_reason": None}]))

    def error(self, message: str) -> str:
        return self._event({"error": {"message": message, "type": "api_error", "param": None}})

    def end(self, count: int) -> list[str]:
        delta = {"role": "assistant", "content": ""}
        finish = {"index": 0, "delta": delta, "finish_reason": self.call.reply.done_reason}
        frames = [self._event(self.chunk([finish]))]
        options = self.call.body.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage"):
            frames.append(self._event(self.chunk([], usage=self.usage(count))))
        return [*frames, self._event("[DONE]")]


class _ClosingStreamingResponse(StreamingResponse):
    """Closes its generator when the client goes, so the generator's ``finally`` runs now."""

    def __init__(self, body: AsyncGenerator[str, None], media_type: str) -> None:
        super().__init__(body, media_type=media_type)
        self._body = body

    async def stream_response(self, send: Send) -> None:
        async with contextlib.aclosing(self._body):
            await super().stream_response(send)


async def _wait(request: Request, seconds: float) -> bool:
    """Sleep ``seconds``; False as soon as the client is gone."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        if await request.is_disconnected():
            return False
        await asyncio.sleep(min(left, 0.02))
    return True


async def _body(request: Request) -> dict[str, Any] | str:
    """The JSON object of the request, or what is wrong with it."""
    try:
        body = json.loads(await request.body())
    except ValueError:
        return "invalid character in request body"
    if not isinstance(body, dict):
        return "invalid request body"
    messages = body.get("messages")
    if not isinstance(messages, list) or not all(
        isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages
    ):
        return "messages must be a list of objects with a role"
    return body


def add_chat_routes(app: FastAPI, fake: FakeOllama) -> None:
    """Add the chat routes of ``fake`` to ``app``."""

    async def accept(request: Request, error: Callable[[int, str], Response]) -> _Call | Response:
        started = time.perf_counter()
        body = await _body(request)
        if isinstance(body, str):
            return error(400, body)
        name = body.get("model")
        if not isinstance(name, str) or not name:
            return error(400, "model is required")
        if fake.find_model(name) is None:
            return error(404, _not_found(name))
        options = body.get("options") if isinstance(body.get("options"), dict) else {}
        num_ctx = options.get("num_ctx") or DEFAULT_NUM_CTX
        prompt = _prompt_tokens(body["messages"])
        if prompt > num_ctx:
            if body.get("truncate") is False:
                return error(400, TOO_LONG)
            fake.count_truncated()  # Ollama keeps the end of the prompt and says nothing
            prompt = num_ctx
        reply = await fake.reply(body["messages"], body)
        if reply.status != 200:
            return error(reply.status, reply.error)
        if reply.error_after == 0:  # nothing written yet: Ollama answers with a status
            return error(500, reply.error)
        return _Call(name, body["messages"], body, reply, started, prompt)

    async def respond(request: Request, frames: _Frames) -> Response:
        if not await _wait(request, frames.call.reply.first_token_delay_s):
            fake.count_stream("cancelled")
            return Response(status_code=499)
        return _ClosingStreamingResponse(_stream(fake, frames), media_type=frames.media_type)

    async def serve(request: Request, protocol: type[_Frames]) -> Response:
        call = await accept(request, protocol.error_response)
        if isinstance(call, Response):
            return call
        frames = protocol(call)
        if frames.streamed():
            return await respond(request, frames)
        text = await _whole(request, call, protocol.error_response)
        return text if isinstance(text, Response) else JSONResponse(frames.whole(text))

    @app.post("/api/chat")
    async def chat(request: Request) -> Response:
        return await serve(request, _OllamaFrames)

    @app.post("/v1/chat/completions")
    async def completions(request: Request) -> Response:
        return await serve(request, _OpenAIFrames)

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        created = int(time.time())
        return {
            "object": "list",
            "data": [
                {
                    "id": m.name,
                    "object": "model",
                    "created": created,
                    "owned_by": "library",
                    **fake.v1_model_fields,
                }
                for m in fake.models
            ],
        }


async def _whole(
    request: Request, call: _Call, error: Callable[[int, str], Response]
) -> str | Response:
    """A non-streamed reply: the delays spent up front; an error or cut fails the request."""
    reply = call.reply
    pieces = reply.pieces()
    delay = reply.first_token_delay_s + reply.token_delay_s * max(len(pieces) - 1, 0)
    if not await _wait(request, delay):
        return Response(status_code=499)
    if reply.cut_after is not None:
        raise CutConnection("Reply.cut_after")
    if reply.error_after is not None:
        return error(500, reply.error)
    return "".join(pieces)


async def _stream(fake: FakeOllama, frames: _Frames) -> AsyncGenerator[str, None]:
    """The body of a streamed reply; counts how the stream ended (``fake.stream_outcomes``)."""
    reply = frames.call.reply
    pieces = reply.pieces()
    outcome = "cancelled"  # unless the loop below gets to say otherwise
    fake.begin_stream()
    try:
        for i, text in enumerate(_with_end(pieces)):
            if reply.error_after == i:
                outcome = "error"
                yield frames.error(reply.error)
                return
            if reply.cut_after == i:
                outcome = "cut"
                raise CutConnection(f"Reply.cut_after={i}")
            if text is None:
                break
            if i and reply.token_delay_s:
                await asyncio.sleep(reply.token_delay_s)
            yield frames.token(text)
        for frame in frames.end(len(pieces)):
            yield frame
        outcome = "completed"
    finally:
        fake.count_stream(outcome, begun=True)


def _with_end(pieces: list[str]) -> Iterator[str | None]:
    """The pieces, then None: so an error or cut "after the last token" has a place."""
    yield from pieces
    yield None
