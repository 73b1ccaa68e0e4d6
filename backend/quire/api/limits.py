"""The API's limits: a list's page size (``MAX_PAGE_SIZE``), and oversized request bodies
rejected early, by Content-Length before reading, else while streaming."""

from __future__ import annotations

import asyncio

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from quire.api.errors import send_error
from quire.errors import FileTooLarge

#: The most items one request of a paged list returns (``limit``); the next page is asked for
#: with ``offset`` (the response's ``next_offset``).
MAX_PAGE_SIZE = 1000

#: After a 413, what the client still sends is read and dropped for up to this long (and
#: ``DRAIN_BYTES``), and until it pauses for ``DRAIN_IDLE`` seconds: a connection closed with
#: unread bytes ends in a reset, which can reach the client, or nginx, before the 413 does
#: (nginx then answers 502).
DRAIN_SECONDS = 2.0
DRAIN_IDLE = 0.5
DRAIN_BYTES = 64 << 20


class BodySizeLimit:
    """Pure ASGI middleware: 413 in the one error shape when a body exceeds ``max_bytes``."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers") or []).get(b"content-length")
        limit_mb = self.max_bytes / 1024 / 1024
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            await _send_413(send, _too_large(int(length), limit_mb))
            await _drain_and_close(receive, send)
            return
        seen = 0
        exceeded = False
        replaced = False

        async def counted() -> Message:
            nonlocal seen, exceeded
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    exceeded = True
                    raise FileTooLarge(_too_large(None, limit_mb))
            return message

        async def guarded(message: Message) -> None:
            # Whatever the app makes of the aborted body (FastAPI turns it into a 400), the
            # client gets the 413.
            nonlocal replaced
            if not exceeded:
                await send(message)
            elif not replaced and message["type"] == "http.response.start":
                replaced = True
                await _send_413(send, _too_large(None, limit_mb))

        await self.app(scope, counted, guarded)
        if replaced:
            await _drain_and_close(receive, send)


def _too_large(length: int | None, limit_mb: float) -> str:
    size = f" of {length / 1024 / 1024:.1f} MB" if length is not None else ""
    return f"request body{size} is over the {limit_mb:.0f} MB limit (QUIRE_MAX_UPLOAD_MB)"


async def _send_413(send: Send, message: str) -> None:
    """The whole 413 with the response left open, for ``_drain_and_close`` to end."""
    await send_error(send, 413, "too_large", message, [(b"connection", b"close")], more=True)


async def _drain_and_close(receive: Receive, send: Send) -> None:
    """Read and drop the rest of a refused body (bounded, see ``DRAIN_SECONDS``), then end the
    response, which closes the connection."""
    loop = asyncio.get_running_loop()
    end = loop.time() + DRAIN_SECONDS
    dropped = 0
    while dropped < DRAIN_BYTES and (left := end - loop.time()) > 0:
        try:
            message = await asyncio.wait_for(receive(), min(left, DRAIN_IDLE))
        except TimeoutError:
            break
        if message["type"] != "http.request" or not message.get("more_body", False):
            break
        dropped += len(message.get("body", b""))
    await send({"type": "http.response.body", "body": b""})
