"""Browser tests: Debian's Chromium driven by Playwright, and the SPA that nginx serves.

Chromium is `/usr/bin/chromium` (or `QUIRE_CHROMIUM`), launched by path: Playwright's own
browser download is never used. The stack itself comes from tests/e2e/stack.py.
"""

from __future__ import annotations

import os
from pathlib import Path

from playwright.sync_api import Browser, Page

from quire.sources.perplexity.browser import BASE_ARGS
from tests.conftest import REPO

DIST = REPO / "frontend" / "dist"
ARTIFACTS = REPO / "test-artifacts" / "screenshots"
CHROMIUM = os.environ.get("QUIRE_CHROMIUM", "/usr/bin/chromium")  # as Settings.chromium
# The flags Quire's own Perplexity browser uses (Playwright adds --headless itself).
CHROMIUM_ARGS = [*BASE_ARGS, "--disable-quic"]


def built_spa() -> Path:
    """frontend/dist as `make frontend` builds it (the Vue app, not the placeholder)."""
    index = DIST / "index.html"
    if not index.is_file() or 'id="app"' not in index.read_text(encoding="utf-8"):
        raise AssertionError("frontend/dist is not built: run `make frontend` first")
    return DIST


def phone_page(browser: Browser, base_url: str) -> tuple[Page, list[str]]:
    """A page at a phone's size (390x844, touch), and the errors it raises as they come; close
    it with ``page.context.close()``."""
    ctx = browser.new_context(
        base_url=base_url,
        viewport={"width": 390, "height": 844},
        is_mobile=True,
        has_touch=True,
        locale="en-US",
    )
    ctx.set_default_timeout(20_000)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    return page, errors
