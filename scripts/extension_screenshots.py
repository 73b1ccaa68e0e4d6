"""The screenshots of docs/using/browser-extension.md, taken from the real extension and web app.

    .venv/bin/python scripts/extension_screenshots.py      # writes docs/using/img/*.png

Debian's Chromium with extension/ loaded unpacked, against the fake Quire of the tests
(tests/fakes/quire_save.py, serving the built frontend/dist: run `make frontend` first) and a
real saved page from ../shared/data/docs/office/html/. Rerun it after changing the popup, the
settings page or the Settings section of the web app.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from playwright.sync_api import Page, sync_playwright  # noqa: E402
from tests.e2e.browser_helpers import built_spa  # noqa: E402
from tests.e2e.extension_helpers import (  # noqa: E402
    allow_site,
    click_action,
    extension_id,
    launch_with_extension,
    open_tab,
    saved_pages_site,
    settings_tab,
)
from tests.fakes.quire_save import FakeQuire  # noqa: E402

OUT = REPO / "docs" / "using" / "img"
TOKEN = "q_7Hc2sXb4LwR9"  # made up; the field masks it
PAGE = "readability-v8-blog.html"


def shoot(page: Page, name: str, selector: str = "body") -> None:
    path = OUT / name
    page.locator(selector).screenshot(path=str(path), animations="disabled")
    print(f"wrote {path.relative_to(REPO)}")  # noqa: T201 - a script's output


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory() as profile,
        FakeQuire(token=TOKEN, dist=built_spa()) as fake,
        saved_pages_site() as (site, _),
        sync_playwright() as pw,
    ):
        ctx = launch_with_extension(pw, Path(profile), viewport={"width": 720, "height": 640})
        ext = extension_id(ctx)
        settings_tab(ctx, ext)  # opened at install: let it open before anything else
        allow_site(ctx, ext, fake.url + "/*")

        options = ctx.new_page()
        options.goto(f"chrome-extension://{ext}/options.html")
        options.fill("#server", fake.url)
        options.fill("#token", TOKEN)
        options.click("button[type=submit]")
        options.locator("#status").filter(has_text="Saved").wait_for()
        options.click("#test")
        options.locator("#status").filter(has_text="Connected").wait_for()
        shoot(options, "extension-options.png")

        reading, tab = open_tab(ctx, f"{site}/{PAGE}")
        popup = click_action(ctx, ext, reading)  # the click that lets the popup read the tab
        popup.wait_for_status(lambda s: s["state"] not in ("", "busy"))
        popup.close()
        # The same popup, opened as a page so that it can be photographed (now "unchanged").
        for state, name in (
            ("unchanged", "extension-popup.png"),
            ("error", "extension-popup-error.png"),
        ):
            if state == "error":
                fake.fail_next(401, "unauthorized", "the API token is not valid")
            shot = ctx.new_page()
            shot.set_viewport_size({"width": 352, "height": 220})
            shot.goto(f"chrome-extension://{ext}/popup.html?tab={tab}")
            shot.locator(f"#status[data-state={state}]").wait_for()
            shoot(shot, name)
            shot.close()

        app = ctx.new_page()
        app.goto(f"{fake.url}/settings")
        app.evaluate("t => localStorage.setItem('quire.apiToken', t)", TOKEN)
        app.reload()
        shoot(app, "settings-bookmarklet.png", '[data-testid="save-from-browser"]')
        ctx.close()


if __name__ == "__main__":
    main()
