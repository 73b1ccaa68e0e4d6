"""The web app served by the API itself (``quire up``): what nginx does in front of ``make run``.

``serve_web_app`` wraps the API in one ASGI app that sends every path the API owns (the first
segment of any of its paths: ``/api``, ``/v1``, ``/mcp``, and whatever is mounted later) to
the API unchanged, so its access control, upload limit and streaming apply as before, and
serves everything else from the built web app, as nginx.conf.template does:

- ``/assets/``: Vite's hashed bundles, cached for a year (``immutable``) and gzipped;
- a file at the top (``/favicon.svg``): as it is, revalidated (``no-cache``);
- any other path: ``index.html``, revalidated, for the Vue router's client-side routes
  (``/library/3/pages/7``); a missing asset is a 404, never the page.

The web app's own files need no token, as behind nginx: the page asks for it and sends it
with every API call. Every response of these carries ``X-Content-Type-Options: nosniff``.
"""

from __future__ import annotations

import mimetypes
from pathlib import Path

from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

import quire

#: The built web app in the wheel (setup.py copies frontend/dist there).
PACKAGED = Path(quire.__file__).resolve().parent / "web_app"
#: ``make frontend``'s output, when Quire runs from a checkout (an editable install).
CHECKOUT = Path(quire.__file__).resolve().parents[2] / "frontend" / "dist"
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"

# pdf.js's worker is an ES module (.mjs): served as anything but JavaScript, the browser refuses
# it. Python's table lacks .mjs before 3.12, and on Windows it is read from the registry.
mimetypes.add_type("text/javascript", ".js")
mimetypes.add_type("text/javascript", ".mjs")


class WebAppMissing(Exception):
    """Neither the wheel nor the checkout holds a built web app."""


def find_web_app() -> Path:
    """The built web app: the wheel's ``quire/web_app``, else a checkout's ``frontend/dist``."""
    for root in (PACKAGED, CHECKOUT):
        if (root / "index.html").is_file():
            return root
    raise WebAppMissing(
        f"the web app is not built: neither {PACKAGED} nor {CHECKOUT} holds index.html. "
        "In a checkout run `make frontend`; a wheel built by `make wheel` carries it."
    )


def api_prefixes(api: FastAPI) -> frozenset[str]:
    """The first path segment of every path the API answers: "api", "v1", "mcp", "docs" (its
    OAuth redirect). Routers included in FastAPI are read through the OpenAPI schema, the
    routes added directly (MCP, the schema's own) from the route list."""
    paths = [*api.openapi()["paths"], *(getattr(r, "path", "") for r in api.router.routes)]
    return frozenset(p.strip("/").split("/", 1)[0] for p in paths if p.strip("/"))


class _Assets(StaticFiles):
    """StaticFiles with the headers of hashed bundles."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        if response.status_code in (200, 304):
            response.headers["Cache-Control"] = IMMUTABLE
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response


def _pages(root: Path) -> Starlette:
    index = root / "index.html"

    async def page(request: Request) -> Response:
        path = request.path_params["path"]
        file = (root / path).resolve()
        if path and "/" not in path and file.parent == root and file.is_file():
            served = file
        else:
            served = index
        return FileResponse(
            served,
            headers={"Cache-Control": REVALIDATE, "X-Content-Type-Options": "nosniff"},
        )

    assets = GZipMiddleware(_Assets(directory=root / "assets", check_dir=False), minimum_size=1024)
    # A Starlette app, not a bare Router: StaticFiles' 404 for a missing asset is a response.
    return Starlette(
        routes=[
            Mount("/assets", app=assets),
            Route("/{path:path}", page, methods=["GET", "HEAD"]),
        ]
    )


class WebAppAndApi:
    """One ASGI app: the API's paths to the API, the rest to the web app (module docstring)."""

    def __init__(self, api: FastAPI, root: Path) -> None:
        self.api = api
        self.root = root.resolve()
        self.prefixes = api_prefixes(api)
        self.pages = _pages(self.root)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        target: ASGIApp = self.api
        if scope["type"] == "http":
            first = scope["path"].strip("/").split("/", 1)[0]
            if first not in self.prefixes:
                target = self.pages
        await target(scope, receive, send)


def serve_web_app(api: FastAPI, root: Path | None = None) -> WebAppAndApi:
    """``api`` with the web app at ``root`` (default: ``find_web_app()``) served beside it."""
    return WebAppAndApi(api, root or find_web_app())
