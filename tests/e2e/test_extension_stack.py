"""End to end on the real stack (nginx serving the built web app, the API with a token, the
worker): the extension, loaded unpacked into Debian's Chromium, saves a real saved page with the
toolbar click, and the page is then found by search (a second click: already in the library);
the bookmarklet from the Settings page saves another through nginx's /save."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

import httpx
import pytest
from playwright.sync_api import Browser, sync_playwright

from tests.e2e.browser_helpers import built_spa
from tests.e2e.extension_helpers import (
    allow_site,
    click_action,
    extension_id,
    launch_with_extension,
    open_tab,
    saved_pages_site,
    settings_tab,
)
from tests.e2e.stack import Stack, run_stack, stack_report

pytestmark = pytest.mark.browser

TOKEN = "extension-stack-token"
V8 = "readability-v8-blog.html"
MOZILLA = "readability-mozilla-2.html"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with run_stack(
        tmp_path_factory.mktemp("stack"), dist=built_spa(), QUIRE_API_TOKEN=TOKEN
    ) as running:
        yield running


def ready(api: httpx.Client, stack: Stack, doc_id: int) -> dict[str, Any]:
    """The document once search can find it (bounded: 120 s)."""
    deadline = time.monotonic() + 120
    while (doc := api.get(f"/api/documents/{doc_id}").json())["status"] not in (
        "searchable",
        "ready",
        "failed",
    ):
        assert time.monotonic() < deadline, stack_report(stack)
        time.sleep(0.5)
    assert doc["status"] != "failed", doc["error"]
    return doc


def assert_found(api: httpx.Client, query: str, doc_id: int) -> None:
    hits = api.post("/api/search", json={"query": query}).json()["hits"]
    assert hits and hits[0]["document_id"] == doc_id, hits[:2]


def test_a_page_saved_by_the_extension_is_found_by_search(
    stack: Stack, tmp_path_factory: pytest.TempPathFactory
) -> None:
    api = httpx.Client(base_url=stack.web, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
    with saved_pages_site() as (site, _), sync_playwright() as pw, api:
        ctx = launch_with_extension(pw, tmp_path_factory.mktemp("extension-profile"))
        try:
            ext = extension_id(ctx)
            options = settings_tab(ctx, ext)
            assert options is not None
            allow_site(ctx, ext, stack.web + "/*")
            options.fill("#server", stack.web)
            options.fill("#token", TOKEN)
            options.click("button[type=submit]")
            options.locator("#status").filter(has_text="Saved").wait_for()
            options.click("#test")
            options.locator("#status").filter(has_text="Connected").wait_for()
            assert "the token is accepted" in options.inner_text("#status")

            page, _ = open_tab(ctx, f"{site}/{V8}")
            popup = click_action(ctx, ext, page)
            shown = popup.wait_for_status(lambda s: s["state"] not in ("", "busy"), timeout_s=60)
            assert shown == {"text": "Saved", "state": "added"}, stack_report(stack)
            link = popup.evaluate("document.getElementById('open').href")
            popup.close()
            doc_id = int(link.rsplit("/", 1)[1])
            assert link == f"{stack.web}/library/{doc_id}"

            doc = ready(api, stack, doc_id)
            assert doc["kind"] == "web"
            assert doc["metadata"]["url"] == f"{site}/{V8}"
            assert doc["title"].startswith("Outside the web")

            assert_found(api, "standalone WebAssembly binaries Emscripten", doc_id)

            again = click_action(ctx, ext, page)
            shown = again.wait_for_status(lambda s: s["state"] not in ("", "busy"), timeout_s=60)
            assert shown == {"text": "Already in the library", "state": "unchanged"}
            again.close()
        finally:
            ctx.close()


def test_a_page_saved_by_the_bookmarklet_is_found_by_search(stack: Stack, browser: Browser) -> None:
    api = httpx.Client(base_url=stack.web, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
    ctx = browser.new_context()
    ctx.set_default_timeout(30_000)
    with saved_pages_site() as (site, _), api:
        try:
            settings = ctx.new_page()
            settings.goto(f"{stack.web}/settings")
            settings.evaluate("t => localStorage.setItem('quire.apiToken', t)", TOKEN)
            settings.reload()
            href = settings.get_attribute('[data-testid="bookmarklet"]', "href")
            assert href is not None

            page = ctx.new_page()
            page.goto(f"{site}/{MOZILLA}")
            with page.expect_popup() as opened:
                page.evaluate(unquote(href.removeprefix("javascript:")))
            popup = opened.value
            outcome = popup.locator('[data-testid="outcome"]')
            outcome.wait_for()
            assert outcome.inner_text() == "Saved", stack_report(stack)
            link = popup.get_attribute("a[href^='/library/']", "href")
            assert link is not None
            doc = ready(api, stack, int(link.rsplit("/", 1)[1]))
            assert doc["kind"] == "web" and doc["metadata"]["url"] == f"{site}/{MOZILLA}"
            assert_found(api, "the only browser made for developers", doc["id"])
        finally:
            ctx.close()
