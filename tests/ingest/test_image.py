"""Page images (formats/image.py): the real scans and photos of docs/office/images read by OCR,
turned upright by EXIF and by tesseract's orientation detection; bad files refused clearly."""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont

from quire.config import Settings
from quire.errors import CorruptFile, EmptyFile, ResourceLimit
from quire.formats.extract import extract_file
from quire.formats.image import page_png
from tests.conftest import DOCS
from tests.ingest.test_pdf_cjk import FONT

IMAGES = DOCS / "office" / "images"
TYPEWRITER = IMAGES / "linzensoep-typewriter-nl.png"
# Phrases read off each file by `tesseract FILE -` (5.x, eng), one per page.
PHRASES = {
    "fraktur-1555-dedication.jpg": ["Konig"],
    "linn-sequencer-brochure.png": ["32 Track MIDI Sequence Recorder"],
    "linzensoep-typewriter-nl.png": ["Linzensoep a la Waterman"],
    "magazine-pages-2p.tif": ["AUGUST 9, 1993", "spinal tap"],
    "physics-today-feynman-memories.tif": ["RICHARD FEYNMAN"],
    "travel-leisure-dubrovnik-unlv.tif": ["Dalmatian coast"],
    "used-car-deals-magazine.tif": ["have to be a drag"],
}


def _small_typewriter() -> Image.Image:
    """The typewriter page at half size (still ~375 dpi): the same words, a quarter of the OCR."""
    with Image.open(TYPEWRITER) as im:
        return im.convert("L").reduce(2)


def _png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body)
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b""))
        + chunk(b"IEND", b"")
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PHRASES))
def test_each_real_image_is_read_page_by_page(name: str) -> None:
    ex = extract_file(IMAGES / name, Settings())
    assert ex.kind == "image" and ex.title is None
    assert [p.number for p in ex.pages] == list(range(1, len(PHRASES[name]) + 1))
    for page, phrase in zip(ex.pages, PHRASES[name], strict=True):
        assert phrase in " ".join(page.text.split())
        assert page.source == "ocr" and page.meta["rotated"] == 0
        boxes = page.meta["ocr_words"]
        assert boxes["unit"] == "px" and len(boxes["words"]) > 20


def test_a_scanned_page_is_read_with_its_word_boxes_in_pixels() -> None:
    ex = extract_file(TYPEWRITER, Settings())
    [page] = ex.pages
    assert "Linzensoep a la Waterman" in page.text and "laurier, kruidnagel" in page.text
    boxes = page.meta["ocr_words"]
    assert (boxes["width"], boxes["height"], boxes["unit"]) == (4000, 2864, "px")
    assert all(0 <= w[0] < w[2] <= 4000 and 0 <= w[1] < w[3] <= 2864 for w in boxes["words"])
    assert ex.metadata["ocr_languages"] == {"eng": [1]}


def test_a_page_scanned_sideways_is_turned_upright(tmp_path: Path) -> None:
    upright = _small_typewriter()
    upright.save(tmp_path / "upright.png")
    upright.rotate(90, expand=True).save(tmp_path / "sideways.png")  # counter-clockwise
    settings = Settings()
    want = extract_file(tmp_path / "upright.png", settings).pages[0]
    [page] = extract_file(tmp_path / "sideways.png", settings).pages
    assert page.meta["rotated"] == 90  # turned 90° clockwise back
    assert page.text == want.text
    assert page.meta["ocr_words"] == want.meta["ocr_words"]
    # The page image is the one OCR read: upright, its word boxes on it.
    with Image.open(io.BytesIO(page_png(tmp_path / "sideways.png", 1, 90))) as im:
        assert im.size == upright.size


def test_a_photo_is_turned_by_its_exif_orientation(tmp_path: Path) -> None:
    upright = _small_typewriter().convert("RGB")
    exif = Image.Exif()
    exif[0x0112] = 6  # Orientation: the camera held sideways; show it turned 90° clockwise
    upright.rotate(90, expand=True).save(tmp_path / "photo.jpg", exif=exif, quality=95)
    [page] = extract_file(tmp_path / "photo.jpg", Settings()).pages
    assert page.meta["rotated"] == 0  # EXIF already made it upright
    assert "Linzensoep a la Waterman" in page.text
    assert (page.meta["ocr_words"]["width"], page.meta["ocr_words"]["height"]) == upright.size


def test_the_script_osd_sees_chooses_the_language(tmp_path: Path) -> None:
    # As a scanned PDF page is read in its own script: here Japanese, with no text to go on.
    text = (
        "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。何でも薄暗いじめじめ"
        "した所でニャーニャー泣いていた事だけは記憶している。吾輩はここで始めて人間というものを見た。"
    )
    lines = [text[i : i + 20] for i in range(0, len(text), 20)]
    page = Image.new("L", (1000, 500), "white")
    draw = ImageDraw.Draw(page)
    for i, line in enumerate(lines):
        draw.text((60, 60 + 80 * i), line, font=ImageFont.truetype(str(FONT), 48), fill="black")
    page.save(tmp_path / "neko.png")
    ex = extract_file(tmp_path / "neko.png", Settings(ocr_lang="eng"))
    assert ex.metadata["ocr_languages"] == {"jpn+jpn_vert": [1]}
    assert "名前はまだ無い" in ex.pages[0].text


def test_a_decompression_bomb_is_refused_before_decoding(tmp_path: Path) -> None:
    path = tmp_path / "bomb.png"
    path.write_bytes(_png(30_000, 30_000))
    with pytest.raises(ResourceLimit, match="too large to read safely.*decompression-bomb"):
        extract_file(path, Settings())


@pytest.mark.filterwarnings("ignore:Corrupt EXIF data")
def test_a_truncated_tiff_is_a_clear_error(tmp_path: Path) -> None:
    data = (IMAGES / "magazine-pages-2p.tif").read_bytes()
    for cut in (len(data) // 2, len(data) * 5 // 6):
        path = tmp_path / f"cut-{cut}.tif"
        path.write_bytes(data[:cut])
        with pytest.raises(CorruptFile, match="damaged or truncated"):
            extract_file(path, Settings())


def test_an_empty_or_textual_png_is_not_an_image(tmp_path: Path) -> None:
    (tmp_path / "zero.png").write_bytes(b"")
    with pytest.raises(EmptyFile):
        extract_file(tmp_path / "zero.png", Settings())
    # The bytes decide, never the name (as for a PDF named .docx): a text file is text.
    (tmp_path / "notes.png").write_text("Lentil soup needs four ounces of lentils.\n")
    assert extract_file(tmp_path / "notes.png", Settings()).kind == "text"
