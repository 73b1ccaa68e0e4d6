"""Page images: PNG, JPEG, TIFF (every frame), WebP and BMP, each frame one page read by OCR.

A frame is turned upright before tesseract sees it: first as its EXIF ``Orientation`` says (a
phone photo), then as tesseract's orientation detection (``--psm 0``, formats/pdf/ocr.py's
:func:`~quire.formats.pdf.ocr.orientation`) finds it (a page scanned sideways); the turn is
kept in the page's ``metadata.rotated`` so that :func:`page_png` shows the reader exactly the
image OCR read and the word boxes (``metadata.ocr_words``, in pixels of that image) land on it.
The language is the one OSD's script calls for (Han, Cyrillic…), else ``QUIRE_OCR_LANG``, as
for a scanned PDF page (formats/pdf/reader.py). Pillow's ``MAX_IMAGE_PIXELS`` is the
decompression-bomb limit: a bigger image is refused before its pixels are decoded.
"""

from __future__ import annotations

import io
import logging
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from pathlib import Path

from PIL import Image, ImageOps, ImageSequence, UnidentifiedImageError

from quire.config import Settings
from quire.errors import CorruptFile, ResourceLimit
from quire.formats.pdf.ocr import (
    OcrPage,
    check_available,
    installed_fallbacks,
    orientation,
    read_image,
    tesseract_language,
)
from quire.formats.types import Extracted, Progress, no_progress
from quire.storage.records import Page

log = logging.getLogger(__name__)

#: Signature -> media type. WebP is ``RIFF`` + size + ``WEBP`` (checked in image_media_type).
SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"II*\x00", "image/tiff"),
    (b"MM\x00*", "image/tiff"),
    (b"BM", "image/bmp"),
)
#: Tesseract OSD's script -> the language tag formats/pdf/ocr.py's tesseract_language takes.
_SCRIPT_LANGUAGE = {
    "Han": "zh-Hans",
    "Japanese": "ja",
    "Hangul": "ko",
    "Korean": "ko",
    "Arabic": "ar",
    "Hebrew": "he",
    "Cyrillic": "ru",
    "Greek": "el",
    "Thai": "th",
    "Devanagari": "hi",
}
#: A resolution outside this range is a wrong header (72 dpi screenshots stay in).
_DPI_RANGE = (50, 1200)


def image_media_type(head: bytes) -> str | None:
    """The media type of an image Quire reads, from the file's first bytes; None otherwise."""
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    for magic, media in SIGNATURES:
        # "BM" could start a text file: a BMP's header has its pixel offset (byte 10) below 2 KB.
        if head.startswith(magic) and (magic != b"BM" or (len(head) > 14 and head[11] < 8)):
            return media
    return None


#: What Pillow raises on a damaged file (a TIFF whose next frame's directory is cut: TypeError).
DAMAGED = (OSError, SyntaxError, ValueError, EOFError, TypeError, KeyError)


def _check_size(image: Image.Image) -> None:
    # Pillow refuses over twice MAX_IMAGE_PIXELS and only warns between once and twice.
    if image.width * image.height > (Image.MAX_IMAGE_PIXELS or 0) > 0:
        raise ResourceLimit(_too_large(f"{image.width:,} × {image.height:,} pixels"))


def _too_large(what: str) -> str:
    return (
        f"The image is too large to read safely ({what}; the decompression-bomb limit is "
        f"{Image.MAX_IMAGE_PIXELS:,} pixels)."
    )


@contextmanager
def open_image(path: Path) -> Iterator[Image.Image]:
    """Open an image, refusing a decompression bomb and a file Pillow cannot read."""
    try:
        im = Image.open(path)
    except Image.DecompressionBombError as exc:
        raise ResourceLimit(_too_large(str(exc).split(" pixels")[0] + " pixels")) from exc
    except UnidentifiedImageError as exc:
        raise CorruptFile(
            "The image is damaged or truncated, or not a PNG, JPEG, TIFF, WebP or BMP."
        ) from exc
    except DAMAGED as exc:
        raise CorruptFile(f"The image is damaged or truncated: {exc}") from exc
    with im:
        _check_size(im)
        yield im


def _upright(frame: Image.Image, rotated: int = 0) -> Image.Image:
    """The frame as a reader holds it: EXIF orientation applied, turned ``rotated`` degrees
    clockwise, in a mode PNG and tesseract take (transparency on white)."""
    image = ImageOps.exif_transpose(frame)
    if image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info:
        rgba = image.convert("RGBA")
        image = Image.new("RGB", rgba.size, "white")
        image.paste(rgba, mask=rgba.getchannel("A"))
    elif image.mode not in ("1", "L", "RGB"):
        image = image.convert("RGB")
    if rotated:
        image = image.rotate(-rotated, expand=True)  # Pillow turns counter-clockwise
    image.load()
    return image


def _dpi(frame: Image.Image) -> int | None:
    dpi = frame.info.get("dpi")
    try:
        value = round(float(dpi[0])) if dpi else None
    except (TypeError, ValueError, IndexError):
        return None
    return value if value and _DPI_RANGE[0] <= value <= _DPI_RANGE[1] else None


def page_png(path: Path, number: int, rotated: int = 0) -> bytes:
    """Page ``number`` (1-based frame) of an image file as PNG, as OCR read it."""
    with open_image(path) as im:
        try:
            im.seek(number - 1)
            image = _upright(im, rotated)
        except EOFError as exc:
            raise CorruptFile(f"The image has no frame {number}.") from exc
        except DAMAGED as exc:
            raise CorruptFile(f"Frame {number} of the image is damaged: {exc}") from exc
        out = io.BytesIO()
        image.save(out, "PNG")
    return out.getvalue()


def _frames(path: Path, out_dir: Path, max_pages: int) -> list[tuple[Path, int | None]]:
    """Each frame saved upright (EXIF) as a PNG in ``out_dir``, with its resolution."""
    saved: list[tuple[Path, int | None]] = []
    with open_image(path) as im:
        try:
            for number, frame in enumerate(ImageSequence.Iterator(im), start=1):
                if number > max_pages:
                    raise ResourceLimit(f"The image has over {max_pages} frames.")
                _check_size(frame)
                png = out_dir / f"frame-{number}.png"
                _upright(frame).save(png, "PNG")
                saved.append((png, _dpi(frame)))
        except DAMAGED as exc:
            where = f"frame {len(saved) + 1}" if saved else "the image"
            raise CorruptFile(f"The image is damaged or truncated ({where}): {exc}") from exc
    if not saved:
        raise CorruptFile("The image has no frame to read.")
    return saved


def _turned(png: Path) -> tuple[int, str | None]:
    """Rotate ``png`` in place to upright as OSD finds it: the turn and the script seen."""
    rotated, script = orientation(png)
    if rotated:
        with Image.open(png) as im:
            turned = im.rotate(-rotated, expand=True)
        turned.save(png, "PNG")
    return rotated, script


def _language(script: str | None, default: str) -> str:
    """The tesseract language for a page in ``script`` (OSD's name), else ``default``."""
    tag = _SCRIPT_LANGUAGE.get(script or "")
    return (tesseract_language(tag, None) if tag else None) or default


def _read(frame: tuple[Path, int | None], lang: str, number: int) -> OcrPage:
    png, dpi = frame
    return read_image(png, dpi=dpi, lang=lang, what=f"page {number}", in_pixels=True)


def extract_image(path: Path, settings: Settings, progress: Progress = no_progress) -> Extracted:
    """Every frame of an image file OCR'd as a page, turned upright first."""
    check_available(settings.ocr_lang)
    with tempfile.TemporaryDirectory(prefix="quire-image-") as tmp:
        frames = _frames(path, Path(tmp), settings.max_pages)
        progress("extract", 1.0)
        progress("ocr", 0.0)
        workers = max(1, settings.ocr_workers)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ocr") as pool:
            turns = list(pool.map(_turned, [png for png, _ in frames]))
            wanted = {
                number: _language(script, settings.ocr_lang)
                for number, (_, script) in enumerate(turns, start=1)
            }
            languages, notices = installed_fallbacks(wanted, settings.ocr_lang)
            futures = {
                pool.submit(_read, frame, languages[n], n): n
                for n, frame in enumerate(frames, start=1)
            }
            read: dict[int, OcrPage] = {}
            for future in as_completed(futures):
                read[futures[future]] = future.result()
                progress("ocr", len(read) / len(frames))
            reads = [read[n] for n in sorted(read)]
    pages = [
        Page(
            number,
            read.text,
            source="ocr",
            meta={"ocr_words": read.words, "rotated": rotated},
        )
        for number, (read, (rotated, _)) in enumerate(zip(reads, turns, strict=True), start=1)
    ]
    by_language: dict[str, list[int]] = {}
    for number, lang in languages.items():
        by_language.setdefault(lang, []).append(number)
    metadata = {
        "ocr_pages": [p.number for p in pages],
        "ocr_languages": by_language,
        "rotated_pages": [p.number for p in pages if p.meta["rotated"]],
    }
    if notices:
        metadata["notices"] = notices
    log.info("OCR read %d page(s) of image %s", len(pages), path.name)
    return Extracted(kind="image", title=None, author=None, pages=pages, metadata=metadata)
