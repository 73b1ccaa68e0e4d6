"""Fixtures of the browser tests: Debian's Chromium (Playwright), and a page on the module's
``stack`` that fails its test on any error in the page."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Dialog, Page, sync_playwright

from tests.e2e.browser_helpers import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS
from tests.e2e.stack import Stack, stack_report


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Browser, stack: Stack) -> Iterator[Page]:
    ctx = browser.new_context(
        base_url=stack.web, viewport={"width": 1280, "height": 860}, locale="en-US"
    )
    ctx.set_default_timeout(20_000)
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))

    def on_dialog(dialog: Dialog) -> None:  # e.g. an alert() smuggled in through a document
        errors.append(f"dialog: {dialog.message}")
        dialog.dismiss()

    pg.on("dialog", on_dialog)
    pg.add_init_script("window.__pwned = undefined")
    yield pg
    ctx.close()
    # Shown with a failure only (captured): what the API and the worker were doing.
    print(stack_report(stack))
    assert not errors, f"errors in the page: {errors}"
