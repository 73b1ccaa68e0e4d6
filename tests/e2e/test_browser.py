"""The app in a real browser: Debian's Chromium (Playwright) against nginx + API + worker.

Upload a real PDF and EPUB and watch them become ready, ask a question and watch the cited
answer stream in, open a citation and find the passage highlighted on its page; a file that
cannot be read shows its error; markup inside a document never runs. Screenshots of every page
go to test-artifacts/screenshots/.
"""

from __future__ import annotations

import re
import time
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from playwright.sync_api import Browser, FloatRect, Page, expect

from tests.conftest import DOCS
from tests.e2e.browser_helpers import ARTIFACTS, built_spa, phone_page
from tests.e2e.stack import Stack, run_stack

pytestmark = pytest.mark.slow

PDF = DOCS / "pdf" / "dmca-summary.pdf"  # 18 pages, ~40 chunks
EPUB = DOCS / "epub" / "alice-epub3.epub"  # 11 sections, ~45 chunks
INGEST_S = 180

# Records, for the last answer on the page, each state the DOM passes through.
WATCH_ANSWER = """() => {
  window.__answerStates = [];
  const record = () => {
    const all = document.querySelectorAll('article.message.assistant');
    const last = all[all.length - 1];
    if (!last) return;
    const answer = last.querySelector('[data-testid="answer"]');
    window.__answerStates.push({
      busy: last.getAttribute('aria-busy') === 'true',
      chars: answer ? answer.textContent.length : 0,
      progress: !!document.querySelector('section.progress'),
    });
  };
  new MutationObserver(record).observe(document.body,
    {subtree: true, childList: true, characterData: true, attributes: true});
}"""


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    # No LLM: answers are extractive (quoted sentences with [n] citations), deterministic here.
    tmp = tmp_path_factory.mktemp("browser")
    with run_stack(tmp, dist=built_spa(), QUIRE_LLM_BACKENDS="none") as s:
        yield s


def shot(pg: Page, name: str, *, full: bool = True) -> None:
    if full:  # else: the viewport as the user sees it (e.g. scrolled to the highlight)
        pg.evaluate("window.scrollTo(0, 0)")
    pg.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=full)


def wait_rows(
    pg: Page, n: int, final: set[str], timeout_s: float, labels: set[str] | None = None
) -> list[list[str]]:
    """Wait until the last n upload rows reach a final phase; returns each row's phases seen
    (and adds each state line shown to ``labels``). Every poll also checks that a row being
    indexed shows one percentage, its bar's."""
    seen: list[list[str]] = [[] for _ in range(n)]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        rows: list[dict[str, Any]] = pg.eval_on_selector_all(
            '[data-testid="upload-row"]',
            """rows => rows.map(r => ({phase: r.dataset.phase,
                 label: r.querySelector('.state').textContent,
                 bar: r.querySelector('progress')?.value ?? null}))""",
        )[-n:]
        for i, row in enumerate(rows):
            if not seen[i] or seen[i][-1] != row["phase"]:
                seen[i].append(row["phase"])
            if labels is not None:
                labels.add(row["label"])
            shown = re.search(
                r"(?:Indexing: \w+|searchable by keywords · \w+) (\d+)%", row["label"]
            )
            if row["phase"] == "processing" and shown and row["bar"] is not None:
                assert abs(int(shown.group(1)) - row["bar"] * 100) <= 1, row
        if len(rows) == n and all(row["phase"] in final for row in rows):
            return seen
        time.sleep(0.05)
    raise AssertionError(f"uploads did not finish in {timeout_s:.0f} s: {seen}")


def ask(pg: Page, question: str) -> list[dict[str, Any]]:
    """Ask by keyboard; returns the DOM states the answer went through."""
    pg.evaluate(WATCH_ANSWER)
    # An extractive answer is written in milliseconds: at 16 KB/s its events reach the page in
    # several reads, as a model's tokens would, so the streamed rendering can be observed.
    cdp = pg.context.new_cdp_session(pg)
    cdp.send("Network.enable")
    cdp.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 0, "downloadThroughput": 16 * 1024, "uploadThroughput": -1},
    )
    box = pg.get_by_label("Your question")
    box.fill(question)
    box.press("Enter")
    answer = pg.locator('article.message.assistant[aria-busy="false"]').last
    expect(answer.locator("a.cite").first).to_be_visible(timeout=60_000)
    cdp.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
    )
    cdp.detach()
    states: list[dict[str, Any]] = pg.evaluate("window.__answerStates")
    return states


def test_upload_ask_and_open_the_cited_page(page: Page, stack: Stack) -> None:
    pg = page
    pg.goto("/")
    expect(pg).to_have_url(re.compile(r"/chat$"))
    expect(pg.get_by_text("Your library is empty")).to_be_visible()

    # Upload: a real PDF and EPUB; each row shows upload progress, then the ingest job live.
    pg.get_by_role("link", name="Upload", exact=True).first.click()
    pg.locator('input[type="file"]').set_input_files([str(PDF), str(EPUB)])
    labels: set[str] = set()
    seen = wait_rows(pg, 2, {"ready", "failed", "duplicate"}, INGEST_S, labels)
    assert [s[-1] for s in seen] == ["ready", "ready"], seen
    # The EPUB waited behind the PDF, saying so (one worker).
    assert any(label.startswith("Uploaded · next for the workers") for label in labels), labels
    for phases in seen:  # the job was followed while it ran, not only found finished
        assert "processing" in phases or "queued" in phases, seen
    expect(pg.get_by_text("Ready", exact=True)).to_have_count(2)
    shot(pg, "upload")

    # The same bytes again: reported as a duplicate, not ingested twice.
    pg.locator('input[type="file"]').set_input_files([str(PDF)])
    wait_rows(pg, 1, {"ready", "failed", "duplicate"}, 30)
    expect(pg.locator('[data-testid="upload-row"]').last).to_contain_text("Already in the library")

    # Library: both documents, ready, with their pages and chunks.
    pg.get_by_role("link", name="Library", exact=True).click()
    rows = pg.locator("table.docs tbody tr")
    expect(rows).to_have_count(2)
    pdf_row = rows.filter(has_text="dmca-summary.pdf")
    expect(pdf_row).to_contain_text("ready")
    expect(pdf_row.locator('td[data-label="Pages"]')).to_have_text("18")
    expect(rows.filter(has_text="alice-epub3.epub")).to_contain_text("epub")
    # Each document's detected language: its name in a badge, the tag in its title.
    badge = pdf_row.get_by_test_id("language")
    expect(badge).to_have_text("English")
    expect(badge).to_have_attribute("title", "en")
    # Where each came from (both uploaded here), and the source filter.
    expect(pdf_row.get_by_test_id("origin")).to_have_text("Upload")
    pg.get_by_test_id("origin-filter").select_option("upload")
    expect(rows).to_have_count(2)
    pg.get_by_test_id("origin-filter").select_option("")
    pg.get_by_label("Search the library").fill("alice")
    expect(rows).to_have_count(1)
    shot(pg, "library")
    pg.get_by_label("Search the library").fill("")

    # A document page says its size in words and lists its contents, each linked.
    pdf_row.get_by_role("link").first.click()
    expect(pg.get_by_test_id("size")).to_have_text(re.compile(r"^18 pages · \d+ passages$"))
    contents = pg.locator('[data-testid="outline"] a, [data-testid="page-grid"] a')
    expect(contents.first).to_have_attribute("href", re.compile(r"^/library/\d+/pages/\d+$"))
    shot(pg, "document")

    # Chat: the answer streams in (progress first, then text before it is finished), cited.
    pg.get_by_role("link", name="Chat", exact=True).click()
    states = ask(pg, "What does the DMCA say about safe harbors for online service providers?")
    assert any(s["busy"] and s["progress"] for s in states), "no progress shown while running"
    assert any(s["busy"] and s["chars"] > 0 for s in states), "the answer did not stream"
    assert states[-1]["chars"] > max(s["chars"] for s in states if s["busy"]) * 0.5
    answer = pg.locator('[data-testid="answer"]').last
    expect(pg.locator("article.message.assistant .mode").last).to_contain_text("Extractive")
    expect(pg.locator('[data-testid="source"]').first).to_be_visible()
    expect(pg).to_have_url(re.compile(r"/chat/\d+$"))
    expect(pg.locator("nav.conversations li")).to_have_count(1)
    shot(pg, "chat", full=False)

    # Feedback on the answer.
    pg.get_by_role("button", name="Helpful", exact=True).click()
    expect(pg.get_by_text("Thanks for the feedback.")).to_be_visible()

    # The citation opens the cited page with the passage highlighted.
    cite = answer.locator("a.cite").first
    href = cite.get_attribute("href") or ""
    m = re.match(r"^/library/(\d+)/pages/(\d+)\?", href)
    assert m, href
    doc_id, page_no = m.groups()
    source_n = cite.get_attribute("data-n")
    source = pg.locator(f"#source-{source_n}")
    cited_title = source.locator("a.title").inner_text()
    cited_place = source.get_by_test_id("place").inner_text()
    assert cited_place == f"p. {page_no}", cited_place  # the DMCA summary has no page labels
    cite.focus()
    pg.keyboard.press("Enter")
    expect(pg).to_have_url(re.compile(rf"/library/{doc_id}/pages/{page_no}\?chunk=\d+"))
    expect(pg.locator("h1")).to_have_text(cited_title)
    expect(pg.get_by_test_id("crumb-place")).to_have_text(cited_place)
    # A PDF opens on the rendered page with the passage marked on it; the text is a click away.
    expect(pg.get_by_test_id("pdf-page")).to_have_attribute("data-state", "ready")
    expect(pg.locator(".textLayer mark.pdf-hl").first).to_be_in_viewport()
    pg.get_by_role("button", name="Extracted text").click()
    passage = pg.locator("mark.passage").first
    expect(passage).to_be_visible()
    expect(passage).to_be_in_viewport()
    marked = "".join(pg.locator("mark.passage").all_inner_texts())
    assert len(marked) > 100, marked
    original = pg.get_by_test_id("original")
    expect(original).to_have_attribute("href", f"/api/documents/{doc_id}/file#page={page_no}")
    r = httpx.get(stack.web + f"/api/documents/{doc_id}/file", timeout=10)
    assert r.status_code == 200 and r.headers["content-type"] == "application/pdf"
    # The highlighted text is the text of that page, as the API serves it.
    text = httpx.get(stack.web + f"/api/documents/{doc_id}/pages/{page_no}", timeout=10).json()
    assert " ".join(marked.split())[:80] in " ".join(text["text"].split())
    shot(pg, "source", full=False)

    # Settings: extractive mode, the embedder, index sizes, the languages it covers.
    pg.get_by_role("link", name="Settings", exact=True).click()
    expect(pg.get_by_test_id("llm-mode")).to_contain_text("Extractive")
    expect(pg.get_by_test_id("embedder")).to_contain_text("MiniLM")
    languages = pg.get_by_test_id("languages")
    expect(languages.get_by_test_id("languages-embedder")).to_contain_text("MiniLM")
    english = languages.locator('tr[data-language="en"]')
    expect(english.locator("td").nth(1)).to_have_text("2")
    expect(english.get_by_test_id("covered")).to_have_text("✓ covered")
    # Sources: the two uploads; no watched folder, no import yet.
    sources = pg.get_by_test_id("sources")
    expect(sources.locator('tr[data-origin="upload"] td').nth(1)).to_have_text("2")
    expect(sources.get_by_test_id("folders-empty")).to_contain_text("QUIRE_WATCH_DIRS")
    expect(sources.get_by_test_id("imports-empty")).to_contain_text("quire import")
    shot(pg, "settings")

    # Phone width, dark theme: still readable, nothing wider than the screen.
    pg.set_viewport_size({"width": 390, "height": 844})
    pg.emulate_media(color_scheme="dark")
    for path, name in (("/library", "library-phone-dark"), ("/settings", "settings-phone-dark")):
        pg.goto(path)
        pg.wait_for_load_state("networkidle")
        assert pg.evaluate("document.documentElement.scrollWidth") <= 392, name
        shot(pg, name)
    pg.goto("/chat")
    pg.locator("summary", has_text="Conversations").click()  # folded on a phone
    pg.locator("nav.conversations li a").first.click()
    expect(pg.locator('[data-testid="answer"] a.cite').first).to_be_visible()
    assert pg.evaluate("document.documentElement.dataset.theme") == "dark"
    assert pg.evaluate("document.documentElement.scrollWidth") <= 392
    shot(pg, "chat-phone-dark", full=False)

    # A second question in the same conversation, on a desktop screen: it is brought into
    # view and the sources panel shows its answer's sources; clicking the first answer shows
    # that answer's own sources again.
    pg.set_viewport_size({"width": 1280, "height": 800})
    pg.emulate_media(color_scheme="light")
    ask(pg, "What did the White Rabbit take out of its waistcoat-pocket?")
    answers = pg.locator("article.message.assistant")
    expect(answers).to_have_count(2)
    expect(pg.locator("article.message.user").last).to_be_in_viewport()

    def panel_doc() -> str:
        return pg.locator('[data-testid="source"] a.title').first.get_attribute("href") or ""

    def cited_doc(i: int) -> str:
        return answers.nth(i).locator("a.cite").first.get_attribute("href") or ""

    def doc_of(href: str) -> str:
        return href.split("/pages/")[0]

    assert doc_of(panel_doc()) == doc_of(cited_doc(1)) != doc_of(cited_doc(0))
    expect(pg.get_by_test_id("sources-of")).to_have_count(0)
    answers.nth(0).locator(".meta").click()
    expect(pg.get_by_test_id("sources-of")).to_contain_text("earlier answer")
    assert doc_of(panel_doc()) == doc_of(cited_doc(0))
    pg.get_by_role("button", name="Show the latest").click()
    expect(pg.get_by_test_id("sources-of")).to_have_count(0)
    assert doc_of(panel_doc()) == doc_of(cited_doc(1))


def test_failed_uploads_show_their_error(page: Page, tmp_path: Path) -> None:
    exe = tmp_path / "setup.exe"
    exe.write_bytes(b"MZ\x90\x00" + b"\x00" * 2000)
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog >>\n" + b"\x00garbage" * 300)
    torn = tmp_path / "report.docx"  # a zip cut off after its first bytes
    torn.write_bytes(b"PK\x03\x04" + b"\x14\x00" * 40)
    page.goto("/upload")
    page.locator('input[type="file"]').set_input_files([str(exe), str(broken), str(torn)])
    seen = wait_rows(page, 3, {"ready", "failed", "duplicate"}, 120)
    assert [s[-1] for s in seen] == ["failed", "failed", "failed"], seen
    # The end of the upload says that nothing went in, and offers no question to ask.
    summary = page.get_by_test_id("upload-summary")
    expect(summary).to_have_text("None of the 3 files could be added: the reason is under each.")
    expect(summary.get_by_role("link")).to_have_count(0)
    rows = page.locator('[data-testid="upload-row"]')
    exe_error = rows.filter(has_text="setup.exe").get_by_test_id("upload-error")
    expect(exe_error).to_contain_text(re.compile("unsupported|not a supported", re.I))
    pdf_error = rows.filter(has_text="broken.pdf").get_by_test_id("upload-error")
    expect(pdf_error).not_to_be_empty()
    shot(page, "upload-errors")
    page.goto("/library")
    broken_row = page.locator("table.docs tbody tr").filter(has_text="broken.pdf")
    expect(broken_row).to_contain_text("failed")


PAYLOAD_DOC = """# Harbor log of the Zanzibar lighthouse

The Zanzibar lighthouse keeper wrote that the tide rose seven feet during the storm
<img src=x onerror="window.__pwned='img'"> and <script>window.__pwned='script'</script>
while the lamp stayed lit all night.

The keeper also noted a ship called <b onmouseover="window.__pwned='b'">Marigold</b>
anchoring near the reef at dawn.
"""


def test_markup_in_a_document_never_runs(page: Page) -> None:
    pg = page
    pg.goto("/upload")
    # Drag and drop, as a user would.
    transfer = pg.evaluate_handle(
        """text => { const dt = new DataTransfer();
                     dt.items.add(new File([text], 'zanzibar-log.md', {type: 'text/markdown'}));
                     return dt; }""",
        PAYLOAD_DOC,
    )
    pg.dispatch_event('[data-testid="dropzone"]', "drop", {"dataTransfer": transfer})
    seen = wait_rows(pg, 1, {"ready", "failed", "duplicate"}, 60)
    assert seen[0][-1] == "ready", seen

    pg.goto("/chat")
    pg.get_by_text("Options").click()
    picker = pg.get_by_test_id("document-filter")
    picker.get_by_label("Find a document to search in").fill("zanzibar")
    picker.get_by_label("Harbor log of the Zanzibar lighthouse").check()
    ask(pg, "What did the Zanzibar lighthouse keeper write about the tide during the storm?")
    answer = pg.locator('[data-testid="answer"]').last
    assert answer.locator("script, img, [onerror], [onmouseover]").count() == 0
    pg.locator('[data-testid="source"]').first.locator("a.title").click()
    text = pg.get_by_test_id("page-text")
    expect(text).to_contain_text("""<img src=x onerror="window.__pwned='img'">""")
    expect(text).to_contain_text("<script>window.__pwned='script'</script>")
    assert text.locator("script, img, b").count() == 0
    pg.locator("mark.passage").first.hover()
    assert pg.evaluate("window.__pwned") is None


def test_a_server_with_an_api_token(browser: Browser, tmp_path: Path) -> None:
    """The app asks for the token once, then sends it everywhere: API calls, uploads, the job
    stream, and the original file (fetched with the header, opened from a blob URL)."""
    with run_stack(tmp_path, dist=built_spa(), QUIRE_API_TOKEN="e2e-token-0123456789abc") as s:
        ctx = browser.new_context(base_url=s.web, viewport={"width": 1280, "height": 860})
        ctx.set_default_timeout(20_000)
        pg = ctx.new_page()
        pg.goto("/library")
        expect(pg.get_by_role("alertdialog")).to_contain_text("needs its API token")
        shot(pg, "token-prompt")
        pg.get_by_role("textbox", name="API token").fill("e2e-token-0123456789abc")
        pg.get_by_role("button", name="Save").click()
        expect(pg.get_by_text("Nothing here yet")).to_be_visible()
        expect(pg.get_by_role("alertdialog")).to_have_count(0)

        note = tmp_path / "tide-note.md"
        note.write_text("# Tide note\n\nThe tide at Brest rose 7.4 metres on the equinox.\n")
        pg.goto("/upload")
        pg.locator('input[type="file"]').set_input_files([str(note)])
        seen = wait_rows(pg, 1, {"ready", "failed", "duplicate"}, 60)
        assert seen[0][-1] == "ready", seen

        pg.locator('[data-testid="upload-row"]').get_by_role("link", name="Open").click()
        expect(pg.locator("h1")).to_have_text("Tide note")
        with ctx.expect_page() as opened:
            pg.get_by_role("link", name="Original file").click()
        original = opened.value
        original.wait_for_url(re.compile(r"^blob:"))
        expect(original.locator("body")).to_contain_text("The tide at Brest rose 7.4 metres")
        ctx.close()


SCAN = DOCS / "pdf" / "scan-grumman-175.pdf"  # 2 scanned pages, OCR'd at ingest

Box = FloatRect


def loose(text: str) -> str:
    """Letters and digits only, accents off, lower case: as the viewer's loose matching."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if c.isalnum()).lower()


def overlap(a: Box, b: Box) -> float:
    """The share of box a's area that lies inside box b."""
    w = min(a["x"] + a["width"], b["x"] + b["width"]) - max(a["x"], b["x"])
    h = min(a["y"] + a["height"], b["y"] + b["height"]) - max(a["y"], b["y"])
    return max(0.0, w) * max(0.0, h) / max(a["width"] * a["height"], 1e-9)


def upload_ready(stack: Stack, path: Path, timeout_s: float = INGEST_S) -> int:
    """Upload through nginx (or find the document already there) and wait until it is ready."""
    with path.open("rb") as f:
        r = httpx.post(
            f"{stack.web}/api/documents",
            files={"files": (path.name, f, "application/pdf")},
            timeout=60,
        )
    r.raise_for_status()
    doc_id = int(r.json()["files"][0]["document_id"])
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = httpx.get(f"{stack.web}/api/documents/{doc_id}", timeout=10).json()["status"]
        assert status != "failed", f"{path.name} failed to ingest"
        if status == "ready":
            return doc_id
        time.sleep(0.5)
    raise AssertionError(f"{path.name} was not ready in {timeout_s:.0f} s")


def a_sentence(text: str, lo: int = 60, hi: int = 260, *, prose: bool = False) -> str:
    """A whole sentence of a chunk, as an extractive answer quotes one: the one over most
    lines, or (``prose``) the one most like running text, not a table's cells."""
    sentences = [s.strip() for s in re.split(r"(?<=[.;:!?])\s+", text)]
    fits = [s for s in sentences if lo <= len(s) <= hi and len(loose(s)) >= lo * 0.7]
    assert fits, text
    if prose:
        return max(fits, key=lambda s: sum(c.islower() for c in s) / len(s))
    return max(fits, key=lambda s: (s.count("\n"), len(s)))


def test_pdf_page_rendered_with_the_quote_highlighted(page: Page, stack: Stack) -> None:
    """pdf.js draws the cited page; the quote is marked inside the text-layer spans of its
    words (box geometry), scrolled into view; the worker comes from our origin as JavaScript."""
    pg = page
    doc_id = upload_ready(stack, PDF)
    page_no = 3
    served = httpx.get(f"{stack.web}/api/documents/{doc_id}/pages/{page_no}", timeout=10).json()
    chunk = max(served["chunks"], key=lambda c: len(c["text"]))
    quote = a_sentence(chunk["text"])
    pg.goto(
        f"/library/{doc_id}/pages/{page_no}?" + urlencode({"chunk": chunk["id"], "quote": quote})
    )
    pdf_page = pg.get_by_test_id("pdf-page")
    expect(pdf_page).to_have_attribute("data-state", "ready", timeout=30_000)
    expect(pdf_page).to_have_attribute("data-match", "text")
    expect(pg.get_by_test_id("not-found")).to_have_count(0)

    canvas = pdf_page.locator("canvas").bounding_box()
    assert canvas and canvas["width"] > 500 and canvas["height"] > 600, canvas
    marks = pg.locator(".textLayer mark.pdf-hl.quote")
    assert marks.count() >= 1
    expect(marks.first).to_be_in_viewport()
    quote_loose = loose(quote)
    marked = ""
    for i in range(marks.count()):
        mark = marks.nth(i)
        box = mark.bounding_box()
        span = mark.locator("xpath=..")
        span_box = span.bounding_box()
        assert box and span_box and box["width"] > 1 and box["height"] > 4, (box, span_box)
        # On the span that holds the quoted word, and on the rendered page.
        assert overlap(box, span_box) > 0.5, (mark.inner_text(), box, span_box)
        assert overlap(box, canvas) > 0.99, (box, canvas)
        text = mark.evaluate("m => m.textContent")
        assert loose(text) in quote_loose, text
        marked += text
    # Every word of the quote is marked, and nothing else.
    assert loose(marked) == quote_loose, (marked, quote)
    # Every text-layer span made only of the quote's words (its middle lines) carries a mark.
    spans = pg.locator(".textLayer span[role=presentation]")
    covered = 0
    for i in range(spans.count()):
        span = spans.nth(i)
        own = loose(span.evaluate("s => s.textContent"))
        if len(own) >= 12 and own in quote_loose:
            span_box = span.bounding_box()
            boxes = [b for b in (m.bounding_box() for m in span.locator("mark.quote").all()) if b]
            assert span_box and any(overlap(b, span_box) > 0.5 for b in boxes), own
            covered += 1
    assert covered >= 1
    # pdf.js's glyph-measuring canvas on <body> stays hidden, as its own viewer's CSS keeps it.
    expect(pg.locator("body > canvas.hiddenCanvasElement")).to_be_hidden()
    shot(pg, "source-pdf-highlight", full=False)

    # pdf.js's worker: a module from our own /assets/, served as JavaScript (not octet-stream).
    workers = pg.evaluate(
        "performance.getEntriesByType('resource').map(e => e.name)"
        ".filter(n => n.includes('pdf.worker'))"
    )
    assert workers and all(w.startswith(stack.web + "/assets/") for w in workers), workers
    r = httpx.get(workers[0], timeout=10)
    assert r.headers["content-type"].startswith(("application/javascript", "text/javascript"))

    # The text view stays a click away, with the same quote marked.
    pg.get_by_role("button", name="Extracted text").click()
    expect(pg.locator("mark.quote").first).to_be_visible()
    expect(pdf_page).to_have_count(0)


def test_scanned_page_highlighted_over_its_ocr_words(page: Page, stack: Stack) -> None:
    """A scan has no text layer: the quote's OCR words (tesseract's boxes, in points from the
    page's top-left) are drawn as boxes over the canvas."""
    pg = page
    doc_id = upload_ready(stack, SCAN, timeout_s=300)
    served = httpx.get(f"{stack.web}/api/documents/{doc_id}/pages/1", timeout=10).json()
    assert served["source"] == "ocr", served["source"]
    ocr = served["metadata"].get("ocr_words")
    assert ocr, "page metadata has no ocr_words (the OCR step keeps tesseract's word boxes)"
    chunk = max(served["chunks"], key=lambda c: len(c["text"]))
    quote = a_sentence(chunk["text"], lo=40, prose=True)
    pg.goto(f"/library/{doc_id}/pages/1?" + urlencode({"chunk": chunk["id"], "quote": quote}))
    pdf_page = pg.get_by_test_id("pdf-page")
    expect(pdf_page).to_have_attribute("data-state", "ready", timeout=30_000)
    expect(pdf_page).to_have_attribute("data-match", "ocr")

    canvas = pdf_page.locator("canvas").bounding_box()
    assert canvas, "no canvas"
    sx, sy = canvas["width"] / ocr["width"], canvas["height"] / ocr["height"]
    words = [
        {
            "text": w[4],
            "box": FloatRect(
                x=canvas["x"] + w[0] * sx,
                y=canvas["y"] + w[1] * sy,
                width=(w[2] - w[0]) * sx,
                height=(w[3] - w[1]) * sy,
            ),
        }
        for w in ocr["words"]
    ]
    boxes = pg.locator(".ocr-box.quote")
    assert boxes.count() >= 3
    expect(boxes.first).to_be_in_viewport()
    quote_loose = loose(quote)
    hit_words = ""
    for i in range(boxes.count()):
        box = boxes.nth(i).bounding_box()
        assert box and overlap(box, canvas) > 0.99, (box, canvas)
        under = [w for w in words if overlap(box, w["box"]) > 0.5]
        assert under, box
        # The box is over an OCR word of the quote.
        assert any(loose(w["text"]) in quote_loose for w in under), (under, quote)
        hit_words += "".join(w["text"] for w in under)
    # Together the boxes cover the quoted sentence.
    assert len(loose(hit_words)) >= 0.9 * len(quote_loose), (hit_words, quote)
    shot(pg, "source-scan-highlight", full=False)


def test_the_first_hour_on_a_phone(browser: Browser, stack: Stack, tmp_path: Path) -> None:
    """Issue 36's items 3, 4 and 6 at a phone's size: an upload queued behind another says its
    place, the percentage beside a bar is the bar's; each new question is brought into view; an
    older answer's citation opens its own source; a question over the limit or an empty one is
    explained, not sent; an LLM that is not there is offered disabled, with the reason; the
    document picker is searched; Sync without a login and Delete stand apart."""
    pdf_id = upload_ready(stack, PDF)
    upload_ready(stack, EPUB)
    pg, errors = phone_page(browser, stack.web)

    def fits() -> None:
        assert pg.evaluate("document.documentElement.scrollWidth") <= 392, pg.url

    # Three files at once behind one worker: the later ones say how many files are ahead, and
    # while one is indexed the percentage its row shows is its bar's.
    note = tmp_path / "harbor-notes.md"
    note.write_text("# Harbor notes\n\nThe Marigold anchored near the reef at dawn.\n")
    pg.goto("/upload")
    files = [DOCS / "pdf" / "naacl06-shinyama.pdf", DOCS / "pdf" / "riscv-abi-spec-v1.0.pdf", note]
    pg.locator('input[type="file"]').set_input_files([str(f) for f in files])
    labels: set[str] = set()
    seen = wait_rows(pg, 3, {"ready", "failed", "duplicate"}, INGEST_S, labels)
    assert [s[-1] for s in seen] == ["ready"] * 3, seen
    assert any(label.startswith("Uploaded · 1 file ahead") for label in labels), labels
    assert not any("queued" in label for label in labels), labels
    assert any("Indexing" in label or "searchable" in label for label in labels), labels
    expect(pg.get_by_test_id("upload-summary")).to_contain_text("3")
    fits()

    # Two questions: each is scrolled into view as it is asked.
    pg.goto("/chat")
    for question in (
        "What does the DMCA say about safe harbors for online service providers?",
        "What did the White Rabbit take out of its waistcoat-pocket?",
    ):
        box = pg.get_by_label("Your question")
        box.fill(question)
        box.press("Enter")
        asked = pg.locator("article.message.user").last
        expect(asked).to_have_text(re.compile(re.escape(question[:30])))
        expect(asked).to_be_in_viewport()
        answer = pg.locator('article.message.assistant[aria-busy="false"]').last
        expect(answer.locator("a.cite").first).to_be_visible(timeout=60_000)
    answers = pg.locator("article.message.assistant")
    expect(answers).to_have_count(2)
    fits()
    # One notice for the whole answer, linking to the setting, no backend error in it, nor in
    # its Markdown export.
    first = answers.nth(0)
    assert "unreachable" not in first.inner_text() and "ollama" not in first.inner_text().lower()
    expect(first.locator('a[href="/settings#s-answer"]')).to_have_count(1)
    assert first.inner_text().count("Extractive answer") == 1
    conversation = pg.url.rsplit("/", 1)[-1]
    turns = httpx.get(f"{stack.web}/api/conversations/{conversation}", timeout=10).json()
    answer_id = next(m["id"] for m in turns["messages"] if m["role"] == "assistant")
    exported = httpx.get(f"{stack.web}/api/messages/{answer_id}/export", timeout=10).text
    assert exported.count("/settings#s-answer") == 1, exported
    assert "unreachable" not in exported and "ollama" not in exported.lower(), exported
    # The first answer's citation opens its own source (the DMCA summary), not the latest's.
    first.locator("a.cite").first.click()
    expect(pg).to_have_url(re.compile(rf"/library/{pdf_id}/pages/\d+"))
    expect(pg.locator("h1")).to_contain_text(re.compile("DMCA|Digital Millennium", re.I))
    fits()
    pg.go_back()

    # Over the limit: refused before sending, with the limit; empty: explained.
    box = pg.get_by_label("Your question")
    hint = pg.get_by_test_id("question-hint")
    box.fill("why " * 525)  # 2,099 characters
    expect(hint).to_contain_text("limited to 2,000 characters")
    expect(pg.get_by_test_id("question-count")).to_have_text("2,099 / 2,000")
    expect(pg.get_by_role("button", name="Ask", exact=True)).to_be_disabled()
    box.press("Enter")
    expect(pg.locator("article.message.user")).to_have_count(2)
    box.fill("")
    pg.get_by_role("button", name="Ask", exact=True).click()
    expect(hint).to_contain_text("Type a question first")
    expect(pg.locator("article.message.user")).to_have_count(2)

    # Options: no model, so "Use the LLM" is disabled with why and where to set one up; the
    # document picker finds a book by a word of its title.
    pg.locator("details.options summary").click()
    expect(pg.get_by_label("Use the LLM")).to_be_disabled()
    expect(pg.get_by_test_id("llm-hint")).to_contain_text("No language model is reachable")
    expect(pg.get_by_test_id("llm-hint").get_by_role("link", name="Set one up")).to_have_attribute(
        "href", "/settings#s-answer"
    )
    picker = pg.get_by_test_id("document-filter")
    picker.get_by_label("Find a document to search in").fill("shinyama")
    expect(picker.locator("label.check")).to_have_count(1)
    fits()

    # Sync needs a saved login first; Delete is apart from the other actions.
    pg.goto("/perplexity")
    expect(pg.get_by_role("button", name="Sync now")).to_be_disabled()
    pg.goto(f"/library/{pdf_id}")
    zone = pg.get_by_test_id("danger-zone")
    expect(zone.get_by_role("button", name="Delete this document")).to_be_visible()
    expect(pg.get_by_role("button", name=re.compile("Delete"))).to_have_count(1)
    expect(pg.get_by_role("button", name="Re-ingest")).to_be_visible()
    expect(zone.get_by_role("button", name="Re-ingest")).to_have_count(0)
    fits()
    pg.context.close()
    assert not errors, errors
