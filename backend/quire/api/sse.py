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
from collections.abc import AsyncIterable, AsyncIterator

from fastapi.sse import KEEPALIVE_COMMENT, ServerSentEvent, format_sse_event
from pydantic import BaseModel
from starlette.responses import StreamingResponse

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
    async for item in events:
        await queue.put(encode(item))
    await queue.put(_END)


async def _wire(events: AsyncIterable[ServerSentEvent], ping_s: float) -> AsyncIterator[bytes]:
    queue: asyncio.Queue[object] = asyncio.Queue(maxsize=1)
    producer = asyncio.create_task(_produce(events, queue))
    try:
        while True:
            getter = asyncio.ensure_future(queue.get())
            waiting = {getter} if producer.done() else {getter, producer}
            done, _ = await asyncio.wait(
                waiting, timeout=ping_s, return_when=asyncio.FIRST_COMPLETED
            )
            if getter not in done:
                getter.cancel()
                if producer in done and queue.empty():
                    producer.result()  # it failed before its end marker: raise its error
                    return
                if not done:
                    yield KEEPALIVE_COMMENT
                continue
            item = getter.result()
            if item is _END:
                return
            assert isinstance(item, bytes)
            yield item
    finally:
        producer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await producer


class EventStream(StreamingResponse):
    """A ``text/event-stream`` response of ``ServerSentEvent`` items, with keep-alive pings."""

    media_type = "text/event-stream"

    def __init__(
        self,
        events: AsyncIterable[ServerSentEvent],
        status_code: int = 200,  # read by FastAPI to document the route
        *,
        ping_s: float | None = None,
    ) -> None:
        super().__init__(
            _wire(events, PING_S if ping_s is None else ping_s),
            status_code=status_code,
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
