"""Browser tests: Debian's Chromium driven by Playwright, and the SPA that nginx serves.

Chromium is `/usr/bin/chromium` (or `QUIRE_CHROMIUM`), launched by path: Playwright's own
browser download is never used. The stack itself comes from tests/e2e/stack.py.
"""

from __future__ import annotations

import os
from pathlib import Path

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
