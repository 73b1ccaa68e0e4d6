"""Slides (formats/office/slides.py, odf.py): one page per slide on the real decks of
../shared/data/docs/office, cited "slide N · Title", text in reading order, tables as rows,
speaker notes kept and marked; a deck built here for order, hidden slides and notes."""

from __future__ import annotations

from pathlib import Path

from pptx import Presentation
from pptx.util import Inches

from quire.config import Settings
from quire.formats.extract import extract_file
from quire.formats.office.odf import extract_odp
from quire.formats.office.slides import NOTES, extract_pptx
from quire.storage.records import place
from tests.conftest import DOCS

OFFICE = DOCS / "office"
LIMIT = 500 << 20


def test_a_deck_is_one_page_per_slide_cited_by_number_and_title() -> None:
    ex = extract_pptx(
        OFFICE / "pptx" / "aes2011-maloney-evaluation-communication.pptx", max_unpacked_bytes=LIMIT
    )
    assert len(ex.pages) == 28 == ex.metadata["slides"]
    slide = ex.pages[7]
    assert slide.number == 8 and slide.heading_path == "Marketing in evaluation"
    assert place("pptx", slide.number, slide.label) == "slide 8 · Marketing in evaluation"
    assert "geographic, demographic, psychographic and behavioural factors" in slide.text
    # Its table: a row with its header.
    assert "Principle: Understand the marketplace" in slide.text
    # Its speaker note is searchable, after the slide's own text and marked as a note.
    notes = slide.text.index(f"{NOTES}\nUnderstanding the organisation")
    assert notes > slide.text.index("psychographic") and slide.meta["notes"] is True


def test_a_slide_show_file_and_a_title_with_a_line_break() -> None:
    ex = extract_pptx(
        OFFICE / "pptx" / "algeria-guide-bachelier-2018-fr-ar.pptx", max_unpacked_bytes=LIMIT
    )
    assert len(ex.pages) == 45  # saved as a slide show (.ppsx content type): read all the same
    assert "La date limite du 16 septembre 2018" in ex.pages[8].text
    ex = extract_pptx(
        OFFICE / "pptx" / "uaeu-math260-geometry-lecture1.pptx", max_unpacked_bytes=LIMIT
    )
    assert ex.pages[0].heading_path == "Math 260 Foundations of Geometry"
    assert ex.pages[1].label == "slide 2"  # no title placeholder: no title made up


def test_an_opendocument_presentation() -> None:
    ex = extract_odp(
        OFFICE / "odt" / "uottawa-python-pandas-workshop.odp", max_unpacked_bytes=LIMIT
    )
    assert len(ex.pages) == 18
    assert ex.pages[13].label == "slide 14 · Speed test"
    assert ex.pages[13].text.startswith("Speed test\n\nFactor of 96 difference")
    assert f"{NOTES}\nPAGE COUVERTURE" in ex.pages[0].text


def test_reading_order_hidden_slides_and_notes_of_a_deck_built_here(tmp_path: Path) -> None:
    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[5])  # title only
    slide.shapes.title.text = "Results"
    for left, top, text in ((5, 3, "bottom right"), (1, 3, "bottom left"), (3, 1.5, "top")):
        slide.shapes.add_textbox(Inches(left), Inches(top), Inches(2), Inches(1)).text = text
    table = slide.shapes.add_table(2, 2, Inches(1), Inches(5), Inches(4), Inches(1)).table
    for (r, c), text in {(0, 0): "Site", (0, 1): "Yield", (1, 0): "Peru", (1, 1): "3.2"}.items():
        table.cell(r, c).text = text
    slide.notes_slide.notes_text_frame.text = "Mention the drought."
    hidden = prs.slides.add_slide(prs.slide_layouts[5])
    hidden.shapes.title.text = "Backup"
    hidden._element.set("show", "0")
    path = tmp_path / "talk.pptx"
    prs.save(str(path))
    ex = extract_file(path, Settings(data_dir=tmp_path / "data"))
    assert ex.kind == "pptx"
    first, second = ex.pages
    assert first.text == (
        "Results\n\ntop\n\nbottom left\n\nbottom right\n\nSite: Peru · Yield: 3.2"
        f"\n\n{NOTES}\nMention the drought."
    )
    assert second.label == "slide 2 (hidden) · Backup" and second.meta["hidden"] is True
