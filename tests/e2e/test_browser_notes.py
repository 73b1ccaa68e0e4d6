"""The researcher's own layer in Chromium (issue 37, "Done means"): on a rendered PDF page a
sentence is selected on the text layer and a note added; after a reload the highlight is drawn
on the same words; the Notes page's search finds the note by a word of it; a question the note
answers cites it as the user's note with its page, and the citation opens that page. A note
with a script in it shows the script as text and runs nothing. On a scanned PDF page and an
image file's page, words are selected on the OCR layer and highlighted, and drawn again over
the same OCR words; a Zotero highlight with only a rectangle is drawn where it says. The Notes
page reaches the last of thousands of notes and searches them all."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import FloatRect, Page, expect

from quire.storage import notes
from tests.api.test_notes_paging import LAST_WORD, make_notes
from tests.e2e.browser_helpers import built_spa
from tests.e2e.helpers import open_db
from tests.e2e.stack import Stack, run_stack
from tests.e2e.test_browser import PDF, SCAN, Box, loose, overlap, shot, upload_ready
from tests.e2e.test_browser_office import PHOTO

pytestmark = pytest.mark.slow

NOTE_WORD = "heronwatch"  # in no document: found, it is the note
_LOAD_MORE = "document.querySelector('[data-testid=load-more]')"
BULK = 2500  # notes on the Notes page: far past its old 500

#: Select the longest line of the rendered page's text layer (a real DOM selection), and
#: report it as a mouse release would.
SELECT_LINE = """() => {
  const spans = [...document.querySelectorAll('.textLayer span[role=presentation]')]
    .filter((s) => s.textContent.trim().length >= 30);
  spans.sort((a, b) => b.textContent.length - a.textContent.length);
  const span = spans[0];
  const range = document.createRange();
  range.selectNodeContents(span);
  const sel = window.getSelection();
  sel.removeAllRanges();
  sel.addRange(range);
  document.dispatchEvent(new MouseEvent('mouseup', { bubbles: true }));
  const r = span.getBoundingClientRect();
  return { text: span.textContent, box: { x: r.x, y: r.y, width: r.width, height: r.height } };
}"""


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("browser-notes")
    with run_stack(tmp, dist=built_spa(), QUIRE_LLM_BACKENDS="none") as s:
        yield s


def _rendered(pg: Page) -> None:
    pdf_page = pg.get_by_test_id("pdf-page")
    expect(pdf_page).to_have_attribute("data-state", "ready", timeout=30_000)


def test_a_note_on_a_rendered_page_is_drawn_again_found_and_cited(page: Page, stack: Stack) -> None:
    pg = page
    doc_id = upload_ready(stack, PDF)
    page_no = 2
    pg.goto(f"/library/{doc_id}/pages/{page_no}")
    _rendered(pg)
    picked = pg.evaluate(SELECT_LINE)
    tools = pg.get_by_test_id("selection-tools")
    expect(tools).to_be_visible()
    tools.get_by_role("button", name="Add note").click()
    pg.get_by_test_id("note-text").fill(
        f"The {NOTE_WORD} rule: this line is where the safe harbour starts."
    )
    pg.get_by_test_id("save-note").click()
    card = pg.get_by_test_id("page-notes").get_by_test_id("note")
    expect(card).to_have_count(1)
    expect(card).to_contain_text(NOTE_WORD)
    saved = httpx.get(f"{stack.web}/api/notes", params={"document_id": doc_id}).json()["notes"]
    assert len(saved) == 1 and saved[0]["page"] == page_no, saved
    assert loose(saved[0]["quote"]) == loose(picked["text"]), (saved[0]["quote"], picked)
    assert saved[0]["span_start"] is not None and saved[0]["boxes"], saved[0]

    # After a reload the highlight is drawn on the same words.
    pg.reload()
    _rendered(pg)
    marks = pg.locator(".textLayer mark.pdf-hl.note")
    expect(marks.first).to_be_visible()
    marked = "".join(marks.nth(i).evaluate("m => m.textContent") for i in range(marks.count()))
    assert loose(marked) == loose(picked["text"]), (marked, picked["text"])
    box = marks.first.bounding_box()
    assert box and overlap(box, picked["box"]) > 0.5, (box, picked["box"])
    expect(pg.get_by_test_id("page-notes").get_by_test_id("note")).to_have_count(1)
    shot(pg, "source-pdf-note", full=False)

    # The text view marks it too.
    pg.get_by_role("button", name="Extracted text").click()
    expect(pg.locator("[data-testid=page-text] mark.note").first).to_be_visible()
    pg.get_by_role("button", name="Page image").click()

    # The Notes page finds it by a word of the note.
    pg.get_by_role("link", name="Notes", exact=True).first.click()
    pg.get_by_label("Search notes").fill(NOTE_WORD)
    found = pg.get_by_test_id("note")
    expect(found).to_have_count(1)
    expect(found).to_contain_text("your note on p. 2")

    # A question the note answers cites it as the user's note, with its page.
    pg.goto("/chat")
    box_q = pg.get_by_label("Your question")
    box_q.fill(f"What is the {NOTE_WORD} rule?")
    box_q.press("Enter")
    answer = pg.locator('article.message.assistant[aria-busy="false"]').last
    expect(answer.locator("a.cite").first).to_be_visible(timeout=60_000)
    sources = pg.locator("section.sources")
    expect(sources).to_contain_text("your note on p. 2")
    # A note has no file of its own: no "Original" link that would lead nowhere.
    cited_note = sources.locator("li", has_text="your note on p. 2")
    expect(cited_note.get_by_role("link", name="Original ↗")).to_have_count(0)
    shot(pg, "chat-cites-note", full=False)
    # "Save as note" keeps the answer.
    answer.get_by_test_id("save-as-note").click()
    expect(answer.get_by_test_id("note-saved")).to_be_visible()
    kept = httpx.get(f"{stack.web}/api/notes").json()["notes"]
    assert any(n["conversation_id"] is not None and "Sources:" in n["body"] for n in kept)

    # The note's citation opens the page the note is on.
    sources.locator("li", has_text="your note on p. 2").locator("a").first.click()
    expect(pg).to_have_url(f"{stack.web}/library/{doc_id}/pages/{page_no}?note={saved[0]['id']}")
    _rendered(pg)
    expect(pg.locator(".textLayer mark.pdf-hl.note").first).to_be_visible()
    # ... with the note's words marked as the quote and scrolled to.
    expect(pg.locator(".textLayer mark.pdf-hl.quote").first).to_be_in_viewport()


def test_a_note_with_a_script_shows_it_as_text(page: Page, stack: Stack) -> None:
    pg = page
    doc_id = upload_ready(stack, PDF)
    r = httpx.post(
        f"{stack.web}/api/notes",
        json={
            "document_id": doc_id,
            "page": 3,
            "body": "**seen** <script>window.__pwned = 1</script>"
            '<img src=x onerror="window.__pwned = 2">',
        },
    )
    assert r.status_code == 201, r.text
    pg.goto(f"/library/{doc_id}")
    body = pg.get_by_test_id("document-notes").get_by_test_id("note-body").last
    expect(body.locator("strong")).to_have_text("seen")
    expect(body).to_contain_text("<script>")
    assert body.locator("script, img").count() == 0
    assert pg.evaluate("window.__pwned") is None


def test_the_citation_style_chosen_in_settings_is_the_exports(page: Page, stack: Stack) -> None:
    pg = page
    doc_id = upload_ready(stack, PDF)
    text = httpx.get(f"{stack.web}/api/documents/{doc_id}/pages/1", timeout=10).json()["text"]
    start = text.index(". ") + 2
    end = text.index(".", start + 20) + 1
    r = httpx.post(
        f"{stack.web}/api/notes",
        json={
            "document_id": doc_id,
            "page": 1,
            "quote": text[start:end],
            "span_start": start,
            "span_end": end,
        },
    )
    assert r.status_code == 201, r.text
    pg.goto("/settings")
    section = pg.get_by_test_id("citation-style")
    save = section.get_by_role("button", name="Save")

    def choose(name: str) -> None:
        # Typed, then saved from the keyboard: focus leaves the field (closing the browser's
        # own list of the names that match, which may swallow a click) and Enter submits.
        section.get_by_label("Citation style").fill(name)
        save.focus()
        pg.keyboard.press("Enter")

    choose("apaa")
    expect(section.get_by_role("alert")).to_contain_text("No citation style is named “apaa”")
    choose("apa")
    expect(section.get_by_role("status")).to_contain_text("Saved: apa")
    pg.reload()
    expect(pg.get_by_test_id("citation-style")).to_contain_text("Now: apa")

    pg.goto(f"/library/{doc_id}")
    with pg.expect_download() as got:
        pg.get_by_test_id("document-notes").get_by_role("button", name="Export as Markdown").click()
    exported = Path(got.value.path()).read_text(encoding="utf-8")
    assert 'citation_style: "apa"' in exported, exported[:400]
    assert "> — (United States Copyright Office - jmf, n.d., p. 1) ([open in Quire](" in exported


#: Select four words of one line on the OCR word layer laid over a scan or an image file's page
#: (a real DOM selection, from a third of the way down the page), and report it as a mouse
#: release would; returns the words.
SELECT_OCR_WORDS = r"""() => {
  const spans = [...document.querySelectorAll('.ocr-words .ocr-word')];
  const n = 4;
  for (let k = Math.floor(spans.length / 3); k + n < spans.length; k++) {
    const run = spans.slice(k, k + n);
    const top = run[0].offsetTop;
    const wordy = (s) => /^\p{L}{3,}$/u.test(s.textContent.trim());
    if (!run.every((s) => Math.abs(s.offsetTop - top) < 4 && wordy(s))) continue;
    const range = document.createRange();
    range.setStart(run[0].firstChild, 0);
    range.setEnd(run[n - 1].firstChild, run[n - 1].textContent.length);
    const sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    document.dispatchEvent(new MouseEvent('mouseup', { bubbles: true }));
    return run.map((s) => s.textContent);
  }
  return null;
}"""


def _word_boxes(frame: Box, ocr: dict[str, Any]) -> list[tuple[str, Box]]:
    """The page's OCR words and where they are on the screen (``frame``: the page's image)."""
    sx, sy = frame["width"] / ocr["width"], frame["height"] / ocr["height"]
    return [
        (
            w[4],
            FloatRect(
                x=frame["x"] + w[0] * sx,
                y=frame["y"] + w[1] * sy,
                width=(w[2] - w[0]) * sx,
                height=(w[3] - w[1]) * sy,
            ),
        )
        for w in ocr["words"]
    ]


def _highlight_words_and_reload(
    pg: Page, stack: Stack, doc_id: int, view: str, frame_css: str
) -> None:
    """On a page without a text layer (``view``: the pdf-page or image-page), select four words
    of the OCR layer and highlight them; after a reload the highlight is drawn over the same
    words, checked by coordinates against the OCR words' own boxes."""
    shown = pg.get_by_test_id(view)
    expect(shown).to_have_attribute("data-state", "ready", timeout=30_000)
    expect(pg.get_by_test_id("ocr-words")).to_be_attached()
    picked = pg.evaluate(SELECT_OCR_WORDS)
    assert picked, "no line of four words on the OCR layer"
    pg.get_by_test_id("selection-tools").get_by_role("button", name="Highlight").click()
    expect(pg.get_by_test_id("page-notes").get_by_test_id("note")).to_have_count(1)
    saved = httpx.get(f"{stack.web}/api/notes", params={"document_id": doc_id}).json()["notes"]
    assert len(saved) == 1 and saved[0]["page"] == 1, saved
    note = saved[0]
    assert loose(note["quote"]) == loose("".join(picked)), (note["quote"], picked)
    page_text = httpx.get(f"{stack.web}/api/documents/{doc_id}/pages/1", timeout=10).json()["text"]
    assert note["span_start"] is not None and note["boxes"], (note, page_text)

    pg.reload()
    expect(shown).to_have_attribute("data-state", "ready", timeout=30_000)
    page_json = httpx.get(f"{stack.web}/api/documents/{doc_id}/pages/1", timeout=10).json()
    frame = shown.locator(frame_css).bounding_box()
    assert frame, frame_css
    words = _word_boxes(frame, page_json["metadata"]["ocr_words"])
    drawn = shown.locator(".ocr-box.note")
    expect(drawn.first).to_be_visible()
    assert drawn.count() == len(picked), (drawn.count(), picked)
    covered = ""
    for i in range(drawn.count()):
        box = drawn.nth(i).bounding_box()
        assert box
        under = [text for text, w in words if overlap(box, w) > 0.8 and overlap(w, box) > 0.8]
        assert len(under) == 1 and loose(under[0]) in loose(note["quote"]), (box, under, picked)
        covered += under[0]
    assert loose(covered) == loose("".join(picked)), (covered, picked)
    # In the note's own colour, not the cited passage's.
    colour = drawn.first.evaluate("b => getComputedStyle(b).backgroundColor")
    assert colour != "rgba(255, 200, 0, 0.3)", colour


def test_a_scan_is_highlighted_on_its_ocr_words_and_a_zotero_box_is_drawn(
    page: Page, stack: Stack
) -> None:
    pg = page
    doc_id = upload_ready(stack, SCAN, timeout_s=300)
    pg.goto(f"/library/{doc_id}/pages/1")
    _highlight_words_and_reload(pg, stack, doc_id, "pdf-page", "canvas")
    shot(pg, "source-scan-note", full=False)

    # A Zotero highlight on the scan's second page: its quote is on no layer of the page (Zotero
    # read another text layer), so it is drawn where its rectangle says, in PDF points from the
    # bottom-left corner.
    ocr = httpx.get(f"{stack.web}/api/documents/{doc_id}/pages/2", timeout=10).json()
    width, height = ocr["metadata"]["ocr_words"]["width"], ocr["metadata"]["ocr_words"]["height"]
    rect = [0.1 * width, 0.5 * height, 0.4 * width, 0.7 * height]
    db = open_db(stack.data)
    try:
        with db.write() as conn:
            fields = {
                "document_id": doc_id,
                "page": 2,
                "quote": "words Zotero read from a text layer this copy does not have",
                "boxes": [{"pdf": rect}],
                "color": "#ff6666",
            }
            notes.create(conn, fields, origin="zotero", zotero_key="ZBOX0001")
    finally:
        db.dispose()
    pg.goto(f"/library/{doc_id}/pages/2")
    pdf_page = pg.get_by_test_id("pdf-page")
    expect(pdf_page).to_have_attribute("data-state", "ready", timeout=30_000)
    canvas = pdf_page.locator("canvas").bounding_box()
    drawn = pdf_page.locator(".ocr-box.note")
    expect(drawn).to_have_count(1)
    box = drawn.bounding_box()
    assert canvas and box
    want = FloatRect(
        x=canvas["x"] + 0.1 * canvas["width"],
        y=canvas["y"] + 0.3 * canvas["height"],
        width=0.3 * canvas["width"],
        height=0.2 * canvas["height"],
    )
    assert overlap(box, want) > 0.97 and overlap(want, box) > 0.97, (box, want)


def test_an_image_files_page_is_highlighted_on_its_ocr_words(page: Page, stack: Stack) -> None:
    pg = page
    doc_id = upload_ready(stack, PHOTO, timeout_s=300)
    pg.goto(f"/library/{doc_id}/pages/1")
    _highlight_words_and_reload(pg, stack, doc_id, "image-page", "img")
    shot(pg, "source-image-note", full=False)


def test_the_notes_page_reaches_its_last_note_and_searches_all(page: Page, stack: Stack) -> None:
    """Thousands of notes: the Notes page shows the first 200, loads the rest a page at a time
    to the last, and its search finds a note far past the first 500 (on the server)."""
    pg = page
    doc_id = upload_ready(stack, PDF)
    db = open_db(stack.data)
    try:
        make_notes(db, doc_id, BULK, last_word=LAST_WORD)
    finally:
        db.dispose()
    total = httpx.get(f"{stack.web}/api/notes", params={"limit": 1}).json()["total"]
    assert total >= BULK
    pg.goto("/notes")
    count = pg.get_by_test_id("notes-count")
    expect(count).to_contain_text(f"{total} notes · showing 200")
    pg.get_by_label("Search notes").fill(LAST_WORD)
    found = pg.get_by_test_id("note")
    expect(found).to_have_count(1)
    expect(found).to_contain_text(f"bulk note {BULK - 1} of {BULK}")
    pg.get_by_label("Search notes").fill("")
    expect(count).to_contain_text("showing 200")
    more = pg.get_by_test_id("load-more")
    # "Load more" is clicked whenever it may be; scrolling loads pages too, so the button can be
    # busy ("Loading…") or gone (the last page loaded) at any moment: both are waited out in
    # the page, and it is clicked there in the same step as it is seen enabled.
    for _ in range(30):
        pg.wait_for_function(f"() => {{ const b = {_LOAD_MORE}; return !b || !b.disabled }}")
        clicked = pg.evaluate(
            f"() => {{ const b = {_LOAD_MORE}; if (!b || b.disabled) return !!b; b.click(); "
            "return true }"
        )
        if not clicked:
            break
    expect(more).to_have_count(0)
    expect(pg.get_by_test_id("note")).to_have_count(total)
    expect(pg.get_by_test_id("note").filter(has_text=LAST_WORD)).to_have_count(1)
