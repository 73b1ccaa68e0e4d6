"""One way to name a place, seen in Chromium at desktop and phone widths (issue 36, item 5):
a citation's source card, the source view's breadcrumb and header, and the answer copied as
Markdown all show the same place string; the document page says its facts in words, lists its
outline as linked entries, and jumps to a page by its printed number."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.conftest import DOCS
from tests.e2e.browser_helpers import built_spa
from tests.e2e.stack import Stack, run_stack
from tests.e2e.test_browser import ask, shot, upload_ready

SPEC = DOCS / "pdf" / "riscv-abi-spec-v1.0.pdf"  # /PageLabels i–iii, then 1–53 (printed + 3)
ALICE = DOCS / "epub" / "alice-epub3.epub"
VIEWPORTS = {"desktop": {"width": 1280, "height": 860}, "phone": {"width": 390, "height": 844}}
INTERNAL_KEYS = ("page_count", "rebuilt_xref", "outline_entries", "page_labels", "ocr_pages")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("browser-places")
    with run_stack(tmp, dist=built_spa(), QUIRE_LLM_BACKENDS="none") as s:
        yield s


@pytest.fixture(scope="module")
def library(stack: Stack) -> dict[str, int]:
    return {"spec": upload_ready(stack, SPEC, timeout_s=300), "alice": upload_ready(stack, ALICE)}


@pytest.fixture(params=VIEWPORTS)
def screen(request: pytest.FixtureRequest, page: Page) -> str:
    """Each test at a desktop and at a phone width."""
    page.set_viewport_size(VIEWPORTS[request.param])
    return str(request.param)


def _fits(pg: Page) -> None:
    width = pg.viewport_size["width"] if pg.viewport_size else 1280
    assert pg.evaluate("document.documentElement.scrollWidth") <= width + 2


def test_a_citation_is_named_the_same_on_the_card_the_page_and_the_export(
    page: Page, stack: Stack, library: dict[str, int], screen: str
) -> None:
    pg = page
    pg.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=stack.web)
    pg.goto("/chat")
    ask(pg, "How is the stack pointer aligned in the ILP32E calling convention?")
    card = pg.locator('[data-testid="source"].cited').first
    card.scroll_into_view_if_needed()
    expect(card).to_be_visible()
    place = card.get_by_test_id("place").inner_text().strip()
    assert re.fullmatch(r"p\. (\d+|[ivx]+) \(PDF p\. \d+\)", place), place
    printed, physical = re.findall(r"[\dixv]+", place.replace("PDF p.", ""))[:2]
    if printed.isdigit():
        assert int(physical) - int(printed) == 3, place  # the spec's offset

    # The answer copied as Markdown names it the same way.
    pg.get_by_role("button", name="Copy as Markdown").last.click()
    expect(pg.get_by_text("Copied as Markdown")).to_be_visible()
    markdown = pg.evaluate("navigator.clipboard.readText()")
    assert f"{place}," in markdown or f"{place}." in markdown, markdown

    # So do the source view's breadcrumb and header.
    card.get_by_role("link", name="Show in page").click()
    expect(pg).to_have_url(re.compile(rf"/library/{library['spec']}/pages/{physical}\?"))
    expect(pg.get_by_test_id("crumb-place")).to_have_text(place)
    expect(pg.locator("header").get_by_test_id("place")).to_have_text(place)
    expect(pg.get_by_text("Page " + physical, exact=True)).to_have_count(0)
    _fits(pg)
    shot(pg, f"places-source-{screen}", full=False)


def test_the_document_page_in_plain_words(page: Page, library: dict[str, int], screen: str) -> None:
    pg = page
    spec = library["spec"]
    pg.goto(f"/library/{spec}")
    expect(pg.get_by_test_id("size")).to_have_text(re.compile(r"^56 pages · \d[\d,]* passages$"))
    body = pg.locator("main").inner_text()
    for key in INTERNAL_KEYS:
        assert key not in body, key

    # The outline is the page list: linked entries, each with its place.
    entries = pg.get_by_test_id("outline").locator("li")
    expect(entries.first).to_be_visible()
    assert entries.count() >= 30
    contents = entries.filter(has_text="Table of Contents")
    expect(contents.get_by_test_id("place")).to_have_text("p. ii (PDF p. 2)")
    expect(contents.get_by_role("link")).to_have_attribute("href", f"/library/{spec}/pages/2")
    preamble = entries.filter(has_text="Preamble").first
    expect(preamble.get_by_test_id("place")).to_have_text("p. 1 (PDF p. 4)")
    _fits(pg)
    shot(pg, f"places-document-{screen}")

    # Jump to a page by its printed number, then by its printed roman numeral.
    pg.get_by_label("Go to page").fill("11")
    pg.get_by_role("button", name="Go", exact=True).click()
    expect(pg).to_have_url(re.compile(rf"/library/{spec}/pages/14$"))
    expect(pg.get_by_test_id("crumb-place")).to_have_text("p. 11 (PDF p. 14)")
    pg.go_back()
    pg.get_by_label("Go to page").fill("ii")
    pg.get_by_label("Go to page").press("Enter")
    expect(pg).to_have_url(re.compile(rf"/library/{spec}/pages/2$"))
    expect(pg.locator("header").get_by_test_id("place")).to_have_text("p. ii (PDF p. 2)")
    pg.go_back()
    pg.get_by_label("Go to page").fill("cxx")
    pg.get_by_label("Go to page").press("Enter")
    expect(pg.get_by_role("alert")).to_contain_text("No page “cxx”")

    # An EPUB's chapters, named by their titles, in its outline and its source view.
    pg.goto(f"/library/{library['alice']}")
    rabbit = pg.get_by_test_id("outline").get_by_role("link", name="Down The Rabbit-Hole")
    expect(rabbit).to_be_visible()
    rabbit.click()
    expect(pg.get_by_test_id("crumb-place")).to_have_text("Down The Rabbit-Hole")
    _fits(pg)
