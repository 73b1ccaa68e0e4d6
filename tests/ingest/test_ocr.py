from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from fpdf import FPDF

from quire.config import Settings
from quire.errors import OcrUnavailable
from quire.ingest import ocr
from quire.ingest.extract import extract_file
from quire.ingest.types import Extracted

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
    extracted = extract_file(SCAN, settings, lambda stage, f: events.append((stage, f)))
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
    assert extracted.pages[0].meta == {"ocr_reason": "few_words"}


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

    monkeypatch.setattr("quire.ingest.ocr.shutil.which", which)


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
