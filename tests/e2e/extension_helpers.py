"""The "Save to Quire" extension (extension/) loaded unpacked into Debian's Chromium, and the
user's gestures a test needs: a click on its toolbar button, and the site access a person
grants on chrome://extensions (a headless browser cannot click a permission prompt).

    ctx = launch_with_extension(pw, profile_dir)
    ext_id = extension_id(ctx)
    allow_site(ctx, ext_id, "http://127.0.0.1:8123/*")
    popup = click_action(ctx, ext_id, page)       # the real popup, opened as the click opens it
    popup.wait_for_status(lambda s: s["state"] != "busy")

Used by tests/e2e/test_extension.py, test_bookmarklet.py and scripts/extension_screenshots.py.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from playwright.sync_api import BrowserContext, CDPSession, Page, Playwright

from tests.conftest import DOCS, REPO
from tests.e2e.browser_helpers import CHROMIUM, CHROMIUM_ARGS

EXTENSION = REPO / "extension"
HTML = DOCS / "office" / "html"  # the real saved pages of issue 35


def launch_with_extension(pw: Playwright, profile: Path, **options: Any) -> BrowserContext:
    """A persistent Chromium profile with only the extension loaded (extensions need one).

    New headless mode runs extensions; Playwright's ``headless=True`` would start the old
    one, hence ``headless=False`` with ``--headless=new``. Extensions.triggerAction (the
    toolbar click) is allowed only with ``--enable-unsafe-extension-debugging``.
    """
    ctx = pw.chromium.launch_persistent_context(
        str(profile),
        executable_path=CHROMIUM,
        headless=False,
        args=[
            "--headless=new",
            *CHROMIUM_ARGS,
            f"--disable-extensions-except={EXTENSION}",
            f"--load-extension={EXTENSION}",
            "--enable-unsafe-extension-debugging",
        ],
        **options,
    )
    ctx.set_default_timeout(20_000)
    return ctx


def extension_id(ctx: BrowserContext) -> str:
    """The id Chromium gave the unpacked extension, from its service worker's URL."""
    workers = ctx.service_workers or [ctx.wait_for_event("serviceworker", timeout=15_000)]
    return workers[0].url.split("/")[2]


def settings_tab(ctx: BrowserContext, ext_id: str, timeout_s: float = 10) -> Page | None:
    """The settings tab the extension opens as it is installed, once it has opened."""
    url = f"chrome-extension://{ext_id}/options.html"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for page in ctx.pages:
            if page.url == url:
                return page
        ctx.pages[0].wait_for_timeout(100)
    return None


def _browser_session(ctx: BrowserContext) -> CDPSession:
    assert ctx.browser is not None
    return ctx.browser.new_browser_cdp_session()


def allow_site(ctx: BrowserContext, ext_id: str, pattern: str) -> None:
    """What a person does under the extension's "Site access" on chrome://extensions: the
    settings page's permission request for ``pattern`` then succeeds without its prompt."""
    page = ctx.new_page()
    try:
        page.goto("chrome://extensions")
        page.evaluate(
            "([id, host]) => chrome.developerPrivate.addHostPermission(id, host)", [ext_id, pattern]
        )
    finally:
        page.close()


def tab_ids(ctx: BrowserContext) -> set[int]:
    """The ids of the open tabs (the extension sees no URL or title without a grant)."""
    worker = ctx.service_workers[0]
    return set(worker.evaluate("chrome.tabs.query({}).then(tabs => tabs.map(t => t.id))"))


def open_tab(ctx: BrowserContext, url: str) -> tuple[Page, int]:
    """A page opened as a person opens it, and its tab's id."""
    before = tab_ids(ctx)
    page = ctx.new_page()
    page.goto(url)
    (tab,) = tab_ids(ctx) - before
    return page, tab


def granted_origins(ctx: BrowserContext) -> list[str]:
    """The host permissions the extension holds now (from its service worker)."""
    worker = ctx.service_workers[0]
    return sorted(worker.evaluate("chrome.permissions.getAll().then(p => p.origins)"))


class Popup:
    """The popup the toolbar click opened: Playwright does not attach to it, so its DOM is read
    through the browser's CDP session (a non-flattened session on the popup's target)."""

    def __init__(self, session: CDPSession, target_id: str, page: Page) -> None:
        self._cdp = session
        self._target = target_id
        self._page = page  # any attached page: its waits let Playwright deliver the events
        self._replies: dict[int, Any] = {}
        self._next = 0
        session.on("Target.receivedMessageFromTarget", self._on_message)
        self._sid = session.send(
            "Target.attachToTarget", {"targetId": target_id, "flatten": False}
        )["sessionId"]

    def _on_message(self, event: dict[str, Any]) -> None:
        if event.get("sessionId") == self._sid:
            reply = json.loads(event["message"])
            if "id" in reply:
                self._replies[reply["id"]] = reply

    def evaluate(self, expression: str) -> Any:
        self._next += 1
        call = {
            "id": self._next,
            "method": "Runtime.evaluate",
            "params": {"expression": expression, "returnByValue": True, "awaitPromise": True},
        }
        self._cdp.send(
            "Target.sendMessageToTarget", {"sessionId": self._sid, "message": json.dumps(call)}
        )
        deadline = time.monotonic() + 10
        while self._next not in self._replies:
            assert time.monotonic() < deadline, f"the popup did not answer {expression!r}"
            self._page.wait_for_timeout(50)
        reply = self._replies.pop(self._next)
        assert "exceptionDetails" not in reply["result"], reply
        return reply["result"]["result"].get("value")

    def close(self) -> None:
        self._cdp.send("Target.closeTarget", {"targetId": self._target})

    def status(self) -> dict[str, str]:
        return self.evaluate(  # not loaded yet: no status
            "({text: document.getElementById('status')?.textContent ?? '',"
            " state: document.getElementById('status')?.dataset.state ?? ''})"
        )

    def wait_for_status(
        self, done: Callable[[dict[str, str]], bool], timeout_s: float = 20
    ) -> dict[str, str]:
        deadline = time.monotonic() + timeout_s
        while not done(status := self.status()):
            assert time.monotonic() < deadline, f"the popup still shows {status}"
            self._page.wait_for_timeout(100)
        return status


def click_action(ctx: BrowserContext, ext_id: str, page: Page) -> Popup:
    """Click the extension's toolbar button on ``page``'s tab, as a person does (this is what
    grants activeTab), and return the popup it opened."""
    cdp = _browser_session(ctx)
    targets = cdp.send("Target.getTargets", {"filter": [{}]})["targetInfos"]
    popup_url = f"chrome-extension://{ext_id}/popup.html"
    before = {t["targetId"] for t in targets if t["url"] == popup_url}
    tabs = [t for t in targets if t["type"] == "tab" and t["url"] == page.url]
    assert len(tabs) == 1, f"no single tab at {page.url}: {tabs}"
    cdp.send("Extensions.triggerAction", {"id": ext_id, "targetId": tabs[0]["targetId"]})
    deadline = time.monotonic() + 10
    while True:
        targets = cdp.send("Target.getTargets", {"filter": [{}]})["targetInfos"]
        opened = [
            t
            for t in targets
            if t["type"] == "page" and t["url"] == popup_url and t["targetId"] not in before
        ]
        if opened:
            return Popup(cdp, opened[0]["targetId"], page)
        assert time.monotonic() < deadline, "the toolbar click opened no popup"
        page.wait_for_timeout(50)


class _Pages(http.server.SimpleHTTPRequestHandler):
    """The saved pages as a site serves them; ``/latin1/NAME`` re-encoded in windows-1252."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.server.paths.append(self.path)  # type: ignore[attr-defined]
        if self.path.startswith("/latin1/"):
            text = (HTML / self.path.removeprefix("/latin1/")).read_text(encoding="utf-8")
            body = text.replace("charset=utf-8", "charset=windows-1252").encode(
                "cp1252", errors="xmlcharrefreplace"
            )
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=windows-1252")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def log_message(self, *args: Any) -> None:
        pass


@contextlib.contextmanager
def saved_pages_site() -> Iterator[tuple[str, list[str]]]:
    """http://localhost:PORT serving the saved pages (another host than the 127.0.0.1 of the
    servers under test, so no permission for one covers the other), and the paths asked for."""
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Pages, directory=str(HTML))
    )
    server.paths = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://localhost:{server.server_address[1]}", server.paths  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
