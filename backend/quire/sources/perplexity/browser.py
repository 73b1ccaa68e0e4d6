"""Debian's Chromium through Playwright: a page on the Perplexity site, its ``fetch``, login.

Playwright never downloads a browser here: ``settings.chromium`` (default /usr/bin/chromium) is
launched by path. Perplexity's bot check (Cloudflare Turnstile) blocks headless logins, so the
first login is headed and by hand; later syncs reuse the saved storage state headless. Every
wait is bounded: page loads and requests by ``perplexity_timeout_s`` (an AbortController inside
the page), the login by ``perplexity_login_timeout_s``.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright
from playwright.sync_api import Error as PlaywrightError

from quire.config import Settings
from quire.sources.perplexity.checkpoint import auth_path, ensure_root, read_json, write_json
from quire.sources.perplexity.client import SESSION_PATH, Fetch, Response, logged_in
from quire.sources.perplexity.errors import LOGIN_HINT, LoginRequired, PerplexityUnavailable
from quire.sources.perplexity.status import record_login

log = logging.getLogger(__name__)

LOGIN_POLL_S = 1.0
BASE_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

# Runs inside the page, so the site's cookies go with it (credentials: 'include').
FETCH_JS = """async ({path, method, body, timeoutMs}) => {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), timeoutMs);
  try {
    const init = {method, credentials: 'include', signal: ctl.signal,
                  headers: {'Accept': 'application/json'}};
    if (body !== null) {
      init.body = JSON.stringify(body);
      init.headers['Content-Type'] = 'application/json';
    }
    const r = await fetch(path, init);
    const text = await r.text();
    return {status: r.status, text, retryAfter: r.headers.get('Retry-After'), error: null};
  } catch (e) {
    return {status: 0, text: '', retryAfter: null, error: String(e)};
  } finally {
    clearTimeout(timer);
  }
}"""


def chromium_args(headless: bool) -> list[str]:
    return (["--headless"] if headless else []) + BASE_ARGS


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _close(thing: Browser | BrowserContext) -> None:
    try:
        thing.close()
    except PlaywrightError:
        log.debug("%s already gone", type(thing).__name__, exc_info=True)


@contextmanager
def launch(settings: Settings, *, headless: bool) -> Iterator[Browser]:
    """Chromium, closed on exit; PerplexityUnavailable if it cannot start."""
    if not headless and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        raise PerplexityUnavailable(
            "a visible browser needs a display (DISPLAY is not set): run this on your desktop, "
            "or over `ssh -X`"
        )
    if not Path(settings.chromium).is_file():
        raise PerplexityUnavailable(
            f"Chromium not found at {settings.chromium}: install it (apt-get install chromium) "
            "or set QUIRE_CHROMIUM"
        )
    with sync_playwright() as pw:
        try:
            browser = pw.chromium.launch(
                executable_path=str(settings.chromium),
                headless=headless,
                args=chromium_args(headless),
                timeout=settings.perplexity_timeout_s * 1000,
            )
        except PlaywrightError as exc:
            raise PerplexityUnavailable(f"Chromium did not start: {_first_line(exc)}") from exc
        try:
            yield browser
        finally:
            _close(browser)


@contextmanager
def site_page(settings: Settings, browser: Browser, *, state: Path | None) -> Iterator[Page]:
    """A new context (with the saved storage state, if given and present) and a page on the
    site's home, from where the in-page API calls are made."""
    try:
        context = browser.new_context(
            storage_state=str(state) if state is not None and state.is_file() else None
        )
    except PlaywrightError as exc:
        raise LoginRequired(
            f"the saved login {state} cannot be read ({_first_line(exc)}); {LOGIN_HINT}"
        ) from exc
    context.set_default_timeout(settings.perplexity_timeout_s * 1000)
    try:
        page = context.new_page()
        try:
            page.goto(settings.perplexity_url + "/", wait_until="domcontentloaded")
        except PlaywrightError as exc:
            raise PerplexityUnavailable(
                f"could not open {settings.perplexity_url}: {_first_line(exc)}"
            ) from exc
        yield page
    finally:
        _close(context)


def page_fetch(page: Page, settings: Settings) -> Fetch:
    """A ``Fetch`` running ``fetch`` inside ``page``."""
    timeout_ms = int(settings.perplexity_timeout_s * 1000)

    def fetch(method: str, path: str, body: Any) -> Response:
        url = settings.perplexity_url + path  # absolute: the page may have navigated away
        args = {"path": url, "method": method, "body": body, "timeoutMs": timeout_ms}
        try:
            r = page.evaluate(FETCH_JS, args)
        except PlaywrightError as exc:  # the page navigated, crashed or was closed
            return Response(0, error=_first_line(exc))
        return Response(int(r["status"]), r["text"] or "", r["retryAfter"], r["error"])

    return fetch


def save_state(context: BrowserContext, settings: Settings) -> Path:
    """Write the context's cookies and localStorage to ``auth.json``, readable by the owner
    only."""
    ensure_root(settings)
    path = auth_path(settings)
    write_json(path, context.storage_state(), mode=0o600)
    return path


def check_session(page: Page, settings: Settings) -> dict[str, Any] | None:
    """The session JSON, or None when the check itself failed (page busy, not JSON)."""
    r = page_fetch(page, settings)("GET", SESSION_PATH, None)
    if r.status != 200:
        return None
    try:
        data = json.loads(r.text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def login(
    settings: Settings,
    *,
    headless: bool = False,
    timeout_s: float | None = None,
    browser: Browser | None = None,
    on_wait: Callable[[float], None] | None = None,
) -> dict[str, Any]:
    """Open the site, wait until the session check says logged in, save the storage state.

    Returns the session JSON (also recorded in status.json). ``on_wait(seconds_left)`` is
    called at each poll. Raises LoginRequired when the time is up or the window was closed.
    """
    timeout = timeout_s if timeout_s is not None else settings.perplexity_login_timeout_s
    saved = auth_path(settings)
    state = saved if isinstance(read_json(saved), dict) else None  # a broken one is replaced
    with _browser(settings, headless, browser) as b, site_page(settings, b, state=state) as page:
        deadline = time.monotonic() + timeout
        while True:
            session = check_session(page, settings) if not page.is_closed() else None
            if logged_in(session):
                assert session is not None
                save_state(page.context, settings)
                record_login(settings, session)
                return session
            if page.is_closed():
                raise LoginRequired("the browser window was closed before the login completed")
            left = deadline - time.monotonic()
            if left <= 0:
                raise LoginRequired(
                    f"not logged in after {timeout:.0f} s; {LOGIN_HINT} again and finish the "
                    "login in the window that opens"
                )
            if on_wait is not None:
                on_wait(left)
            time.sleep(min(LOGIN_POLL_S, left))


@contextmanager
def _browser(settings: Settings, headless: bool, browser: Browser | None) -> Iterator[Browser]:
    if browser is not None:
        yield browser
    else:
        with launch(settings, headless=headless) as b:
            yield b


@contextmanager
def logged_in_page(
    settings: Settings, *, headless: bool = True, browser: Browser | None = None
) -> Iterator[Page]:
    """A page carrying the saved login; LoginRequired if there is none."""
    state = auth_path(settings)
    if not state.is_file():
        raise LoginRequired(f"no saved Perplexity login; {LOGIN_HINT}")
    with _browser(settings, headless, browser) as b, site_page(settings, b, state=state) as page:
        yield page
