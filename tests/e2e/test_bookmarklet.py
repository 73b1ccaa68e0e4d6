"""The "Save to Quire" bookmarklet in Debian's Chromium: taken from the built web app's Settings
page, run on a real saved page served by another site, it opens the app's /save, which posts
the page with the app's token. The app is frontend/dist served by the fake Quire of
tests/fakes/quire_save.py (the contract's POST /api/documents/url, every request recorded).
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import unquote

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Request

from tests.e2e.browser_helpers import built_spa
from tests.e2e.extension_helpers import saved_pages_site
from tests.fakes.quire_save import FakeQuire

TOKEN = "bookmarklet-test-token"
V8 = "readability-v8-blog.html"
V8_TEXT = "standalone WebAssembly binaries"


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    with saved_pages_site() as (base, _):
        yield base


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeQuire]:
    with FakeQuire(token=TOKEN, dist=built_spa()) as server:
        yield server


@pytest.fixture
def ctx(browser: Browser) -> Iterator[BrowserContext]:
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    context.set_default_timeout(20_000)
    yield context
    context.close()


def bookmarklet(ctx: BrowserContext, app: str) -> str:
    """The bookmark as the Settings page offers it, once this browser holds the token."""
    page = ctx.new_page()
    page.goto(f"{app}/settings")
    page.evaluate("t => localStorage.setItem('quire.apiToken', t)", TOKEN)
    page.reload()
    href = page.get_attribute('[data-testid="bookmarklet"]', "href")
    page.close()
    assert href is not None and href.startswith("javascript:")
    return href


def run_from(page: Page, href: str) -> Page:
    """Click the bookmark on ``page``: its code runs in the page, and opens the save window."""
    with page.expect_popup() as opened:
        page.evaluate(unquote(href.removeprefix("javascript:")))
    return opened.value


def test_the_bookmarklet_saves_the_page_without_showing_it_the_token(
    ctx: BrowserContext, fake: FakeQuire, site: str
) -> None:
    href = bookmarklet(ctx, fake.url)
    assert TOKEN not in unquote(href)
    page = ctx.new_page()
    seen: list[Request] = []
    page.on("request", lambda r: seen.append(r))
    page.goto(f"{site}/{V8}")
    before = len(fake.saves())

    popup = run_from(page, href)
    outcome = popup.locator('[data-testid="outcome"]')
    outcome.wait_for()
    assert outcome.inner_text() == "Saved"
    assert popup.url == f"{fake.url}/save"

    (request,) = [r for r in fake.requests if r.path == "/api/documents/url"][before:]
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["origin"] == fake.url  # sent by Quire's own page
    body = request.json()
    assert body["url"] == f"{site}/{V8}"
    assert body["title"] == page.title()
    assert V8_TEXT in body["html"] and '<meta charset="utf-8">' in body["html"]
    # The visited page made no request to Quire, and none of its requests carried the token.
    assert not [r.url for r in seen if r.url.startswith(fake.url)]
    assert not [r.url for r in seen if TOKEN in str(r.headers)]

    # Again: the bookmarklet reuses its window (named "quire-save"), which loads /save anew.
    with popup.expect_event("load"):
        page.evaluate(unquote(href.removeprefix("javascript:")))
    outcome.wait_for()
    assert outcome.inner_text() == "Already in the library"


def test_a_page_that_opens_save_itself_is_only_offered(
    ctx: BrowserContext, fake: FakeQuire, site: str
) -> None:
    bookmarklet(ctx, fake.url)  # this browser has a key and a token
    page = ctx.new_page()
    page.goto(f"{site}/{V8}")
    saves = len(fake.saves())
    # A hostile page imitating the bookmarklet: it cannot know this browser's key.
    with page.expect_popup() as opened:
        page.evaluate(
            """app => {
              const w = window.open(app + '/save', 'x', 'popup')
              addEventListener('message', (e) => {
                if (e.source === w) w.postMessage({type: 'quire-save', key: 'guess',
                  url: location.href, title: 'spam', html: '<p>spam</p>'}, app)
              })
            }""",
            fake.url,
        )
    popup = opened.value
    popup.locator('[data-testid="confirm"]').wait_for()
    popup.wait_for_timeout(300)
    assert len(fake.saves()) == saves
