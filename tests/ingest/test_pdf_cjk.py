"""Japanese PDFs drawn here with fpdf2 and a real CJK font: vertical writing comes out in
reading order, horizontal and English pages exactly as before, and a page whose font has no
usable Unicode mapping is OCRed with tesseract's Japanese model."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fpdf import FPDF
from pdfminer.high_level import extract_pages

from quire.config import Settings
from quire.formats.pdf.layout import LAPARAMS, page_text
from quire.formats.pdf.ocr import check_available
from quire.formats.pdf.reader import extract_pdf, ocr_languages
from quire.formats.pdf.text import RawPage, TextLayer, read_text_layer

# Installed by scripts/install-system-deps.sh (fonts-droid-fallback).
FONT = Path("/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf")

SENTENCE = "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。"  # 33 characters
LINES = [
    "吾輩は猫である。名前はまだ無い。",
    "どこで生れたかとんと見当がつかぬ。",
    "何でも薄暗い所で泣いていた事だけは記憶している。",
]
ENGLISH = "The quick brown fox jumps over the lazy dog near the river bank."


def _pdf() -> FPDF:
    pdf = FPDF(unit="pt", format=(420, 595))
    pdf.set_compression(False)  # so the font dictionaries can be edited in the bytes
    pdf.add_font("droid", fname=str(FONT))
    return pdf


def _vertical_page(pdf: FPDF, text: str, *, per_column: int, size: float, pitch: float) -> None:
    """Characters top to bottom in columns, columns right to left, ``pitch`` ems apart."""
    pdf.add_page()
    pdf.set_font("droid", size=size)
    for i, char in enumerate(text):
        column, row = divmod(i, per_column)
        pdf.text(360 - column * size * pitch, 60 + row * size * 1.1, char)


def _horizontal_page(pdf: FPDF, lines: list[str], font: str = "droid") -> None:
    pdf.add_page()
    pdf.set_font(font, size=16)
    for i, line in enumerate(lines):
        pdf.text(30, 80 + i * 30, line)


def _write(pdf: FPDF, path: Path, *, unmapped: bool = False) -> Path:
    data = bytes(pdf.output())
    if unmapped:
        # No ToUnicode map, and a character collection pdfminer has no table for, so nothing
        # maps CIDs to text. Edits keep every length, so the xref offsets stay right.
        data, n = re.subn(rb"/ToUnicode \d+ 0 R", lambda m: b" " * len(m.group()), data)
        old = b"/Ordering (UCS)\n/Registry (Adobe)"
        assert n == 1 and data.count(old) == 1
        data = data.replace(old, b"/Ordering (XYZ)\n/Registry (Adobe)")
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("pitch", [1.3, 1.75, 2.0, 2.4])
def test_vertical_writing_reads_in_order(tmp_path: Path, pitch: float) -> None:
    pdf = _pdf()
    _vertical_page(pdf, SENTENCE, per_column=20, size=14, pitch=pitch)
    layer = read_text_layer(_write(pdf, tmp_path / "v.pdf"), max_pages=5, min_words=5)
    (page,) = layer.pages
    # Without detect_vertical pdfminer gives one character per line, columns out of order.
    assert page.text == SENTENCE
    assert page.vertical is True and page.ocr_reason is None


def test_each_page_gets_its_own_direction(tmp_path: Path) -> None:
    pdf = _pdf()
    _vertical_page(pdf, SENTENCE * 2, per_column=25, size=12, pitch=1.75)
    _horizontal_page(pdf, LINES)
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.text(40, 80, ENGLISH)
    pdf.text(40, 94, ENGLISH.upper())
    path = _write(pdf, tmp_path / "mixed.pdf")
    vertical, horizontal, english = read_text_layer(path, max_pages=5, min_words=5).pages
    assert vertical.text == SENTENCE * 2 and vertical.vertical is True
    assert horizontal.text == "\n\n".join(LINES) and horizontal.vertical is False
    assert english.text == f"{ENGLISH}\n{ENGLISH.upper()}" and english.vertical is None
    # The horizontal pages get exactly the layout analysis they had before vertical writing.
    before = [page_text(layout)[0] for layout in extract_pages(path, laparams=LAPARAMS)]
    assert before[1:] == [horizontal.text, english.text]


def test_unmapped_cid_font_is_ocred_in_japanese(tmp_path: Path, settings: Settings) -> None:
    check_available("jpn")
    pdf = _pdf()
    pdf.set_lang("ja-JP")  # nothing else tells the language: the text layer is all (cid:N)
    _horizontal_page(pdf, LINES)
    path = _write(pdf, tmp_path / "unmapped.pdf", unmapped=True)
    (raw,) = read_text_layer(path, max_pages=5, min_words=5).pages
    assert raw.ocr_reason is not None and raw.text.count("(cid:") > 40
    assert raw.vertical is False  # (cid:N) placeholders still tell the direction

    extracted = extract_pdf(path, settings.model_copy(update={"ocr_dpi": 150}))
    (page,) = extracted.pages
    assert page.source == "ocr"
    assert "名前はまだ無い" in page.text and "記憶している" in page.text
    assert " " not in page.text  # preserve_interword_spaces: no space between characters
    assert extracted.metadata["ocr_pages"] == [1]
    assert extracted.metadata["ocr_languages"] == {"jpn": [1]}  # horizontal: no _vert model


def _layer(*pages: RawPage, declared: str | None = None) -> TextLayer:
    return TextLayer(pages=list(pages), title=None, author=None, language=declared)


def test_ocr_language_comes_from_page_fonts_document_then_lang() -> None:
    cids = "(cid:12)(cid:40)(cid:7) " * 20
    layer = _layer(
        RawPage(1, "これは日本語の文章です。" * 5),  # a good page: the document's language
        RawPage(2, cids, "mojibake", vertical=True),
        RawPage(3, cids, "mojibake", font_language="zh-Hant"),
        # Han alone says Chinese or Japanese, not which: the next source decides.
        RawPage(4, "山水花鳥風月" + cids, "mojibake", vertical=False),
        RawPage(5, "山水花鳥風月" + cids, "mojibake", font_language="zh-Hant"),
    )
    assert ocr_languages(layer, [2, 3, 4, 5], "eng") == {
        2: "jpn_vert",
        3: "chi_tra+chi_tra_vert",
        4: "jpn",
        5: "chi_tra+chi_tra_vert",
    }
    han = _layer(RawPage(1, "山水花鳥風月" + cids, "mojibake", vertical=False))
    assert ocr_languages(han, [1], "eng") == {1: "chi_sim"}
    nothing = _layer(RawPage(1, cids, "mojibake"))
    assert ocr_languages(nothing, [1], "eng") == {1: "eng"}
    declared = _layer(RawPage(1, cids, "mojibake"), declared="ja-JP")
    assert ocr_languages(declared, [1], "eng") == {1: "jpn+jpn_vert"}
    english = _layer(RawPage(1, "A scanned page " * 10, "few_words"), declared="ja")
    assert ocr_languages(english, [1], "eng") == {1: "eng"}  # Latin text outranks /Lang
