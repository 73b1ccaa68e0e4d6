"""Office files seen as the original in Chromium: a Word page and a slide, uploaded through
nginx and rendered by LibreOffice at ingest, are drawn by pdf.js from their rendition with the
cited passage marked on the text layer."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.conftest import DOCS
from tests.e2e.browser_helpers import built_spa
from tests.e2e.stack import Stack, run_stack
from tests.e2e.test_browser import a_sentence, shot, upload_ready

DOCX = DOCS / "office" / "docx" / "halfmoonbay-adu-code-ch18-33.docx"
PPTX = DOCS / "office" / "pptx" / "fpbench-benchmark-format-talk.pptx"


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
