"""The one SSE writer (api/sse.py): order, keep-alive pings while idle, errors, cancellation."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from fastapi.sse import KEEPALIVE_COMMENT, ServerSentEvent

from quire.api.sse import _wire
from quire.synthesis.events import TokenEvent

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def collect(events: AsyncIterator[ServerSentEvent], ping_s: float) -> list[bytes]:
    return [chunk async for chunk in _wire(events, ping_s)]


async def test_models_dicts_and_raw_data_in_order() -> None:
    async def events() -> AsyncIterator[ServerSentEvent]:
        yield ServerSentEvent(event="token", data=TokenEvent(text="tide"))
        yield ServerSentEvent(event="timeout", data={"id": 3})
        yield ServerSentEvent(raw_data="[DONE]")

    assert await collect(events(), 5) == [
        b'event: token\ndata: {"event":"token","text":"tide"}\n\n',
        b'event: timeout\ndata: {"id": 3}\n\n',
        b"data: [DONE]\n\n",
    ]


async def test_a_ping_goes_out_while_the_producer_is_quiet() -> None:
    async def events() -> AsyncIterator[ServerSentEvent]:
        await asyncio.sleep(0.25)
        yield ServerSentEvent(raw_data="late")

    out = await collect(events(), 0.05)
    assert out[-1] == b"data: late\n\n"
    assert 2 <= out.count(KEEPALIVE_COMMENT) == len(out) - 1


async def test_a_failing_producer_raises_through_the_stream() -> None:
    async def events() -> AsyncIterator[ServerSentEvent]:
        yield ServerSentEvent(raw_data="one")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        await collect(events(), 5)


async def test_a_client_that_leaves_cancels_the_producer() -> None:
    stopped = asyncio.Event()

    async def events() -> AsyncIterator[ServerSentEvent]:
        try:
            while True:
                yield ServerSentEvent(raw_data="tick")
                await asyncio.sleep(0.01)
        finally:
            stopped.set()  # an LLM request in flight is closed here

    wire = _wire(events(), 5)
    assert await wire.__anext__() == b"data: tick\n\n"
    await wire.aclose()
    await asyncio.wait_for(stopped.wait(), 1)
