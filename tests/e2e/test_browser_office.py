"""Office files, page images and saved web pages seen as the original in Chromium: a Word page
and a slide, uploaded through nginx and rendered by LibreOffice at ingest, are drawn by pdf.js
from their rendition with the cited passage marked on the text layer; uploaded with a
photographed page through the web app, a question cites the slide and the photo, and each
citation opens its page with the quote marked. A saved web page's source view shows its stored
copy's text with the quote marked, and its "Open the original" link opens the live page (served
on 127.0.0.1) scrolled to the passage, painted as the text-fragment highlight."""

from __future__ import annotations

import io
import re
import threading
import time
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlencode

import httpx
import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import Page, expect

from quire.urls import text_fragment
from tests.conftest import DOCS
from tests.e2e.browser_helpers import ARTIFACTS, built_spa
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


# -- saved web pages: the stored copy in the source view, the live page at a text fragment ------
SRE = DOCS / "office" / "html" / "readability-google-sre-book-1.html"
SRE_QUOTE = "Your monitoring system should address two questions: what’s broken, and why?"
#: Paints the text fragment's highlight in a colour nothing else on the page has.
TARGET_TEXT = b"<style>::target-text { background-color: rgb(255, 0, 255); }</style>"


@pytest.fixture(scope="module")
def live_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The "live" page on a local server: a real saved page (the Google SRE chapter), as
    SingleFile saved it from this server's address."""
    root = tmp_path_factory.mktemp("live-site")
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietHandler, directory=str(root)))
    url = f"http://127.0.0.1:{server.server_port}/sre.html"
    mark = f"<!--\n Page saved with SingleFile \n url: {url} \n-->\n".encode()
    page = SRE.read_bytes().replace(b"</head>", TARGET_TEXT + b"</head>", 1)
    (root / "sre.html").write_bytes(mark + page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield url
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
        pass


def _highlighted(pg: Page, phrase: str) -> tuple[bool, int]:
    """Whether the text holding ``phrase`` is in the viewport, and how many of its pixels are
    painted in the ::target-text colour."""
    box = pg.evaluate(
        """(phrase) => {
          const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT)
          for (let n = walk.nextNode(); n; n = walk.nextNode()) {
            if (!n.textContent.includes(phrase)) continue
            const r = document.createRange()
            r.selectNodeContents(n)
            const b = r.getBoundingClientRect()
            return { x: b.left, y: b.top, width: b.width, height: b.height }
          }
          return null
        }""",
        phrase,
    )
    assert box, phrase
    height = pg.evaluate("window.innerHeight")
    visible = 0 <= box["y"] and box["y"] + box["height"] <= height
    if not visible:
        return False, 0
    pixels = np.asarray(Image.open(io.BytesIO(pg.screenshot(clip=box))).convert("RGB")).astype(int)
    r, g, b = pixels[..., 0], pixels[..., 1], pixels[..., 2]
    return True, int(((r > 200) & (g < 80) & (b > 200)).sum())


def test_a_saved_web_page_shows_its_stored_copy_and_opens_the_live_page_at_the_passage(
    page: Page, stack: Stack, live_site: str, tmp_path: Path
) -> None:
    """The source view of a saved page is its extracted text with the quote marked (never the
    page's HTML), with its site; "Open the original" is the live page's address with a text
    fragment, and Chromium scrolls that page to the passage and paints it as the highlight."""
    pg = page
    saved = tmp_path / "monitoring.html"
    saved.write_bytes(httpx.get(live_site, timeout=10).content)
    doc_id = upload_ready(stack, saved)
    doc = httpx.get(f"{stack.web}/api/documents/{doc_id}", timeout=10).json()
    assert (doc["kind"], doc["metadata"]["url"]) == ("web", live_site)
    pages = httpx.get(f"{stack.web}/api/documents/{doc_id}/pages", timeout=10).json()
    [number] = [p["page"] for p in pages["pages"] if p["heading_path"] == "Symptoms Versus Causes"]
    served = httpx.get(f"{stack.web}/api/documents/{doc_id}/pages/{number}", timeout=10).json()
    [chunk] = [c for c in served["chunks"] if SRE_QUOTE in c["text"]]
    pg.goto(
        f"/library/{doc_id}/pages/{number}?" + urlencode({"chunk": chunk["id"], "quote": SRE_QUOTE})
    )
    expect(pg.locator('[data-testid="page-text"] mark.quote')).to_have_text(SRE_QUOTE)
    expect(pg.get_by_test_id("web-meta")).to_have_text("127.0.0.1")
    # The section's heading is shown as one, inside the marked passage.
    expect(pg.locator('[data-testid="page-text"] .heading').first).to_have_text(
        "Symptoms Versus Causes"
    )
    # Sanitised text only: the page's own markup and scripts are nowhere in the view.
    assert pg.locator('[data-testid="page-text"] a, [data-testid="page-text"] script').count() == 0
    shot(pg, "source-web", full=False)
    live = pg.get_by_test_id("live-original")
    expect(live).to_have_text("Open the original ↗")
    href = live.get_attribute("href") or ""
    assert href == text_fragment(live_site, SRE_QUOTE), href

    opened = pg.context.new_page()
    try:
        opened.goto(live_site, wait_until="load")  # without the fragment: the top, no highlight
        assert opened.evaluate("window.scrollY") == 0
        assert _highlighted(opened, "two questions: what’s broken")[1] == 0
        with pg.context.expect_page() as popup:
            live.click()
        tab = popup.value
        tab.wait_for_load_state("load")
        deadline = time.monotonic() + 10
        while tab.evaluate("window.scrollY") < 1000 and time.monotonic() < deadline:
            tab.wait_for_timeout(100)
        visible, painted = _highlighted(tab, "two questions: what’s broken")
        assert visible, tab.evaluate("window.scrollY")
        assert painted > 200, painted
        tab.screenshot(path=str(ARTIFACTS / "live-web-text-fragment.png"))
        tab.close()
    finally:
        opened.close()
