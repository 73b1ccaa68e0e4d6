"""The PDF's outline as heading paths: a real textbook, a generated book, a broken outline."""

from __future__ import annotations

from pathlib import Path

import pytest
from fpdf import FPDF

from quire.config import Settings
from quire.formats.extract import extract_file
from quire.formats.types import Extracted
from quire.ingest.chunking import chunk_pages, heading_at

DOCS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "docs"

WORDS = (
    "Every page of this document carries enough ordinary words for its text layer to count as "
    "real text, so that nothing here is sent to optical character recognition by mistake. "
)


@pytest.fixture(scope="module")
def textbook() -> Extracted:
    return extract_file(DOCS / "pdf" / "thinkcomplexity2.pdf", Settings())


@pytest.mark.slow  # extracting 250 pages takes ~10 s
def test_real_textbook_pages_carry_their_outline_section(textbook: Extracted) -> None:
    pages = {p.number: p for p in textbook.pages}
    assert textbook.metadata["outline_entries"] > 100
    assert "notices" not in textbook.metadata
    assert pages[245].heading_path == "Reading list"
    # Page 21 starts in "Paradigm shift?" and a new section begins part-way down.
    p21 = pages[21]
    (offset, path), *_ = p21.meta["headings"]
    assert path == "Complexity Science > The axes of scientific models"
    assert offset > 500
    assert p21.text[offset:].startswith("1.2 The axes of scientific models")
    assert heading_at(p21, 0) == "Complexity Science > Paradigm shift?"
    assert heading_at(p21, offset) == path
    chunks = [c for c in chunk_pages([p21], size=600, overlap=50)]
    assert chunks[0].heading_path == "Complexity Science > Paradigm shift?"
    assert chunks[-1].heading_path == path


@pytest.mark.slow
def test_text_before_a_mid_page_heading_keeps_the_section_before(textbook: Extracted) -> None:
    """Page 74 opens with its running head "4.6 Generating BA graphs", then Table 4.1 and the
    end of section 4.5; section 4.6 starts part-way down. The running head is not where 4.6
    starts, and the table's chunk carries 4.5's path."""
    pages = {p.number: p for p in textbook.pages}
    p74 = pages[74]
    assert p74.text.startswith("4.6 Generating BA graphs\n\n")  # the running head
    (offset, path), *_ = p74.meta["headings"]
    assert path == "Scale-free networks > Generating BA graphs"
    assert p74.text[offset:].startswith("4.6 Generating BA graphs\n\nIn the previous sections")
    before = "Scale-free networks > Barabási-Albert model"
    assert p74.meta["heading_before"] == before
    assert p74.heading_path == before  # most of the page
    chunks = chunk_pages([p74])
    table = next(c for c in chunks if "BA model: 0.037" in c.text)
    assert table.heading_path == before
    assert chunks[-1].heading_path == path
    # The next page's running head ("Chapter 4 Scale-free networks") starts no section.
    assert "headings" not in pages[75].meta
    assert pages[75].heading_path == path
    assert {c.heading_path for c in chunk_pages([pages[75]])} == {path}


@pytest.mark.slow
def test_a_quoted_code_string_is_read_in_its_line(textbook: Extracted) -> None:
    """TeX's typewriter quotes sit half a line above their letters; each one broke its line,
    and page 212's genotypes came out as a column of letters after the sentence."""
    p212 = next(p for p in textbook.pages if p.number == 212).text
    assert "the genotype for an agent that always defects is\n’DDDDDDD’;" in p212
    assert "for “tit for tat” is ’CCDCDCD’." in p212
    assert "\nC\n\nC\n\nD\n" not in p212


@pytest.mark.slow
def test_accented_letters_typeset_by_tex_are_whole_words(textbook: Extracted) -> None:
    """TeX sets an accent over its letter; pdfminer gives a spacing accent before the letter
    ("Erd˝os-R´enyi"), which split the names for search and for the answer's term matches."""
    pages = {p.number: p.text for p in textbook.pages}
    assert "Erdős-Rényi" in pages[33] and "Alfréd" in pages[33]
    assert "Barabási-Albert" in pages[72]
    assert "Gödel’s" in pages[26]
    assert not any(a in text for text in pages.values() for a in ("´", "˝", "¨"))


def _book(path: Path) -> Path:
    """Three pages; the outline has a chapter with two sections, one starting mid-page."""
    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    pdf.add_page()
    pdf.start_section("Chapter One", level=0)
    pdf.multi_cell(0, 6, "Chapter One\n" + WORDS * 4, new_x="LMARGIN", new_y="NEXT")
    pdf.start_section("First Section", level=1)
    pdf.multi_cell(0, 6, "First Section\n" + WORDS * 3, new_x="LMARGIN", new_y="NEXT")
    pdf.add_page()
    pdf.multi_cell(0, 6, WORDS * 3, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(40)
    pdf.start_section("Second Section", level=1)
    pdf.multi_cell(
        0,
        6,
        "Second Section\n" + "Bananas grow in bunches called hands. " * 30,
        new_x="LMARGIN",
        new_y="NEXT",
    )
    pdf.add_page()
    pdf.start_section("Chapter Two", level=0)
    pdf.multi_cell(0, 6, "Chapter Two\n" + WORDS * 4, new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))
    return path


def test_generated_outline_gives_each_chunk_its_section(tmp_path: Path) -> None:
    extracted = extract_file(_book(tmp_path / "book.pdf"), Settings())
    pages = extracted.pages
    assert extracted.metadata["outline_entries"] == 4
    (top, chapter), (offset, section) = pages[0].meta["headings"]
    assert (top, chapter) == (0, "Chapter One")
    assert section == "Chapter One > First Section"
    assert pages[0].text[offset:].startswith("First Section")
    assert pages[0].heading_path == "Chapter One"  # it covers most of the page
    # Page 2 opens inside "First Section"; "Second Section" starts below and covers most of it.
    assert pages[1].meta["heading_before"] == "Chapter One > First Section"
    assert pages[1].heading_path == "Chapter One > Second Section"
    chunks = chunk_pages(pages[1:2], size=300, overlap=30)
    assert chunks[0].heading_path == "Chapter One > First Section"
    bananas = [c for c in chunks if "Bananas" in c.text and "ordinary" not in c.text]
    assert bananas and all(c.heading_path == "Chapter One > Second Section" for c in bananas)
    assert pages[2].heading_path == "Chapter Two"


def _broken_outline_pdf(path: Path) -> Path:
    """Two pages whose outline has an entry pointing at an object that is no page and a Next
    chain that loops back to its first entry."""
    line = "(" + WORDS[:90] + ") Tj T* "
    content = ("BT /F1 11 Tf 14 TL 72 720 Td " + line * 12 + "ET").encode("latin-1")
    objects = {
        1: b"<< /Type /Catalog /Pages 2 0 R /Outlines 5 0 R >>",
        2: b"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>",
        3: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 10 0 R "
        b"/Resources << /Font << /F1 12 0 R >> >> >>",
        4: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 10 0 R "
        b"/Resources << /Font << /F1 12 0 R >> >> >>",
        5: b"<< /Type /Outlines /First 6 0 R /Last 8 0 R /Count 3 >>",
        6: b"<< /Title (Opening) /Parent 5 0 R /Next 7 0 R /Dest [3 0 R /XYZ 0 792 0] >>",
        7: b"<< /Title (Nowhere) /Parent 5 0 R /Next 8 0 R /Dest [12 0 R /Fit] >>",
        8: b"<< /Title (Closing) /Parent 5 0 R /Next 6 0 R /Dest [4 0 R /XYZ 0 792 0] >>",
        10: b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        12: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    }
    out = bytearray(b"%PDF-1.4\n")
    offsets = {}
    for number, body in objects.items():
        offsets[number] = len(out)
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    size = max(objects) + 1
    out += b"xref\n0 %d\n0000000000 65535 f \n" % size
    for number in range(1, size):
        if number in offsets:
            out += b"%010d 00000 n \n" % offsets[number]
        else:
            out += b"0000000000 65535 f \n"
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, xref)
    path.write_bytes(bytes(out))
    return path


def test_broken_outline_is_a_notice_not_a_failed_ingest(tmp_path: Path) -> None:
    extracted = extract_file(_broken_outline_pdf(tmp_path / "broken.pdf"), Settings())
    assert [p.number for p in extracted.pages] == [1, 2]
    assert all(p.source == "text_layer" for p in extracted.pages)
    (notice,) = extracted.metadata["notices"]
    assert "1 outline entries point at no page" in notice
    assert "loops back" in notice
    # What was usable is used: the two good entries still name their pages.
    assert extracted.metadata["outline_entries"] == 2
    assert [p.heading_path for p in extracted.pages] == ["Opening", "Closing"]
