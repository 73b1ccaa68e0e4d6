"""Office files and page images seen as the original in Chromium: a Word page and a slide,
uploaded through nginx and rendered by LibreOffice at ingest, are drawn by pdf.js from their
rendition with the cited passage marked on the text layer; uploaded with a photographed page
through the web app, a question cites the slide and the photo, and each citation opens its page
with the quote marked."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.conftest import DOCS
from tests.e2e.browser_helpers import built_spa
from tests.e2e.stack import Stack, run_stack
from tests.e2e.test_browser import a_sentence, ask, overlap, shot, upload_ready, wait_rows

DOCX = DOCS / "office" / "docx" / "halfmoonbay-adu-code-ch18-33.docx"
PPTX = DOCS / "office" / "pptx" / "fpbench-benchmark-format-talk.pptx"
PHOTO = DOCS / "office" / "images" / "linzensoep-typewriter-nl.png"  # a typed Dutch recipe


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("browser-office")
    with run_stack(tmp, dist=built_spa(), QUIRE_LLM_BACKENDS="none") as s:
        yield s


@pytest.mark.parametrize(("path", "page_no"), [(DOCX, 12), (PPTX, 3)], ids=["word", "slide"])
def test_an_office_page_is_shown_from_its_rendition(
    page: Page, stack: Stack, path: Path, page_no: int
) -> None:
    pg = page
    doc_id = upload_ready(stack, path, timeout_s=300)
    served = httpx.get(f"{stack.web}/api/documents/{doc_id}/pages/{page_no}", timeout=10).json()
    assert "rendition_page" in served["metadata"], served["metadata"]
    chunk = max(served["chunks"], key=lambda c: len(c["text"]))
    quote = a_sentence(chunk["text"], lo=30)
    pg.goto(
        f"/library/{doc_id}/pages/{page_no}?" + urlencode({"chunk": chunk["id"], "quote": quote})
    )
    pdf_page = pg.get_by_test_id("pdf-page")
    expect(pdf_page).to_have_attribute("data-state", "ready", timeout=30_000)
    expect(pdf_page).to_have_attribute("data-match", "text")
    assert pg.locator(".textLayer mark.pdf-hl").count() >= 1
    shot(pg, f"source-office-{path.suffix[1:]}", full=False)


def test_upload_office_files_and_a_photo_ask_and_open_the_cited_slide(
    page: Page, stack: Stack
) -> None:
    """Through the web app: a .docx, a .pptx and a photographed page uploaded together become
    ready; a question about a slide is answered with the slide cited by number, and the
    citation opens the slide drawn from its rendition with the quote marked; a question about
    the photo opens its page image with the quoted words boxed."""
    pg = page
    pg.goto("/")
    pg.get_by_role("link", name="Upload", exact=True).first.click()
    pg.locator('input[type="file"]').set_input_files([str(DOCX), str(PPTX), str(PHOTO)])
    # The Word file and the deck may be in the library already (the test above).
    seen = wait_rows(pg, 3, {"ready", "failed", "duplicate"}, 300)
    assert all(s[-1] in ("ready", "duplicate") for s in seen), seen
    shot(pg, "upload-office")

    pg.get_by_role("link", name="Chat", exact=True).click()
    ask(pg, "How many benchmarks does the FPBench benchmark suite have in total?")
    answer = pg.locator('[data-testid="answer"]').last
    expect(answer).to_contain_text("72 total benchmarks")
    cite = answer.locator("a.cite").first
    source = pg.locator(f"#source-{cite.get_attribute('data-n')}")
    expect(source).to_contain_text("slide 15")
    href = cite.get_attribute("href") or ""
    assert re.match(r"^/library/\d+/pages/15\?", href), href
    cite.click()
    expect(pg).to_have_url(re.compile(r"/library/\d+/pages/15\?chunk=\d+"))
    pdf_page = pg.get_by_test_id("pdf-page")
    expect(pdf_page).to_have_attribute("data-state", "ready", timeout=30_000)
    expect(pdf_page).to_have_attribute("data-match", "text")
    marks = pg.locator(".textLayer mark.pdf-hl.quote")
    expect(marks.first).to_be_in_viewport()
    assert "72" in "".join(marks.all_inner_texts()), marks.all_inner_texts()
    shot(pg, "source-slide-cited", full=False)

    pg.get_by_role("link", name="Chat", exact=True).click()
    ask(pg, "Hoe lang moeten de linzen weken voor deze linzensoep?")
    answer = pg.locator('[data-testid="answer"]').last
    expect(answer).to_contain_text("weken")
    answer.locator("a.cite").first.click()
    image = pg.get_by_test_id("image-page")
    expect(image).to_have_attribute("data-state", "ready", timeout=30_000)
    expect(image).to_have_attribute("data-match", "ocr")
    boxes = pg.locator(".ocr-box.quote")
    assert boxes.count() >= 2
    img = image.locator("img").bounding_box()
    for i in range(boxes.count()):
        box = boxes.nth(i).bounding_box()
        assert img and box and overlap(box, img) > 0.99, (box, img)
    shot(pg, "source-photo-cited", full=False)
