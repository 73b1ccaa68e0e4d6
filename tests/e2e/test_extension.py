"""The "Save to Quire" extension (extension/) unpacked in Debian's Chromium, against a fake
Quire that answers as the contract of issue 35 says (tests/fakes/quire_save.py) and records
every request, and a local server of real saved pages on ``localhost``.

The click is the real one (Extensions.triggerAction: the toolbar button, which is what grants
activeTab); the popup is also opened as a page of its own (``popup.html?tab=ID``) where
Playwright sees every request it makes. The tests run in order on one browser profile.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import BrowserContext, Page, Request, sync_playwright

from tests.e2e.extension_helpers import (
    HTML,
    allow_site,
    click_action,
    extension_id,
    granted_origins,
    launch_with_extension,
    open_tab,
    saved_pages_site,
    settings_tab,
)
from tests.fakes.quire_save import FakeQuire

pytestmark = pytest.mark.browser

TOKEN = "extension-test-token"
V8 = "readability-v8-blog.html"
V8_TITLE = "Outside the web: standalone WebAssembly binaries using Emscripten · V8"
V8_TEXT = "standalone WebAssembly binaries"


@pytest.fixture(scope="module")
def site() -> Iterator[tuple[str, list[str]]]:
    with saved_pages_site() as served:
        yield served


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeQuire]:
    with FakeQuire(token=TOKEN) as server:
        yield server


class Profile:
    """The profile with the extension, and every request Playwright saw its pages make."""

    def __init__(self, ctx: BrowserContext) -> None:
        self.ctx = ctx
        self.id = extension_id(ctx)
        self.requests: list[tuple[str, str]] = []  # (the page or worker it came from, URL)
        ctx.on("request", self._record)

    def _record(self, request: Request) -> None:
        if request.service_worker:
            source = request.service_worker.url
        elif request.is_navigation_request():
            source = "navigation"  # a tab opened by the test (or the extension's own pages)
        else:
            source = request.frame.url
        self.requests.append((source, request.url))

    def url(self, page: str) -> str:
        return f"chrome-extension://{self.id}/{page}"

    def extension_requests(self) -> list[str]:
        """What the extension's own pages and worker asked for beyond their own files."""
        own = f"chrome-extension://{self.id}/"
        return [
            url for src, url in self.requests if src.startswith(own) and not url.startswith(own)
        ]

    def open_tab(self, url: str) -> tuple[Page, int]:
        return open_tab(self.ctx, url)

    def popup_page(self, tab: int) -> Page:
        """The popup as a page of its own, saving ``tab``; returns once it has an outcome."""
        page = self.ctx.new_page()
        page.goto(self.url(f"popup.html?tab={tab}"))
        settled(page)
        return page


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Profile]:
    with sync_playwright() as pw:
        ctx = launch_with_extension(pw, tmp_path_factory.mktemp("extension-profile"))
        try:
            yield Profile(ctx)
        finally:
            ctx.close()


def settled(popup: Page, state: str | None = None) -> str:
    """Wait until the popup shows an outcome (``state`` if given); its text."""
    want = f"[data-state={state}]" if state else "[data-state]:not([data-state=busy])"
    popup.locator(f"#status{want}").wait_for()
    return popup.inner_text("#status")


def configure(profile: Profile, server: str, token: str) -> Page:
    page = profile.ctx.new_page()
    page.goto(profile.url("options.html"))
    page.fill("#server", server)
    page.fill("#token", token)
    page.click("button[type=submit]")
    return page


def test_installing_opens_the_settings_and_sends_nothing(profile: Profile, fake: FakeQuire) -> None:
    assert settings_tab(profile.ctx, profile.id) is not None, [p.url for p in profile.ctx.pages]
    page = profile.ctx.new_page()
    page.goto(profile.url("popup.html"))
    assert page.inner_text("#status") == "Set the address of your Quire server first."
    assert page.is_visible("#settings")
    assert fake.requests == []
    assert profile.extension_requests() == []
    assert granted_origins(profile.ctx) == []


def test_settings_grant_the_server_and_nothing_else(profile: Profile, fake: FakeQuire) -> None:
    page = configure(profile, "ftp://files.example.org", TOKEN)
    assert "must start with https:// or http://" in page.inner_text("#status")
    page.close()

    pattern = fake.url + "/*"
    # What the person allowed: this server, and a server they used before.
    allow_site(profile.ctx, profile.id, pattern)
    allow_site(profile.ctx, profile.id, "https://old-quire.example.org/*")
    page = configure(profile, fake.url + "/", TOKEN)
    status = page.locator("#status")
    status.filter(has_text="Saved").wait_for()
    assert status.inner_text() == f"Saved. Pages are sent to {fake.url} and nowhere else."
    assert page.input_value("#server") == fake.url  # the trailing slash dropped
    assert granted_origins(profile.ctx) == [pattern]  # the old server's access given up
    assert page.is_hidden("#warning")  # http:// to 127.0.0.1: nothing leaves the machine
    assert fake.requests == []  # saving the settings calls nothing

    page.click("#test")
    status.filter(has_text="Connected").wait_for()
    assert status.inner_text() == "Connected to Quire 0.1.0; the token is accepted."
    health, probe = fake.requests
    assert (health.method, health.path) == ("GET", "/api/health")
    assert (probe.method, probe.path, probe.body) == ("POST", "/api/documents/url", b"{}")
    assert probe.headers["authorization"] == f"Bearer {TOKEN}"
    assert fake.saves() == [{}]  # the probe, refused as invalid: nothing stored
    assert fake.stored == {}


def test_a_wrong_token_is_told_apart(profile: Profile, fake: FakeQuire) -> None:
    page = configure(profile, fake.url, "not-the-token")
    page.locator("#status").filter(has_text="Saved").wait_for()
    page.click("#test")
    page.locator("#status").filter(has_text="token").wait_for()
    assert page.inner_text("#status") == (
        "the API token is not valid (check the token in the settings)"
    )
    page.close()
    configure(profile, fake.url, TOKEN).locator("#status").filter(has_text="Saved").wait_for()


def test_no_click_no_page(profile: Profile, fake: FakeQuire, site: tuple[str, list[str]]) -> None:
    base, _ = site
    _, tab = profile.open_tab(f"{base}/{V8}")
    saves = len(fake.saves())
    popup = profile.popup_page(tab)
    # Without the click there is no activeTab grant, and no host permission covers the site.
    assert popup.get_attribute("#status", "data-state") == "error"
    assert "does not let extensions read this page" in popup.inner_text("#status")
    assert len(fake.saves()) == saves


def test_the_click_saves_the_page_as_rendered(
    profile: Profile, fake: FakeQuire, site: tuple[str, list[str]]
) -> None:
    base, paths = site
    page, tab = profile.open_tab(f"{base}/{V8}#wasi")
    received = len(fake.requests)
    page.wait_for_timeout(500)
    assert len(fake.requests) == received, "something was sent before the click"

    popup = click_action(profile.ctx, profile.id, page)
    shown = popup.wait_for_status(lambda s: s["state"] not in ("", "busy"))
    assert shown == {"text": "Saved", "state": "added"}
    assert popup.evaluate("document.getElementById('open').href") == f"{fake.url}/library/1"
    popup.close()

    (request,) = fake.requests[received:]
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["origin"] == f"chrome-extension://{profile.id}"
    assert "cookie" not in request.headers
    body = request.json()
    assert set(body) == {"url", "html", "title"}
    assert body["url"] == f"{base}/{V8}"  # the "#wasi" part of the same page dropped
    assert body["title"] == V8_TITLE
    assert V8_TEXT in body["html"] and body["html"].startswith("<!DOCTYPE html>")
    assert body["html"].count('<meta charset="utf-8">') == 1
    assert "main.mjs" in (HTML / V8).read_text(encoding="utf-8")
    assert "<script" not in body["html"]  # the page's code is not its content

    # The same page again: the popup opened as a page, on the tab the click was granted for.
    again = profile.popup_page(tab)
    assert again.inner_text("#status") == "Already in the library"
    assert again.get_attribute("#status", "data-state") == "unchanged"

    # What the person sees changed (a script added text): the rendered page is what is sent.
    page.evaluate("document.body.insertAdjacentHTML('beforeend', '<p>Added after loading.</p>')")
    again.reload()
    assert settled(again, "updated") == "Updated"
    assert "<p>Added after loading.</p>" in fake.saves()[-1]["html"]

    fake.fail_next(413, "too_large", "the page is 61 MB, over the limit of 50 MB")
    again.reload()
    assert settled(again, "error") == "the page is 61 MB, over the limit of 50 MB"
    assert again.is_visible("#retry")
    assert fake.stored[f"{base}/{V8}"][0] == 1

    # Everything the extension's pages asked for went to the server, to its two routes.
    asked = profile.extension_requests()
    assert asked and all(
        url in (f"{fake.url}/api/documents/url", f"{fake.url}/api/health") for url in asked
    ), asked
    assert not any(
        p.startswith("/api/") for p in paths
    )  # the site never got a call meant for Quire


def test_a_page_in_another_charset_arrives_as_read(
    profile: Profile, fake: FakeQuire, site: tuple[str, list[str]]
) -> None:
    base, _ = site
    page, _ = profile.open_tab(f"{base}/latin1/readability-lemonde-1.html")
    assert page.evaluate("document.characterSet") == "windows-1252"
    popup = click_action(profile.ctx, profile.id, page)
    assert popup.wait_for_status(lambda s: s["state"] not in ("", "busy"))["state"] == "added"
    popup.close()
    html = fake.saves()[-1]["html"]
    original = (HTML / "readability-lemonde-1.html").read_text(encoding="utf-8")
    # A sentence with accents, read back from windows-1252 as the person sees it.
    assert "Les députés" in original and "Les députés" in html
    assert "windows-1252" not in html and '<meta charset="utf-8">' in html
