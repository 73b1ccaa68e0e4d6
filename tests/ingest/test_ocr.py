from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from fpdf import FPDF

from quire.config import Settings
from quire.errors import OcrUnavailable
from quire.formats.extract import extract_file
from quire.formats.pdf import ocr
from quire.formats.types import Extracted

# CI clones the repo next to shared/: always resolve it as <repo>/../shared.
DOCS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "docs"
SCAN = DOCS / "pdf" / "scan-grumman-175.pdf"


@pytest.fixture(scope="module")
def scan() -> tuple[Extracted, list[tuple[str, float]]]:
    # `make test` installs them (scripts/install-system-deps.sh); missing tools must fail here.
    assert shutil.which("tesseract") and shutil.which("pdftoppm"), "install tesseract, poppler"
    events: list[tuple[str, float]] = []
    # 200 dpi keeps the suite fast on a 2-core machine; the scan reads well at it.
    settings = Settings(ocr_dpi=200, ocr_workers=2)
    partials: list[Extracted] = []
    extracted = extract_file(
        SCAN, settings, lambda stage, f: events.append((stage, f)), partial=partials.append
    )
    # No page of the scan has text of its own: nothing to search before OCR, so the document
    # is not called searchable meanwhile (its text layer's stray words found nothing).
    assert partials == []
    return extracted, events


def test_both_pages_of_a_scan_are_read_by_ocr(
    scan: tuple[Extracted, list[tuple[str, float]]],
) -> None:
    extracted, _ = scan
    assert [p.number for p in extracted.pages] == [1, 2]
    assert [p.source for p in extracted.pages] == ["ocr", "ocr"]
    assert extracted.metadata["ocr_pages"] == [1, 2]
    page1, page2 = (p.text for p in extracted.pages)
    assert "ACCESSORY KIT" in page1 and "Oversize Tire" in page1 and "GRUMMAN" in page1
    assert "Main Gear" in page2 and "Nose Gear" in page2 and "Service Manual" in page2
    assert extracted.pages[0].meta.keys() == {"ocr_reason", "ocr_words"}
    assert extracted.pages[0].meta["ocr_reason"] == "few_words"


def test_ocr_words_are_the_page_text_in_reading_order(
    scan: tuple[Extracted, list[tuple[str, float]]],
) -> None:
    extracted, _ = scan
    for page in extracted.pages:
        boxes = page.meta["ocr_words"]
        assert (boxes["width"], boxes["height"], boxes["unit"]) == (612.0, 792.0, "pt")
        assert [w[4] for w in boxes["words"]] == page.text.split()
        for x0, y0, x1, y1, _ in boxes["words"]:
            assert 0 <= x0 < x1 <= 612 and 0 <= y0 < y1 <= 792


def _dark_fraction(pgm: bytes, boxes: list[tuple[float, float, float, float]]) -> float:
    header = re.match(rb"P5\s+(\d+)\s+(\d+)\s+\d+\s", pgm)
    assert header is not None
    width, height = int(header[1]), int(header[2])
    pixels = pgm[header.end() :]
    dark = total = 0
    for x0, y0, x1, y1 in boxes:
        for y in range(max(0, int(y0)), min(height, int(y1) + 1)):
            row = pixels[y * width + max(0, int(x0)) : y * width + min(width, int(x1) + 1)]
            dark += sum(v < 128 for v in row)
            total += len(row)
    return dark / max(total, 1)


def test_ocr_word_boxes_lie_on_the_printed_words(
    scan: tuple[Extracted, list[tuple[str, float]]], tmp_path: Path
) -> None:
    # At 72 dpi one pixel is one point: the boxes must cover ink there, independently of the
    # 200 dpi image tesseract read. Upside down, in pixels or a line off, they cover paper.
    extracted, _ = scan
    cmd = ["pdftoppm", "-f", "1", "-l", "1", "-r", "72", "-gray", "-singlefile"]
    subprocess.run([*cmd, str(SCAN), str(tmp_path / "page")], check=True)
    pgm = (tmp_path / "page.pgm").read_bytes()
    words = [w for w in extracted.pages[0].meta["ocr_words"]["words"] if len(w[4]) >= 3]
    boxes = [(x0, y0, x1, y1) for x0, y0, x1, y1, _ in words]
    inside = _dark_fraction(pgm, boxes)
    assert inside > 2.5 * _dark_fraction(pgm, [(0, 0, 612, 792)])
    assert inside > 1.5 * _dark_fraction(pgm, [(a, 792 - d, c, 792 - b) for a, b, c, d in boxes])
    assert inside > 1.5 * _dark_fraction(pgm, [(a, b + 12, c, d + 12) for a, b, c, d in boxes])
    scale = 200 / 72
    assert inside > 1.5 * _dark_fraction(pgm, [tuple(v * scale for v in b) for b in boxes])
    accessory = next(w for w in words if w[4] == "ACCESSORY")
    assert _dark_fraction(pgm, [tuple(accessory[:4])]) > 0.15


def test_ocr_word_boxes_drop_empty_and_unconfident_rows() -> None:
    rows = [
        "level page_num block_num par_num line_num word_num left top width height conf text",
        "1 1 0 0 0 0 0 0 1700 2200 -1 _",
        "5 1 1 1 1 1 100 200 50 30 96.5 Kit",
        "5 1 1 1 1 2 160 200 40 30 -1 ghost",
        "5 1 1 1 1 3 210 200 40 30 90 _",
    ]
    # Tesseract separates the columns with tabs; "_" stands for an empty word here.
    tsv = "\n".join(row.replace(" ", "\t").replace("_", " ") for row in rows)
    boxes = ocr.word_boxes(tsv, width_px=1700, height_px=2200, dpi=200)
    assert boxes == {
        "width": 612.0,
        "height": 792.0,
        "unit": "pt",
        "words": [[36.0, 72.0, 54.0, 82.8, "Kit"]],
    }


def test_ocr_progress_is_reported_per_page(scan: tuple[Extracted, list[tuple[str, float]]]) -> None:
    _, events = scan
    ocr_events = [f for stage, f in events if stage == "ocr"]
    assert ocr_events == [0.0, 0.5, 1.0]  # the stage is announced, then each page
    extract_events = [f for stage, f in events if stage == "extract"]
    assert extract_events[-1] == 1.0
    # Text-layer extraction finishes before OCR starts.
    assert events.index(("extract", 1.0)) < events.index(("ocr", 0.5))


def test_tesseract_runs_with_one_openmp_thread(
    scan: tuple[Extracted, list[tuple[str, float]]],
) -> None:
    assert os.environ.get("OMP_THREAD_LIMIT") == "1"


def _hide(monkeypatch: pytest.MonkeyPatch, binary: str) -> None:
    real = shutil.which

    def which(cmd: str, *args: object, **kwargs: object) -> str | None:
        return None if Path(cmd).name == binary else real(cmd)

    monkeypatch.setattr("quire.formats.pdf.ocr.shutil.which", which)


@pytest.mark.parametrize("binary", ["pdftoppm", "tesseract"])
def test_missing_binary_fails_with_an_install_hint(
    monkeypatch: pytest.MonkeyPatch, binary: str
) -> None:
    _hide(monkeypatch, binary)
    with pytest.raises(OcrUnavailable, match="apt-get install") as err:
        extract_file(SCAN, Settings(ocr_dpi=200))
    assert binary in err.value.message


def test_missing_language_data_is_named() -> None:
    with pytest.raises(OcrUnavailable, match="tesseract-ocr-xyz"):
        ocr.check_available("eng+xyz")


def test_without_ocr_a_mostly_text_pdf_still_ingests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    pdf.add_page()
    pdf.multi_cell(w=0, text="A page with a proper text layer and plenty of words on it. " * 5)
    pdf.add_page()
    pdf.rect(20, 20, 100, 60)  # a drawing with a caption: would be OCRed
    pdf.text(25, 30, "Figure 1")
    path = tmp_path / "mixed.pdf"
    pdf.output(str(path))
    _hide(monkeypatch, "tesseract")
    extracted = extract_file(path, Settings())
    assert extracted.metadata["ocr_skipped_pages"] == [2]
    assert [p.source for p in extracted.pages] == ["text_layer", "text_layer"]
    assert extracted.pages[1].text == "Figure 1"
