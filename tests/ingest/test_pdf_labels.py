"""Printed page numbers (/PageLabels): real files, generated ones, and damaged trees."""

from __future__ import annotations

from pathlib import Path

import pytest
from fpdf import FPDF
from pdfminer.pdfdocument import PDFDocument
from pdfminer.pdfpage import PDFPage
from pdfminer.pdfparser import PDFParser

from quire.config import Settings
from quire.formats.extract import extract_file
from quire.formats.pdf.structure import read_page_labels
from quire.storage.records import place
from tests.conftest import DOCS

WORDS = "Every page of this file carries enough ordinary words to count as a real text layer. "


def _labels(path: Path) -> tuple[list[str | None] | None, str | None]:
    with path.open("rb") as fh:
        doc = PDFDocument(PDFParser(fh))
        return read_page_labels(doc, len(list(PDFPage.create_pages(doc))))


def test_real_textbook_has_roman_front_matter_then_arabic_pages() -> None:
    labels, notice = _labels(DOCS / "pdf" / "thinkcomplexity2.pdf")
    assert notice is None and labels is not None and len(labels) == 246
    assert labels[:4] == ["i", "i", "ii", "iii"]  # the cover, then the front matter
    assert labels[16] == "xvi" and labels[17] == "1"
    assert labels[187] == "171"  # PDF page 188 is printed page 171
    assert labels[-1] == "228"  # the last range starts at 228 (St)


def test_real_spec_labels_are_prefixes_only() -> None:
    labels, notice = _labels(DOCS / "pdf" / "riscv-abi-spec-v1.0.pdf")
    assert notice is None and labels is not None
    assert labels[:4] == ["i", "ii", "iii", "1"]
    assert labels[13] == "11"


def test_pdfs_without_labels_have_none() -> None:
    assert _labels(DOCS / "pdf" / "dmca-summary.pdf") == (None, None)


def _labelled(path: Path) -> Path:
    """Seven pages: two roman, three "A-1".., two letters (fpdf2 writes /PageLabels)."""
    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    for n in range(7):
        pdf.add_page()
        if n == 0:
            pdf.set_page_label("r", None, 1)
        elif n == 2:
            pdf.set_page_label("D", "A-", 1)
        elif n == 5:
            pdf.set_page_label("A", "", 26)
        pdf.multi_cell(0, 6, f"Page {n + 1}. " + WORDS * 5)
    pdf.output(str(path))
    return path


def test_generated_labels_with_prefix_and_letters_reach_the_pages(tmp_path: Path) -> None:
    extracted = extract_file(_labelled(tmp_path / "labelled.pdf"), Settings())
    assert [p.label for p in extracted.pages] == ["i", "ii", "A-1", "A-2", "A-3", "Z", "AA"]
    assert extracted.metadata["page_labels"] is True
    assert place("pdf", 4, extracted.pages[3].label) == "p. A-2 (PDF p. 4)"


def _raw_pdf(path: Path, page_labels: str, extra: str = "", pages: int = 3) -> Path:
    """A hand-written PDF whose catalog has ``/PageLabels page_labels`` (objects in
    ``extra`` are appended as written)."""
    objects = [
        f"<< /Type /Catalog /Pages 2 0 R /PageLabels {page_labels} >>",
        "<< /Type /Pages /Kids ["
        + " ".join(f"{3 + 2 * i} 0 R" for i in range(pages))
        + f"] /Count {pages} /Resources << /Font << /F1 << /Type /Font /Subtype /Type1 "
        "/BaseFont /Helvetica >> >> >> >>",
    ]
    for i in range(pages):
        lines = " ".join(f"({WORDS[:60]} {i}) Tj 0 -14 Td" for _ in range(12))
        stream = f"BT /F1 11 Tf 50 750 Td {lines} ET"
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R >>"
        )
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
    objects.extend(o for o in extra.split("\n\n") if o)
    out = b"%PDF-1.7\n"
    offsets = []
    for n, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{n} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    path.write_bytes(out)
    return path


@pytest.mark.parametrize(
    ("page_labels", "extra", "why"),
    [
        ("<< /Nums [0 << /S /r /St 0 >>] >>", "", "starts at 0"),
        ("<< /Nums [0 << /S /Q >>] >>", "", "unknown numbering style"),
        ("<< /Nums [2 << /S /D >> 0 << /S /r >> 2 << /S /D >>] >>", "", "out of order"),
        ("<< /Nums [0 << /S /D >> 1] >>", "", "pairs"),
        ("<< /Nums [(x) << /S /D >>] >>", "", "page index"),
        ("[0 1 2]", "", "not a number tree"),
        # /Kids that lead back to the root (object 9 is the tree, its kid points at itself).
        ("9 0 R", "<< /Kids [9 0 R] >>", "loops"),
    ],
)
def test_malformed_page_labels_give_physical_numbers_and_a_notice(
    tmp_path: Path, page_labels: str, extra: str, why: str
) -> None:
    path = _raw_pdf(tmp_path / "bad.pdf", page_labels, extra)
    extracted = extract_file(path, Settings())
    assert len(extracted.pages) == 3 and all(p.text for p in extracted.pages)
    assert [p.label for p in extracted.pages] == [None, None, None]
    assert extracted.metadata["page_labels"] is False
    (notice,) = extracted.metadata["notices"]
    assert "page labels are damaged" in notice and why in notice
    assert place("pdf", 2, extracted.pages[1].label) == "p. 2"


def test_a_well_formed_hand_written_tree_reads(tmp_path: Path) -> None:
    path = _raw_pdf(
        tmp_path / "kids.pdf",
        "9 0 R",
        "<< /Kids [10 0 R] >>\n\n<< /Nums [0 << /P (A-) /S /D /St 5 >>] >>",
    )
    assert _labels(path) == (["A-5", "A-6", "A-7"], None)


def test_place_names_the_printed_page_beside_the_physical_one() -> None:
    assert place("pdf", 188, "166") == "p. 166 (PDF p. 188)"
    assert place("pdf", 12, "12") == "p. 12"
    assert place("pdf", 12, None) == "p. 12"
    assert place("epub", 3) == "section 3"
