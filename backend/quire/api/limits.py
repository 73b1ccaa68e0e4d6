"""The API's limits: a list's page size (``MAX_PAGE_SIZE``), and oversized request bodies
rejected early, by Content-Length before reading, else while streaming."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from quire.api.errors import send_error
from quire.errors import FileTooLarge

#: The most items one request of a paged list returns (``limit``); the next page is asked for
#: with ``offset`` (the response's ``next_offset``).
MAX_PAGE_SIZE = 1000


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


def _too_large(length: int | None, limit_mb: float) -> str:
    size = f" of {length / 1024 / 1024:.1f} MB" if length is not None else ""
    return f"request body{size} is over the {limit_mb:.0f} MB limit (QUIRE_MAX_UPLOAD_MB)"


async def _send_413(send: Send, message: str) -> None:
    await send_error(send, 413, "too_large", message, [(b"connection", b"close")])
