"""A PDF table in a real browser (Chromium, pdf.js, the whole stack): a fact in a table's row
is quoted with its headers, and the citation's highlight lands on that row's cells in the
rendered page (riscv-abi-spec-v1.0.pdf, Table 17 on page 42: DT_RISCV_VARIANT_CC's value)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from playwright.sync_api import Page, expect

from tests.conftest import DOCS
from tests.e2e.browser_helpers import ARTIFACTS, built_spa
from tests.e2e.stack import Stack, run_stack
from tests.e2e.test_browser import ask, overlap, upload_ready

pytestmark = pytest.mark.slow

SPEC = DOCS / "pdf" / "riscv-abi-spec-v1.0.pdf"  # 56 pages, a few scanned-looking ones OCRed
ROW = (
    "Name: DT_RISCV_VARIANT_CC · Value: 0x70000001 · d_un: d_val · Executable: Platform "
    "specific · Shared Object: Platform specific"
)
CELLS = ["DT_RISCV_VARIANT_CC", "0x70000001", "d_val", "Platform specific", "Platform specific"]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("tables")
    with run_stack(tmp, dist=built_spa(), QUIRE_LLM_BACKENDS="none") as s:
        yield s


@pytest.mark.timeout(900)
def test_a_table_row_is_quoted_with_its_headers_and_highlighted_on_its_cells(
    page: Page, stack: Stack
) -> None:
    pg = page
    doc_id = upload_ready(stack, SPEC, timeout_s=600)
    pg.goto("/chat")
    ask(pg, "What value does the DT_RISCV_VARIANT_CC dynamic tag have?")
    answer = pg.locator('[data-testid="answer"]').last
    # The row is quoted whole, each value with its header.
    expect(answer).to_contain_text(ROW)
    # Its citation opens page 42. (A source's link carries one quote, the first taken from its
    # passage; the row is highlighted when it is that quote, as here.)
    links = [c.get_attribute("href") or "" for c in answer.locator("a.cite").all()]
    cited = next(h for h in links if re.match(rf"^/library/{doc_id}/pages/42\?", h))
    query = parse_qs(urlsplit(cited).query)
    query["quote"] = [ROW]
    pg.goto(urlsplit(cited).path + "?" + urlencode(query, doseq=True))
    pdf_page = pg.get_by_test_id("pdf-page")
    expect(pdf_page).to_have_attribute("data-state", "ready", timeout=60_000)
    expect(pdf_page).to_have_attribute("data-match", "text")
    marks = pg.locator(".textLayer mark.pdf-hl.quote")
    expect(marks.first).to_be_in_viewport()
    # The row's own cells, left to right on one line: not the header row above it.
    texts = [m.evaluate("m => m.textContent") for m in marks.all()]
    assert texts == CELLS, texts
    canvas = pdf_page.locator("canvas").bounding_box()
    boxes = [m.bounding_box() for m in marks.all()]
    assert canvas
    for mark, box in zip(marks.all(), boxes, strict=True):
        span = mark.locator("xpath=..").bounding_box()
        assert box and span and overlap(box, span) > 0.5 and overlap(box, canvas) > 0.99
    centres = [b["y"] + b["height"] / 2 for b in boxes if b]
    height = max(b["height"] for b in boxes if b)
    assert max(centres) - min(centres) < height / 2, centres
    lefts = [b["x"] for b in boxes if b]
    assert lefts == sorted(lefts)
    header = pg.locator(".textLayer span", has_text="Shared Object").first.bounding_box()
    assert header and header["y"] + header["height"] <= min(centres)  # under the header row
    pg.screenshot(path=str(ARTIFACTS / "source-pdf-table-row.png"))
