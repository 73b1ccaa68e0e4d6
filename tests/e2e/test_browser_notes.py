"""The researcher's own layer in Chromium (issue 37, "Done means"): on a rendered PDF page a
sentence is selected on the text layer and a note added; after a reload the highlight is drawn
on the same words; the Notes page's search finds the note by a word of it; a question the note
answers cites it as the user's note with its page, and the citation opens that page. A note
with a script in it shows the script as text and runs nothing."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.browser_helpers import built_spa
from tests.e2e.stack import Stack, run_stack
from tests.e2e.test_browser import PDF, loose, overlap, shot, upload_ready

pytestmark = pytest.mark.slow

NOTE_WORD = "heronwatch"  # in no document: found, it is the note

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
