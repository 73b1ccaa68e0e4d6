"""Access control: who is asking (a bearer token on every route but health once there is a
token or people), CORS only when asked for, and the rule that nothing listens beyond the
loopback without a token.

The check is a pure ASGI middleware in front of the whole app, so it covers every route (added
later or not, streamed or not, in the OpenAPI schema or not) and unknown paths alike: it
allows ``OPEN_PATHS`` and denies everything else by default. It runs before the body is read,
so an unauthenticated upload is refused without being received. It binds the request to its
reader (storage/access.py), which every query of the request then filters by.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import ipaddress
import json
import logging
import time
from typing import Any

import anyio
from fastapi import FastAPI
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from quire.api.errors import DATABASE_UNREACHABLE, send_error
from quire.config import Settings
from quire.storage import access, people
from quire.storage.db import unreachable

log = logging.getLogger(__name__)

# Exact paths only: "/api/health/../documents" or "/api//health" are not these.
OPEN_PATHS = frozenset({"/api/health"})
_TOKEN_HINT = "send the header Authorization: Bearer <QUIRE_API_TOKEN>"


class BindRefused(Exception):
    """Listening on this address needs an API token."""


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and ``localhost``; any other name may resolve anywhere."""
    host = host.strip().strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(host: str, settings: Settings, *, people: bool = False) -> None:
    """Raise BindRefused unless ``host`` is a loopback address, a token is configured or the
    library has ``people`` (each then needs their own token)."""
    if is_loopback(host) or settings.api_token is not None or settings.allow_open_bind or people:
        return
    raise BindRefused(
        f"refusing to listen on {host} without an API token: anyone who can reach it could "
        "read and change the library. Set QUIRE_API_TOKEN (e.g. `python -c 'import secrets; "
        "print(secrets.token_urlsafe(32))'`) and give it to the web app, or listen on "
        "127.0.0.1 (QUIRE_HOST), or add people with their own tokens (quire users add). "
        "QUIRE_ALLOW_OPEN_BIND=true skips this check, for a private network such as docker "
        "compose's."
    )


def _digest(value: bytes) -> bytes:
    # Equal-length inputs for compare_digest, so not even the token's length leaks.
    return hashlib.sha256(value).digest()


#: How often a stream re-checks that its person's token still stands (revoked mid-answer).
RECHECK_S = 1.0
_REVOKED_EVENT = (
    b"event: error\ndata: "
    + json.dumps(
        {
            "error": {
                "status": 401,
                "code": "unauthorized",
                "message": "the API token was revoked while this streamed; nothing more is sent",
                "detail": None,
            },
            "retryable": False,
            "message_id": None,
        }
    ).encode()
    + b"\n\n"
)


class AccessControl:
    """Pure ASGI middleware: who is asking (storage/access.py), or 401 in the one error shape.

    - No people and no ``QUIRE_API_TOKEN``: everyone reads everything (the loopback default).
    - ``QUIRE_API_TOKEN``: required; it reads everything, or, once there are people, the
      team's documents (a service token).
    - People (``quire users add``): each request needs a live personal token, and reads as
      its person. A text/event-stream response re-checks the token every ``RECHECK_S`` while
      it streams: revoked, the stream gets an ``error`` event and ends, and the app sees the
      client leave (so an answer stops and is kept as interrupted).
    """

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        token = settings.api_token
        self._service = _digest(token.get_secret_value().encode()) if token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        values = [v for k, v in scope.get("headers") or [] if k == b"authorization"]
        given: bytes | None = None
        if len(values) == 1:
            scheme, _, rest = values[0].partition(b" ")
            if scheme.lower() == b"bearer" and rest.strip():
                given = rest.strip()
        runtime = scope.get("state", {}).get("runtime")
        try:
            reader = await anyio.to_thread.run_sync(self._reader, runtime, given)
        except Exception as exc:  # noqa: BLE001 - the one error shape, never a bare 500
            if not unreachable(exc):
                raise
            log.warning("database unreachable: %s", type(exc).__name__)
            await send_error(send, 503, "unavailable", DATABASE_UNREACHABLE)
            return
        if reader is None:
            await self._refuse(scope, send, sent=bool(values))
            return
        scope[access.SCOPE_KEY] = reader
        if reader.token_id is not None and scope["type"] == "http":
            receive, send = _Recheck(runtime, reader.token_id).wrap(receive, send)
        with access.reading_as(reader):
            await self.app(scope, receive, send)

    def _reader(self, runtime: Any, given: bytes | None) -> access.Reader | None:
        service = (
            given is not None
            and self._service is not None
            and hmac.compare_digest(_digest(given), self._service)
        )
        if runtime is None:  # before start-up finished: only what the token alone decides
            return access.EVERYONE if service or (self._service is None) else None
        with runtime.db.read() as conn:
            if not people.exist(conn):
                if service or self._service is None:
                    return access.EVERYONE
                return None
            if service:
                return access.SERVICE
            if given is None:
                return None
            return people.reader_for(conn, given.decode("latin-1"))

    async def _refuse(self, scope: Scope, send: Send, *, sent: bool) -> None:
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        if sent:
            message, challenge = (
                f"the API token is not valid; {_TOKEN_HINT}",
                b'Bearer realm="quire", error="invalid_token"',
            )
        else:
            message, challenge = f"an API token is required; {_TOKEN_HINT}", b'Bearer realm="quire"'
        await send_error(send, 401, "unauthorized", message, [(b"www-authenticate", challenge)])


class _Recheck:
    """Ends an event stream whose token is revoked while it streams (``AccessControl``)."""

    def __init__(self, runtime: Any, token_id: int) -> None:
        self.runtime = runtime
        self.token_id = token_id
        self.streaming = False
        self.checked = time.monotonic()
        self.revoked = asyncio.Event()

    def _live(self) -> bool:
        with self.runtime.db.read() as conn:
            return people.token_live(conn, self.token_id)

    def wrap(self, receive: Receive, send: Send) -> tuple[Receive, Send]:
        async def send_(message: Message) -> None:
            if self.revoked.is_set():
                return  # the stream was ended: the rest goes nowhere
            if message["type"] == "http.response.start":
                ctype = dict(message.get("headers") or []).get(b"content-type", b"")
                self.streaming = ctype.startswith(b"text/event-stream")
            elif (
                self.streaming
                and message["type"] == "http.response.body"
                and time.monotonic() - self.checked >= RECHECK_S
            ):
                self.checked = time.monotonic()
                try:
                    live = await anyio.to_thread.run_sync(self._live)
                except Exception:  # noqa: BLE001 - a database hiccup is not a revocation
                    log.warning("could not re-check a streaming token", exc_info=True)
                    live = True
                if not live:
                    log.info("token %d revoked mid-stream: ending the stream", self.token_id)
                    await send(message)
                    await send(
                        {"type": "http.response.body", "body": _REVOKED_EVENT, "more_body": False}
                    )
                    self.revoked.set()
                    return
            await send(message)

        async def receive_() -> Message:
            if self.revoked.is_set():
                return {"type": "http.disconnect"}
            got = asyncio.ensure_future(receive())
            stop = asyncio.ensure_future(self.revoked.wait())
            try:
                await asyncio.wait({got, stop}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                # Cancelled while waiting (the response ended), or one of them done: neither
                # may be left pending.
                for waiter in (got, stop):
                    if not waiter.done():
                        waiter.cancel()
            if got.done() and not got.cancelled():
                return got.result()
            return {"type": "http.disconnect"}

        return receive_, send_


def install_access_control(app: FastAPI, settings: Settings) -> None:
    """The token check (when a token is set), then CORS around it (when origins are set).

    CORS is outermost so that a browser's preflight, which never carries credentials, is
    answered, and so that a 401 carries the CORS headers the browser needs to read it.
    """
    # Always there: people may be added (quire users add) while the API runs.
    app.add_middleware(AccessControl, settings=settings)
    if settings.api_token is not None:
        log.info("API token required on every route but %s", ", ".join(sorted(OPEN_PATHS)))
    origins = settings.cors_origin_list
    if origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=origins,
            allow_methods=["GET", "POST", "DELETE"],
            # MCP's Streamable HTTP (/mcp) keeps its session in these headers.
            allow_headers=[
                "Authorization",
                "Content-Type",
                "Mcp-Session-Id",
                "MCP-Protocol-Version",
            ],
            expose_headers=["Mcp-Session-Id"],
            max_age=600,
        )
