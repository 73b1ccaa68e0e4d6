"""A fake Quire server for the browser extension's tests: the two routes the extension may call,
answered as the contract of issue 35 fixes them, and every request it receives recorded.

    with FakeQuire(token="s3cret") as fake:
        fake.url                                  # http://127.0.0.1:<port>
        fake.fail_next(422, "needs_javascript", "…")   # the next save gets this error envelope
        fake.saves()                              # the JSON bodies of POST /api/documents/url
        fake.requests                             # everything received, in order

- ``GET /api/health``: open, as the real one is (no token asked); a HealthOut.
- ``POST /api/documents/url`` with ``{"url", "html"?, "title"?}`` and the bearer token:
  202 ``{"status": "added" | "updated", "document", "job"}``, or 200 ``"unchanged"`` when the
  same URL comes with the same HTML; 401 without the token, 422 without a ``url``.
- Anything else under /api/: the API's JSON 404. Errors are the API's envelope
  (quire.api.errors). With ``dist`` (the built web app), other GETs are the SPA, as nginx
  serves it: a file of ``dist``, or index.html for a client-side route.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse, Response

from quire.api.errors import error_response
from quire.api.schemas import HealthOut, VectorStatus
from tests.fakes.server import ThreadedServer

VERSION = "0.1.0"


@dataclass(frozen=True)
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class FakeQuire:
    token: str | None = None
    dist: Path | None = None
    requests: list[Received] = field(default_factory=list)
    #: url -> (document id, sha256 of the HTML last stored)
    stored: dict[str, tuple[int, str]] = field(default_factory=dict)
    _failures: list[tuple[int, str, str]] = field(default_factory=list)
    _server: ThreadedServer | None = None

    def __enter__(self) -> FakeQuire:
        self._server = ThreadedServer(self.app(), name="fake-quire").start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.stop()

    @property
    def url(self) -> str:
        assert self._server is not None, "FakeQuire is not started"
        return self._server.url

    def fail_next(self, status: int, code: str, message: str) -> None:
        self._failures.append((status, code, message))

    def saves(self) -> list[Any]:
        return [r.json() for r in self.requests if r.path == "/api/documents/url" and r.body]

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.middleware("http")
        async def record(request: Request, call_next: Any) -> Response:
            body = await request.body()
            self.requests.append(
                Received(request.method, request.url.path, dict(request.headers), body)
            )
            return await call_next(request)  # type: ignore[no-any-return]

        @app.get("/api/health")
        def health() -> HealthOut:
            return HealthOut(
                status="ok",
                version=VERSION,
                documents=len(self.stored),
                chunks=0,
                jobs_queued=0,
                jobs_running=0,
                vectors=VectorStatus(model=None, dim=None, state=None, count=0),
            )

        @app.post("/api/documents/url")
        async def save(request: Request) -> JSONResponse:
            given = request.headers.get("authorization", "")
            if self.token is not None and given != f"Bearer {self.token}":
                message = "the API token is not valid" if given else "an API token is required"
                return error_response(401, "unauthorized", message)
            try:
                body = json.loads(await request.body())
            except ValueError:
                return error_response(422, "validation_error", "the body is not JSON")
            url = body.get("url") if isinstance(body, dict) else None
            if not isinstance(url, str) or not url.startswith(("http://", "https://")):
                return error_response(422, "validation_error", "url: an http(s) URL is required")
            if self._failures:
                return error_response(*self._failures.pop(0))
            return self._store(url, body.get("html"), body.get("title"))

        @app.api_route("/{rest:path}", methods=["GET", "POST", "PUT", "DELETE"])
        def elsewhere(rest: str, request: Request) -> Response:
            if self.dist is None or rest.startswith("api/") or request.method != "GET":
                return error_response(404, "not_found", f"no route /{rest}")
            path = (self.dist / rest).resolve()
            if not path.is_file() or not path.is_relative_to(self.dist.resolve()):
                path = self.dist / "index.html"
            return FileResponse(path)

        return app

    def _store(self, url: str, html: str | None, title: str | None) -> JSONResponse:
        digest = hashlib.sha256((html or "").encode()).hexdigest()
        known = self.stored.get(url)
        if known is not None and known[1] == digest:
            return JSONResponse(
                {"status": "unchanged", "document": _document(known[0], url, title), "job": None}
            )
        doc_id = known[0] if known else len(self.stored) + 1
        self.stored[url] = (doc_id, digest)
        job = {
            "id": doc_id * 10,
            "document_id": doc_id,
            "kind": "ingest",
            "status": "queued",
            "stage": "queued",
            "progress": 0.0,
            "attempts": 0,
            "error": None,
            "detail": {},
        }
        return JSONResponse(
            {
                "status": "updated" if known else "added",
                "document": _document(doc_id, url, title),
                "job": job,
            },
            status_code=202,
        )


def _document(doc_id: int, url: str, title: str | None) -> dict[str, Any]:
    """A DocumentOut as GET /api/documents/{id} returns it, for a queued web page."""
    now = datetime.now(UTC).isoformat()
    return {
        "id": doc_id,
        "kind": "web",
        "title": title,
        "author": None,
        "filename": "page.html",
        "sha256": "0" * 64,
        "byte_size": 0,
        "page_count": 0,
        "chunk_count": 0,
        "status": "queued",
        "error": None,
        "created_at": now,
        "updated_at": now,
        "metadata": {"url": url, "fetched_at": now},
        "language": None,
        "origin": "web",
        "visibility": "team",
        "owner": None,
        "can_change": True,
        "job": None,
    }
