"""Headings told from the layout on real PDFs without an outline, checked against a real
outline, and never taken from body text."""

from __future__ import annotations

import re
import unicodedata

import pytest
from pdfminer.high_level import extract_pages

from quire.config import Settings
from quire.formats.extract import extract_file
from quire.formats.pdf.headings import MAX_CHARS, HeadingFinder
from quire.formats.pdf.layout import LAPARAMS
from quire.ingest.chunking import chunk_pages
from tests.conftest import DOCS


def _chunk_with(path_name: str, words: str) -> str:
    extracted = extract_file(DOCS / "pdf" / path_name, Settings())
    assert extracted.metadata["outline_entries"] == 0 and extracted.metadata["layout_headings"] > 5
    for chunk in chunk_pages(extracted.pages, size=600, overlap=50):
        if words in " ".join(chunk.text.split()):
            return chunk.heading_path
    raise AssertionError(words)


def test_paper_without_outline_gets_its_numbered_sections() -> None:
    path = _chunk_with("naacl06-shinyama.pdf", "After getting a GLARF structure for each sentence")
    assert path == "3 Implementation > 3.4 Basic Pattern Generation"


def test_report_without_outline_gets_title_and_section() -> None:
    path = _chunk_with("dmca-summary.pdf", "Section 512(b) limits the liability of service")
    assert path == (
        "TITLE II: ONLINE COPYRIGHT INFRINGEMENT LIABILITY LIMITATION > "
        "Limitation for System Caching"
    )


@pytest.mark.parametrize("name", ["naacl06-shinyama.pdf", "dmca-summary.pdf"])
def test_no_heading_reads_like_body_text(name: str) -> None:
    finder = HeadingFinder()
    for number, layout in enumerate(extract_pages(DOCS / "pdf" / name, laparams=LAPARAMS), 1):
        finder.add(number, layout)
    headings = finder.headings()
    assert headings
    for h in headings:
        assert len(h.title) <= MAX_CHARS and not h.title.endswith((".", ",", ";", ":")), h
    # The title page's authors are not sections.
    assert not any("Shinyama" in h.title or "Sekine" in h.title for h in headings)


def _fold(text: str) -> str:
    return re.sub(r"\W+", " ", unicodedata.normalize("NFKC", text).casefold()).strip()


@pytest.mark.slow  # lays out 246 pages (~10 s)
def test_layout_headings_agree_with_a_real_outline() -> None:
    """On a book that has an outline, the layout rule finds nearly the same headings."""
    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfpage import PDFPage
    from pdfminer.pdfparser import PDFParser

    from quire.formats.pdf.structure import read_outline

    path = DOCS / "pdf" / "thinkcomplexity2.pdf"
    with path.open("rb") as fh:
        doc = PDFDocument(PDFParser(fh))
        outline, _ = read_outline(doc, list(PDFPage.create_pages(doc)))
    finder = HeadingFinder()
    for number, layout in enumerate(extract_pages(path, laparams=LAPARAMS), 1):
        finder.add(number, layout)
    found = [_fold(h.title) for h in finder.headings()]
    titles = [_fold(e.title) for e in outline]
    matched = [f for f in found if any(t in f for t in titles)]
    assert len(matched) >= 0.95 * len(found)  # precision (the misses: cover, contents)
    assert len(matched) >= 0.95 * len(titles)  # recall
