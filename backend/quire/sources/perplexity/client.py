"""Perplexity's web API (version 2.18) as its own pages call it: session, thread lists, threads.

Requests go through a ``Fetch`` callable: the sync passes the in-page ``fetch`` of a logged-in
Chromium page (perplexity/browser.py); anything with the same signature works. The client
paces requests (``perplexity_delay_s`` apart), retries 429, 5xx and network failures with
tenacity (Retry-After honoured, else exponential backoff, both capped), and turns answers into
the errors of perplexity/errors.py: 401/403 mean the login is gone, retries exhausted mean the
site is unavailable.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import quote

from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt

from quire.config import Settings
from quire.errors import NotFound
from quire.sources.perplexity.errors import LOGIN_HINT, LoginRequired, PerplexityUnavailable

log = logging.getLogger(__name__)

API_VERSION = "2.18"
QUERY = f"version={API_VERSION}&source=default"
SESSION_PATH = "/api/auth/session"
LIST_PATH = f"/rest/thread/list_ask_threads?{QUERY}"
PINNED_PATH = f"/rest/thread/list_pinned_ask_threads?{QUERY}"
MAX_LIST_PAGES = 2000  # 100,000 threads at 50 a page: a bound, not a limit anyone meets
MAX_THREAD_PAGES = 500


@dataclass(frozen=True)
class Response:
    """What one request got: status 0 means no HTTP answer at all (``error`` says why)."""

    status: int
    text: str = ""
    retry_after: str | None = None
    error: str | None = None

    def json(self) -> Any:
        return json.loads(self.text)


Fetch = Callable[[str, str, Any], Response]  # (method, path with query, JSON body or None)


@dataclass
class ThreadData:
    entries: list[dict[str, Any]] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)


class _Transient(Exception):
    def __init__(self, response: Response) -> None:
        super().__init__(f"{response.status} {response.error or ''}".strip())
        self.response = response


def logged_in(session: Any) -> bool:
    """NextAuth's session JSON names a user (and an expiry) only when logged in."""
    return isinstance(session, dict) and bool(session.get("user") or session.get("expires"))


def _error_text(response: Response) -> str:
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("error"):
        return str(body["error"])[:200]
    if response.text.lstrip().startswith("<"):
        return "an HTML page (a bot check?)"
    return response.text[:200] or response.error or "no answer"


def retry_after_s(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date); None if absent/bad."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class PerplexityClient:
    """The endpoints, paced and retried."""

    def __init__(
        self,
        fetch: Fetch,
        settings: Settings,
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.fetch = fetch
        self.settings = settings
        self.sleep = sleep
        self.requests = 0
        self._last = 0.0

    def _pace(self) -> None:
        wait = self._last + self.settings.perplexity_delay_s - time.monotonic()
        if wait > 0:
            self.sleep(wait)
        self._last = time.monotonic()

    def _wait(self, state: RetryCallState) -> float:
        s = self.settings
        exc = state.outcome.exception() if state.outcome else None
        header = retry_after_s(exc.response.retry_after) if isinstance(exc, _Transient) else None
        backoff = s.perplexity_backoff_s * 2 ** (state.attempt_number - 1)
        return min(s.perplexity_backoff_max_s, header if header is not None else backoff)

    def _once(self, method: str, path: str, body: Any) -> Any:
        self._pace()
        self.requests += 1
        r = self.fetch(method, path, body)
        if r.status == 0 or r.status == 429 or r.status >= 500:
            log.info("%s %s: %s; will retry", method, path, r.status or r.error)
            raise _Transient(r)
        if r.status in (401, 403):
            raise LoginRequired(
                f"Perplexity answered {r.status} ({_error_text(r)}): the saved login is no "
                f"longer accepted; {LOGIN_HINT}"
            )
        if r.status == 404:
            raise NotFound(f"Perplexity has no {path.split('?')[0]} ({_error_text(r)})")
        if r.status >= 400:
            raise PerplexityUnavailable(
                f"Perplexity refused {method} {path.split('?')[0]}: {r.status} {_error_text(r)}"
            )
        try:
            return r.json()
        except ValueError:
            raise PerplexityUnavailable(
                f"{method} {path.split('?')[0]}: the answer is not JSON ({_error_text(r)})"
            ) from None

    def request(self, method: str, path: str, body: Any = None) -> Any:
        """One API call's parsed JSON, after pacing and retries."""
        retrying = Retrying(
            stop=stop_after_attempt(self.settings.perplexity_retries + 1),
            wait=self._wait,
            retry=retry_if_exception_type(_Transient),
            sleep=self.sleep,
            reraise=True,
        )
        try:
            for attempt in retrying:
                with attempt:
                    return self._once(method, path, body)
        except _Transient as exc:
            r = exc.response
            what = f"HTTP {r.status} ({_error_text(r)})" if r.status else (r.error or "no answer")
            raise PerplexityUnavailable(
                f"{method} {path.split('?')[0]}: {what} after "
                f"{self.settings.perplexity_retries + 1} tries"
            ) from None
        raise AssertionError("unreachable")  # pragma: no cover - Retrying returns or raises

    def session(self) -> dict[str, Any]:
        """The in-page session check (``{}`` when logged out)."""
        data = self.request("GET", SESSION_PATH)
        return data if isinstance(data, dict) else {}

    def list_threads(self, limit: int | None = None) -> list[dict[str, Any]]:
        """Every thread (newest first), then the pinned ones not already listed; by uuid."""
        size = self.settings.perplexity_page_size
        seen: dict[str, dict[str, Any]] = {}
        offset = 0
        for _ in range(MAX_LIST_PAGES):
            page = self.request(
                "POST",
                LIST_PATH,
                {
                    "limit": size,
                    "offset": offset,
                    "ascending": False,
                    "include_assets": True,
                    "search_term": "",
                    "send_last_entry": True,
                    "thread_type_filter": None,
                    "with_temporary_threads": False,
                },
            )
            if not isinstance(page, list):
                raise PerplexityUnavailable("the thread list is not a JSON array")
            new = _merge(seen, page)
            if len(page) < size or not new or (limit is not None and len(seen) >= limit):
                break
            offset += len(page)
        try:
            pinned = self.request("POST", PINNED_PATH, {})
        except NotFound:
            pinned = []  # an account or API version without pinning
        if isinstance(pinned, list):
            _merge(seen, pinned)
        threads = list(seen.values())
        return threads[:limit] if limit is not None else threads

    def thread(self, slug: str) -> ThreadData:
        """All entries of a thread, following ``next_cursor``."""
        out = ThreadData()
        cursor: str | None = None
        cursors: set[str] = set()
        base = f"/rest/thread/{quote(slug, safe='')}?{QUERY}"
        for _ in range(MAX_THREAD_PAGES):
            path = base + (f"&cursor={quote(cursor, safe='')}" if cursor else "")
            data = self.request("GET", path)
            if not isinstance(data, dict) or data.get("status", "success") != "success":
                error = data.get("error") if isinstance(data, dict) else "not a JSON object"
                raise PerplexityUnavailable(f"thread {slug}: {error}")
            out.entries.extend(e for e in data.get("entries") or [] if isinstance(e, dict))
            if isinstance(data.get("thread_metadata"), dict):
                out.metadata = data["thread_metadata"]
            cursor = data.get("next_cursor")
            if not data.get("has_next_page") or not isinstance(cursor, str) or cursor in cursors:
                break
            cursors.add(cursor)
        return out


def _merge(seen: dict[str, dict[str, Any]], items: list[Any]) -> int:
    """Add list items not seen yet (by uuid); returns how many were new."""
    new = 0
    for item in items:
        if not isinstance(item, dict):
            continue
        uuid, slug = item.get("uuid"), item.get("slug")
        if isinstance(uuid, str) and uuid and isinstance(slug, str) and slug and uuid not in seen:
            seen[uuid] = item
            new += 1
    return new
