"""Access control: a bearer token on every route but health, CORS only when asked for, and the
rule that nothing listens beyond the loopback without a token.

The token check is a pure ASGI middleware in front of the whole app, so it covers every route
(added later or not, streamed or not, in the OpenAPI schema or not) and unknown paths alike: it
allows ``OPEN_PATHS`` and denies everything else by default. It runs before the body is read,
so an unauthenticated upload is refused without being received.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging

from fastapi import FastAPI
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from quire.api.errors import send_error
from quire.config import Settings

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


def check_bind(host: str, settings: Settings) -> None:
    """Raise BindRefused unless ``host`` is a loopback address or a token is configured."""
    if is_loopback(host) or settings.api_token is not None or settings.allow_open_bind:
        return
    raise BindRefused(
        f"refusing to listen on {host} without an API token: anyone who can reach it could "
        "read and change the library. Set QUIRE_API_TOKEN (e.g. `python -c 'import secrets; "
        "print(secrets.token_urlsafe(32))'`) and give it to the web app, or listen on "
        "127.0.0.1 (QUIRE_HOST). QUIRE_ALLOW_OPEN_BIND=true skips this check, for a private "
        "network such as docker compose's."
    )


def _digest(value: bytes) -> bytes:
    # Equal-length inputs for compare_digest, so not even the token's length leaks.
    return hashlib.sha256(value).digest()


class BearerAuth:
    """Pure ASGI middleware: 401 in the one error shape unless the bearer token matches."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = _digest(token.encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        values = [v for k, v in scope.get("headers") or [] if k == b"authorization"]
        if len(values) == 1:
            scheme, _, given = values[0].partition(b" ")
            if scheme.lower() == b"bearer" and hmac.compare_digest(
                _digest(given.strip()), self._expected
            ):
                await self.app(scope, receive, send)
                return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        if values:
            message, challenge = (
                f"the API token is not valid; {_TOKEN_HINT}",
                b'Bearer realm="quire", error="invalid_token"',
            )
        else:
            message, challenge = f"an API token is required; {_TOKEN_HINT}", b'Bearer realm="quire"'
        await send_error(send, 401, "unauthorized", message, [(b"www-authenticate", challenge)])


def install_access_control(app: FastAPI, settings: Settings) -> None:
    """The token check (when a token is set), then CORS around it (when origins are set).

    CORS is outermost so that a browser's preflight, which never carries credentials, is
    answered, and so that a 401 carries the CORS headers the browser needs to read it.
    """
    if settings.api_token is not None:
        app.add_middleware(BearerAuth, token=settings.api_token.get_secret_value())
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
