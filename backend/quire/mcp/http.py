"""The MCP server over Streamable HTTP, inside the API at ``/mcp``: the API's lifespan runs the
session manager (``serve``), and the route hands each request to it (``route``).

    async with http.serve(runtime) as manager:          # in the lifespan
        yield {"runtime": runtime, http.STATE_KEY: manager}
    app.router.routes.append(http.route(settings))

The API's access control sits in front (the bearer token on every path, /mcp included). The
SDK's Host check is off, since Quire is reached under names it cannot know (behind nginx, in
docker); what it guards against, a web page driving a local server, is refused here instead: a
request from a browser (it carries ``Origin``) is served only for QUIRE_CORS_ORIGINS.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from quire.config import Settings
from quire.errors import ErrorBody
from quire.mcp.server import build_server
from quire.runtime import Runtime

log = logging.getLogger(__name__)

PATH = "/mcp"
STATE_KEY = "mcp"


@contextlib.asynccontextmanager
async def serve(runtime: Runtime) -> AsyncIterator[StreamableHTTPSessionManager]:
    """Run a new MCP server's session manager (stateful sessions, SSE responses) until exit."""
    server = build_server(runtime)
    server.streamable_http_app(
        streamable_http_path=PATH,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    manager = server.session_manager
    async with manager.run():
        yield manager


class McpEndpoint:
    """The ASGI app of ``/mcp``: the lifespan's session manager, after the Origin check."""

    def __init__(self, settings: Settings) -> None:
        self.origins = frozenset(settings.cors_origin_list)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        manager = scope.get("state", {}).get(STATE_KEY)
        if manager is None:
            await _error(scope, receive, send, 503, "unavailable", "the MCP server is not running")
            return
        origin = Headers(scope=scope).get("origin")
        if origin is not None and origin.rstrip("/") not in self.origins:
            log.warning("mcp: refused a request from the web page at %s", origin)
            await _error(
                scope,
                receive,
                send,
                403,
                "forbidden",
                f"MCP requests from web pages are refused unless their origin ({origin}) is "
                "in QUIRE_CORS_ORIGINS",
            )
            return
        await manager.handle_request(scope, receive, send)


def route(settings: Settings) -> Route:
    """``/mcp`` for every method (POST messages, GET the event stream, DELETE the session)."""
    return Route(PATH, McpEndpoint(settings), include_in_schema=False)


async def _error(
    scope: Scope, receive: Receive, send: Send, status: int, code: str, message: str
) -> None:
    body = ErrorBody(status=status, code=code, message=message)
    await JSONResponse({"error": body.model_dump()}, status_code=status)(scope, receive, send)
