"""The one Server-Sent Events writer: chat answers, job progress and ``/v1`` streaming.

    return EventStream(ServerSentEvent(event=e.event, data=e) async for e in events)

Each item is FastAPI's ``ServerSentEvent`` (``data`` is sent as JSON, ``raw_data`` as is), and
the wire format is FastAPI's ``format_sse_event``. While nothing else is sent, a ``: ping``
comment goes out every ``PING_S`` seconds, so that proxies keep the connection open. The
events are produced by a task of their own, so a ping never interrupts the producer; when the
client leaves, the producer is cancelled (which closes an LLM request in flight).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterable, Callable
from typing import Any

from fastapi.sse import KEEPALIVE_COMMENT, ServerSentEvent, format_sse_event
from pydantic import BaseModel
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

PING_S = 15.0
_END = object()


def encode(item: ServerSentEvent) -> bytes:
    """One event in the wire format."""
    if item.raw_data is not None:
        data: str | None = item.raw_data
    elif isinstance(item.data, BaseModel):
        data = item.data.model_dump_json()
    elif item.data is not None:
        data = json.dumps(item.data, ensure_ascii=False)
    else:
        data = None
    return format_sse_event(data_str=data, event=item.event, id=item.id, comment=item.comment)


async def _produce(events: AsyncIterable[ServerSentEvent], queue: asyncio.Queue[object]) -> None:
    # The queue is unbounded, so that this task only ever waits inside ``events``: cancelled
    # there, the cancellation runs through the whole chain of generators (an LLM request in
    # flight is closed on the spot). Waiting on a full queue instead, the chain would be left
    # suspended at a ``yield``, its HTTP request open until garbage collection.
    async for item in events:
        queue.put_nowait(encode(item))
    queue.put_nowait(_END)


async def _wire(
    events: AsyncIterable[ServerSentEvent],
    ping_s: float,
    started: Callable[[asyncio.Task[None]], None] | None = None,
) -> AsyncGenerator[bytes, None]:
    """The encoded events, and pings while there are none; ``started`` is handed the task
    that produces them (cancelling it ends the stream, cleanly)."""
    queue: asyncio.Queue[object] = asyncio.Queue()
    producer = asyncio.create_task(_produce(events, queue))
    if started is not None:
        started(producer)
    getter: asyncio.Future[object] | None = None
    try:
        while True:
            if producer.done() and queue.empty():
                if not producer.cancelled():
                    producer.result()  # it ended without its end marker: raise its error
                return
            getter = asyncio.ensure_future(queue.get())
            waiting = {getter} if producer.done() else {getter, producer}
            done, _ = await asyncio.wait(
                waiting, timeout=ping_s, return_when=asyncio.FIRST_COMPLETED
            )
            if getter not in done:
                getter.cancel()
                if not done:
                    yield KEEPALIVE_COMMENT
                continue
            item = getter.result()
            if item is _END:
                return
            assert isinstance(item, bytes)
            yield item
    finally:
        if getter is not None:
            getter.cancel()
        producer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await producer


class EventStream(StreamingResponse):
    """A ``text/event-stream`` response of ``ServerSentEvent`` items, with keep-alive pings.

    It watches for the client leaving while it streams (whatever the server's ASGI version;
    starlette only does for older ones) and then cancels the task producing the events, so
    that an answer in progress stops, and its LLM request is closed, as soon as the browser
    goes. Plain asyncio tasks, not an anyio task group: a task started inside an anyio cancel
    scope is cancelled again at every await, which defeats httpx's shielded close of the LLM
    response (the connection stayed open until the model had finished).
    """

    media_type = "text/event-stream"

    def __init__(
        self,
        events: AsyncIterable[ServerSentEvent],
        status_code: int = 200,  # read by FastAPI to document the route
        *,
        ping_s: float | None = None,
    ) -> None:
        self._producer: asyncio.Task[None] | None = None
        self._wire = _wire(events, PING_S if ping_s is None else ping_s, self._started)
        super().__init__(
            self._wire,
            status_code=status_code,
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    def _started(self, producer: asyncio.Task[None]) -> None:
        self._producer = producer

    async def _watch(self, receive: Receive) -> None:
        await self.listen_for_disconnect(receive)
        if self._producer is not None:
            self._producer.cancel()  # the client left: stop the answer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        watcher = asyncio.create_task(self._watch(receive))
        try:
            with contextlib.suppress(OSError):  # the client went away mid-send
                await self.stream_response(send)
        finally:
            watcher.cancel()
            await self._wire.aclose()


def document_streams(openapi: dict[str, Any]) -> dict[str, Any]:
    """Describe each ``text/event-stream`` response as OpenAPI 3.2 does (as FastAPI's own SSE
    routes do): an ``itemSchema`` per event, whose ``data`` is JSON of the route's declared
    model. FastAPI would list the model as the whole body's schema instead."""
    for operation in (op for path in openapi.get("paths", {}).values() for op in path.values()):
        for response in operation.get("responses", {}).values():
            stream = response.get("content", {}).get("text/event-stream", {})
            ref = stream.pop("schema", {}).get("$ref")
            if ref:
                stream["itemSchema"] = {
                    "type": "object",
                    "properties": {
                        "data": {
                            "type": "string",
                            "contentMediaType": "application/json",
                            "contentSchema": {"$ref": ref},
                        },
                        "event": {"type": "string"},
                        "id": {"type": "string"},
                        "retry": {"type": "integer", "minimum": 0},
                    },
                    "required": ["data"],
                }
    return openapi
