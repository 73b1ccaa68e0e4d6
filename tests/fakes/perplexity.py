"""A fake Perplexity web app over real HTTP on 127.0.0.1: the endpoints of DESIGN §7.

    with FakePerplexity(threads=[make_thread(1), make_thread(2, space="Research")]) as fake:
        fake.auto_login = True         # the home page signs the browser in (the user, by hand)
        fake.fail_next(1, status=429, retry_after="1", path=LIST_PATH)
        fake.fail_after_threads = (3, 503)  # thread fetches after the 3rd fail, hard
        fake.list_logged_out = True    # the lists answer 200 [] (Perplexity's logged-out answer)
        fake.revoke_sessions()         # every login cookie stops working
        fake.edit_answer(slug, turn=0, answer="...")  # a thread changes upstream
        fake.requests_to("/rest/thread/" + slug)      # what the browser asked

Implemented like the real site: ``GET /`` (an HTML page), ``GET /api/auth/session`` (the user
and expiry when the NextAuth cookie is valid, ``{}`` when not), ``POST
/rest/thread/list_ask_threads`` and ``list_pinned_ask_threads`` (``version`` and ``source`` query
parameters required; limit/offset paging; a bare JSON array; ``[]`` with 200 when logged out),
``GET /rest/thread/{slug}`` (entries in pages of ``entries_per_page`` behind an opaque
``next_cursor``; 401 when logged out, 404 unknown). Errors carry ``{"error", "status": "error"}``.
Entries hold the answer twice (``ask_text`` and ``ask_text_0_markdown``), a
``sources_answer_mode`` block with cited web results, a ``plan`` and an ``image_answer_mode``
block.
"""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from tests.fakes.server import ThreadedServer

COOKIE = "next-auth.session-token"  # the __Secure- variant needs https
LIST_PATH = "/rest/thread/list_ask_threads"
PINNED_PATH = "/rest/thread/list_pinned_ask_threads"

HOME = """<!doctype html><html><head><title>Perplexity</title></head><body>
<main id="app">Where knowledge begins</main>
<script>
  // A user logging in by hand: the fake signs in after a moment when auto_login is on.
  if (%(auto)s) setTimeout(() => fetch('/api/auth/callback/fake', {method: 'POST'}), %(delay)d);
</script></body></html>"""


@dataclass
class FakeThread:
    uuid: str
    slug: str
    title: str
    entries: list[dict[str, Any]]
    collection: dict[str, Any] | None = None
    pinned: bool = False
    last_query_datetime: str = "2025-01-15T10:20:30.123456"

    def list_item(self) -> dict[str, Any]:
        first = self.entries[0] if self.entries else {}
        last = self.entries[-1] if self.entries else {}
        answer = _answer(last)
        return {
            "uuid": self.uuid,
            "slug": self.slug,
            "title": self.title,
            "query_str": first.get("query_str", ""),
            "first_answer": json.dumps({"answer": _answer(first)[:40]}),
            "answer_preview": answer[:120],
            "last_query_datetime": self.last_query_datetime,
            "mode": "COPILOT",
            "status": "COMPLETED",
            "display_model": "pplx_pro",
            "collection": self.collection,
            "query_count": len(self.entries),
            "search_focus": "internet",
        }


def _answer(entry: dict[str, Any]) -> str:
    for block in entry.get("blocks", []):
        if block.get("intended_usage") == "ask_text":
            return str(block["markdown_block"]["answer"])
    return ""


def make_entry(
    slug: str, title: str, query: str, answer: str, sources: list[tuple[str, str]], n: int
) -> dict[str, Any]:
    """One turn as the thread endpoint returns it."""
    md = {"answer": answer, "chunks": [answer], "progress": "DONE", "inline_token_annotations": []}
    rows = [
        {
            "web_result": {
                "name": name,
                "url": url,
                "snippet": f"About {name}.",
                "is_attachment": False,
            },
            "citation": i,
        }
        for i, (name, url) in enumerate(sources, start=1)
    ]
    return {
        "uuid": f"entry-{slug}-{n}",
        "query_str": query,
        "thread_title": title,
        "updated_datetime": f"2025-01-15T10:{20 + n:02d}:30.123456",
        "collection_info": None,
        "thread_url_slug": slug,
        "status": "COMPLETED",
        "mode": "COPILOT",
        "display_model": "pplx_pro",
        "blocks": [
            {
                "intended_usage": "plan",
                "plan_block": {"goals": [{"description": query}], "final": True},
            },
            {"intended_usage": "sources_answer_mode", "sources_mode_block": {"rows": rows}},
            {"intended_usage": "ask_text", "markdown_block": md},
            {"intended_usage": "ask_text_0_markdown", "markdown_block": dict(md)},
            {"intended_usage": "image_answer_mode", "image_mode_block": {"media_items": []}},
        ],
    }


def make_thread(
    i: int,
    *,
    turns: int = 2,
    space: str | None = None,
    pinned: bool = False,
    fact: str | None = None,
) -> FakeThread:
    """Thread ``i``: a title, ``turns`` entries with distinct facts, two sources a turn."""
    slug = f"thread-{i}-{'abcdef'[i % 6]}Xq{i:03d}.Zz"
    title = f"Question number {i} about topic {i}"
    entries = []
    for n in range(turns):
        query = f"What is fact {n} of topic {i}?" if n else title
        answer = (
            fact
            if fact is not None and n == 0
            else f"Topic {i} turn {n}: the glimmerstone count of topic {i} is {1000 * i + n}."
        )
        sources = [
            (f"Source {i}.{n}.1", f"https://example.org/{i}/{n}/1"),
            (f"Source {i}.{n}.2", f"https://example.com/wiki/T{i}_({n})"),
        ]
        entries.append(make_entry(slug, title, query, answer, sources, n))
    collection = (
        {"uuid": f"c-{space}", "title": space, "emoji": "📚", "slug": space.lower()}
        if space
        else None
    )
    when = (datetime(2025, 1, 1) + timedelta(days=i)).isoformat(timespec="microseconds")
    return FakeThread(
        f"uuid-{i:04d}", slug, title, entries, collection, pinned, last_query_datetime=when
    )


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    body: Any
    authed: bool
    at: float = field(default_factory=time.monotonic)


@dataclass(frozen=True)
class _Failure:
    status: int
    path: str | None
    retry_after: str | None


class FakePerplexity:
    """State of the fake site plus the uvicorn server (in a thread) serving it."""

    def __init__(self, threads: list[FakeThread] | None = None, host: str = "127.0.0.1") -> None:
        self.threads: dict[str, FakeThread] = {t.slug: t for t in threads or []}
        self.auto_login = False
        self.login_delay_ms = 300
        self.entries_per_page = 1
        self.list_logged_out = False
        self.fail_after_threads: tuple[int, int] | None = None
        self.latency_s = 0.0
        self.sessions: set[str] = set()
        self.requests: list[Recorded] = []
        self.thread_fetches = 0  # first pages of thread details served
        self._failures: deque[_Failure] = deque()
        self._lock = threading.Lock()
        self.server = ThreadedServer(create_app(self), host=host, name="fake-perplexity")

    # -- knobs ---------------------------------------------------------------------------
    def fail_next(
        self,
        n: int = 1,
        *,
        status: int = 500,
        path: str | None = None,
        retry_after: str | None = None,
    ) -> None:
        """Answer the next ``n`` requests (to ``path``, or any) with ``status``."""
        with self._lock:
            self._failures.extend(_Failure(status, path, retry_after) for _ in range(n))

    def revoke_sessions(self) -> None:
        with self._lock:
            self.sessions.clear()

    def edit_answer(self, slug: str, turn: int, answer: str) -> None:
        """Change one answer (both of its copies), as a regenerated answer would."""
        entry = self.threads[slug].entries[turn]
        for block in entry["blocks"]:
            if str(block["intended_usage"]).startswith("ask_text"):
                block["markdown_block"]["answer"] = answer
                block["markdown_block"]["chunks"] = [answer]
        entry["updated_datetime"] = "2025-02-01T08:00:00.000001"

    def delete(self, slug: str) -> FakeThread:
        return self.threads.pop(slug)

    def requests_to(self, prefix: str) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.path.startswith(prefix)]

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self._failures.clear()
            self.thread_fetches = 0
        self.fail_after_threads = None
        self.list_logged_out = False
        self.latency_s = 0.0

    # -- used by the app -----------------------------------------------------------------
    def authed(self, request: Request) -> bool:
        return request.cookies.get(COOKIE, "") in self.sessions

    def sign_in(self) -> str:
        token = secrets.token_hex(16)
        with self._lock:
            self.sessions.add(token)
        return token

    def record(self, request: Request, body: Any) -> None:
        with self._lock:
            self.requests.append(
                Recorded(
                    request.method,
                    request.url.path,
                    dict(request.query_params),
                    body,
                    self.authed(request),
                )
            )

    def take_failure(self, path: str) -> _Failure | None:
        with self._lock:
            for i, f in enumerate(self._failures):
                if f.path is None or path.startswith(f.path):
                    del self._failures[i]
                    return f
        return None

    def listed(self) -> list[FakeThread]:
        return sorted(self.threads.values(), key=lambda t: t.last_query_datetime, reverse=True)

    # -- server --------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return self.server.url

    def start(self) -> FakePerplexity:
        self.server.start()
        return self

    def stop(self) -> None:
        self.server.stop()

    def __enter__(self) -> FakePerplexity:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message, "status": "error"}, status_code=status, headers=headers)


def _cursor(slug: str, offset: int) -> str:
    return base64.urlsafe_b64encode(f"{slug}\0{offset}".encode()).decode().rstrip("=")


def _offset(slug: str, cursor: str) -> int | None:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        owner, offset = raw.split("\0")
        return int(offset) if owner == slug else None
    except (ValueError, UnicodeDecodeError):
        return None


def create_app(fake: FakePerplexity) -> FastAPI:
    """The ASGI app of ``fake``."""
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)

    @app.middleware("http")
    async def knobs(request: Request, call_next: Any) -> Response:
        raw = await request.body()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        fake.record(request, body)
        if fake.latency_s:
            await asyncio.sleep(fake.latency_s)
        failure = fake.take_failure(request.url.path)
        if failure is not None:
            headers = {"Retry-After": failure.retry_after} if failure.retry_after else None
            return error(failure.status, f"injected {failure.status}", headers)
        response: Response = await call_next(request)
        return response

    def check_query(request: Request) -> JSONResponse | None:
        q = request.query_params
        if q.get("version") != "2.18" or q.get("source") != "default":
            return error(400, "version and source are required")
        return None

    @app.get("/")
    async def home() -> HTMLResponse:
        auto = "true" if fake.auto_login else "false"
        return HTMLResponse(HOME % {"auto": auto, "delay": fake.login_delay_ms})

    @app.post("/api/auth/callback/fake")
    async def sign_in() -> JSONResponse:
        response = JSONResponse({"url": "/"})
        response.set_cookie(
            COOKIE, fake.sign_in(), httponly=True, samesite="lax", max_age=30 * 86400
        )
        return response

    @app.get("/api/auth/session")
    async def session(request: Request) -> dict[str, Any]:
        if not fake.authed(request):
            return {}
        expires = datetime.now(UTC) + timedelta(days=30)
        return {
            "user": {
                "name": "Test User",
                "email": "tester@example.com",
                "image": None,
                "id": "u-1",
            },
            "expires": expires.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        }

    @app.post(LIST_PATH)
    async def list_threads(request: Request) -> Response:
        if (bad := check_query(request)) is not None:
            return bad
        try:
            body = await request.json()
        except ValueError:
            return error(400, "invalid JSON")
        limit, offset = body.get("limit"), body.get("offset")
        if not isinstance(limit, int) or not 1 <= limit <= 100 or not isinstance(offset, int):
            return error(400, "limit (1..100) and offset are required")
        if not fake.authed(request) or fake.list_logged_out:
            return JSONResponse([])
        items = [t.list_item() for t in fake.listed()[offset : offset + limit]]
        return JSONResponse(items)

    @app.post(PINNED_PATH)
    async def list_pinned(request: Request) -> Response:
        if (bad := check_query(request)) is not None:
            return bad
        if not fake.authed(request) or fake.list_logged_out:
            return JSONResponse([])
        return JSONResponse([t.list_item() for t in fake.listed() if t.pinned])

    @app.get("/rest/thread/{slug}")
    async def thread(slug: str, request: Request) -> Response:
        if (bad := check_query(request)) is not None:
            return bad
        if not fake.authed(request):
            return error(401, "Unauthorized")
        found = fake.threads.get(slug)
        if found is None:
            return error(404, "Thread not found")
        cursor = request.query_params.get("cursor")
        offset = 0 if cursor is None else _offset(slug, cursor)
        if offset is None:
            return error(400, "invalid cursor")
        if cursor is None:
            with fake._lock:
                fake.thread_fetches += 1
                served = fake.thread_fetches
            if fake.fail_after_threads and served > fake.fail_after_threads[0]:
                return error(fake.fail_after_threads[1], "Service unavailable")
        size = fake.entries_per_page
        page = found.entries[offset : offset + size]
        more = offset + size < len(found.entries)
        return JSONResponse(
            {
                "status": "success",
                "entries": page,
                "has_next_page": more,
                "next_cursor": _cursor(slug, offset + size) if more else None,
                "thread_metadata": {
                    "uuid": found.uuid,
                    "slug": found.slug,
                    "title": found.title,
                    "collection": found.collection,
                    "privacy": "private",
                },
            }
        )

    return app
