"""OCR page by page: poppler renders one page, tesseract reads it.

Each page is its own pair of subprocesses (``pdftoppm`` for exactly that page, then tesseract
through pytesseract), so memory stays at one page image and pages run in parallel on a pool of
``workers`` threads (the threads only wait on the subprocesses). Tesseract's OpenMP threads
make it several times slower on a shared machine, so ``OMP_THREAD_LIMIT=1`` is set for it.

Each page may have its own language (formats/pdf/reader.py picks it from the page's script):
:func:`installed_fallbacks` replaces a language whose data is not installed by the nearest one
that is (``jpn_vert`` by ``jpn``, then the configured default) and says so in a notice.
Chinese and Japanese are read with ``preserve_interword_spaces``: without it tesseract puts a
space between most characters ("吾輩 は 猫 で ある").

The same tesseract run writes its TSV beside the text, so a scanned page keeps its word boxes
(:class:`OcrPage`'s ``words``, stored as the page's ``metadata.ocr_words``) for the source
viewer to highlight a passage over the page image, at no extra OCR time.
"""

from __future__ import annotations

import logging
import os
import shutil
import struct
import subprocess
import tempfile
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytesseract

from quire.errors import CorruptFile, OcrUnavailable, ResourceLimit

log = logging.getLogger(__name__)

RENDER_TIMEOUT_S = 120
OCR_TIMEOUT_S = 300
#: Below this, a guess of tesseract's orientation detection is a coin toss (upright pages
#: of the test images score 10-35).
MIN_OSD_CONFIDENCE = 2.0
INSTALL_HINT = "install it with `apt-get install tesseract-ocr tesseract-ocr-eng poppler-utils`"

_env_lock = threading.Lock()


_UNSPACED = ("jpn", "chi_sim", "chi_tra")
# Tesseract's language for each of text/scripts.py's languages ("latin" is the default's).
_TESSERACT = {
    "ja": "jpn",
    "zh-Hans": "chi_sim",
    "zh-Hant": "chi_tra",
    "ko": "kor",
    "ar": "ara",
    "he": "heb",
    "ru": "rus",
    "el": "ell",
    "th": "tha",
    "hi": "hin",
}
_VERTICAL_MODELS = ("jpn", "chi_sim", "chi_tra", "kor")
# Written vertically often enough that a page of unknown direction is read both ways.
_OFTEN_VERTICAL = ("jpn", "chi_tra")


def tesseract_language(language: str, vertical: bool | None) -> str | None:
    """Tesseract's language for a page in ``language`` (a tag of text/scripts.py) set
    vertically (True), horizontally (False) or either way (None); None for Latin script."""
    code = _TESSERACT.get(language)
    if code is None or code not in _VERTICAL_MODELS:
        return code
    if vertical:
        return f"{code}_vert"
    if vertical is None and code in _OFTEN_VERTICAL:
        return f"{code}+{code}_vert"
    return code


def check_available(lang: str) -> set[str]:
    """Raise OcrUnavailable unless pdftoppm, tesseract and every language in ``lang`` exist;
    return the installed languages."""
    if shutil.which("pdftoppm") is None:
        raise OcrUnavailable(f"OCR needs poppler's `pdftoppm`, not installed: {INSTALL_HINT}.")
    cmd = str(pytesseract.pytesseract.tesseract_cmd)
    if shutil.which(cmd) is None:
        raise OcrUnavailable(f"OCR needs `tesseract`, not installed: {INSTALL_HINT}.")
    try:
        installed = set(pytesseract.get_languages(config=""))
    except (pytesseract.TesseractError, OSError, RuntimeError) as exc:
        raise OcrUnavailable(f"tesseract does not run ({exc}); {INSTALL_HINT}.") from exc
    missing = [code for code in lang.split("+") if code and code not in installed]
    if missing:
        raise OcrUnavailable(
            f"Tesseract language data missing for {'+'.join(missing)}: "
            f"`apt-get install {_packages(missing)}`."
        )
    return installed


def _packages(codes: list[str]) -> str:
    return " ".join(f"tesseract-ocr-{code.replace('_', '-')}" for code in codes)


def _nearest_installed(lang: str, installed: set[str]) -> str | None:
    """``lang`` with its missing parts dropped or replaced (``jpn_vert`` by ``jpn``)."""
    parts: list[str] = []
    for code in lang.split("+"):
        for candidate in (code, code.removesuffix("_vert")):
            if candidate in installed and candidate not in parts:
                parts.append(candidate)
                break
    return "+".join(parts) or None


def installed_fallbacks(
    languages: Mapping[int, str], default: str
) -> tuple[dict[int, str], list[str]]:
    """Each page's language, with the ones not installed replaced (see the module docstring),
    and one notice per missing language. Raises OcrUnavailable as check_available(default)."""
    installed = check_available(default)
    chosen: dict[int, str] = {}
    missing: dict[tuple[str, str], list[int]] = {}
    for number, lang in sorted(languages.items()):
        use = _nearest_installed(lang, installed) or default
        chosen[number] = use
        if use != lang:
            missing.setdefault((lang, use), []).append(number)
    notices = []
    for (lang, use), numbers in missing.items():
        absent = [code for code in lang.split("+") if code not in installed]
        notice = (
            f"Tesseract has no {'+'.join(absent)} language data (`apt-get install "
            f"{_packages(absent)}`): {_pages(numbers)} read as {use} instead of {lang}."
        )
        log.warning("%s", notice)
        notices.append(notice)
    return chosen, notices


def _pages(numbers: list[int]) -> str:
    shown = ", ".join(map(str, numbers[:10])) + (", …" if len(numbers) > 10 else "")
    return f"page{'s' if len(numbers) > 1 else ''} {shown}"


def _limit_tesseract_threads() -> None:
    # pytesseract hands os.environ to tesseract and has no env parameter. OMP_THREAD_LIMIT is
    # read by an OpenMP runtime when it starts, so setting it here reaches the tesseract
    # children and nothing already running in this process.
    with _env_lock:
        os.environ["OMP_THREAD_LIMIT"] = "1"


def render_page(pdf: Path, number: int, dpi: int, out_dir: Path) -> Path:
    """Render page ``number`` (1-based) of ``pdf`` to a grey PNG in ``out_dir``."""
    prefix = out_dir / f"page-{number}"
    cmd = ["pdftoppm", "-f", str(number), "-l", str(number), "-r", str(dpi), "-gray", "-png"]
    # The crop box is the page a viewer shows (pdf.js too), so word boxes land on it.
    cmd += ["-cropbox", "-singlefile", str(pdf), str(prefix)]
    try:
        done = subprocess.run(cmd, capture_output=True, timeout=RENDER_TIMEOUT_S, check=False)
    except FileNotFoundError as exc:
        raise OcrUnavailable(f"`pdftoppm` is not installed: {INSTALL_HINT}.") from exc
    except subprocess.TimeoutExpired as exc:
        raise ResourceLimit(f"Rendering page {number} took over {RENDER_TIMEOUT_S} s.") from exc
    image = prefix.with_suffix(".png")
    if done.returncode != 0 or not image.exists():
        reason = done.stderr.decode("utf-8", "replace").strip() or f"exit {done.returncode}"
        raise CorruptFile(f"Page {number} cannot be rendered for OCR: {reason}")
    return image


@dataclass(frozen=True)
class OcrPage:
    """Tesseract's text for a page and its word boxes.

    ``words`` is ``{"width": W, "height": H, "unit": "pt", "words": [[x0, y0, x1, y1, text]]}``:
    points (pixels for an image file: ``"unit": "px"``) from the page's top-left corner (W and
    H are the rendered page's size), words in
    tesseract's reading order (block, paragraph, line), numbers rounded to 0.1."""

    text: str
    words: dict[str, Any]


def _png_size(image: Path) -> tuple[int, int]:
    with image.open("rb") as fh:
        header = fh.read(24)  # the signature, then the IHDR chunk: width and height first
    width, height = struct.unpack(">II", header[16:24])
    return int(width), int(height)


def word_boxes(tsv: str, *, width_px: int, height_px: int, dpi: int | None) -> dict[str, Any]:
    """The ``ocr_words`` of a page from tesseract's TSV of its image rendered at ``dpi``; in
    the image's pixels (``"unit": "px"``) when ``dpi`` is None."""
    scale = 72 / dpi if dpi else 1.0
    words: list[list[float | str]] = []
    for line in tsv.splitlines()[1:]:  # the first line names the columns
        cols = line.split("\t")
        # level page block par line word left top width height conf text; 5 is a word
        if len(cols) < 12 or cols[0] != "5":
            continue
        text = "\t".join(cols[11:]).strip()
        if not text or float(cols[10]) < 0:
            continue
        left, top, w, h = (int(c) for c in cols[6:10])
        box = (left, top, left + w, top + h)
        words.append([*(round(v * scale, 1) for v in box), text])
    return {
        "width": round(width_px * scale, 1),
        "height": round(height_px * scale, 1),
        "unit": "pt" if dpi else "px",
        "words": words,
    }


def _run_tesseract(image: Path, base: Path, lang: str, config: str, what: str) -> None:
    """Run tesseract once on ``image`` (its outputs beside ``base``), its errors ours."""
    _limit_tesseract_threads()
    try:
        pytesseract.pytesseract.run_tesseract(
            str(image), str(base), "txt", lang, config=config, timeout=OCR_TIMEOUT_S
        )
    except pytesseract.TesseractNotFoundError as exc:
        raise OcrUnavailable(f"`tesseract` is not installed: {INSTALL_HINT}.") from exc
    except pytesseract.TesseractError as exc:
        raise CorruptFile(f"OCR failed on {what}: {exc.message}") from exc
    except RuntimeError as exc:  # pytesseract's timeout; TesseractError is caught above
        raise ResourceLimit(f"OCR of {what} took over {OCR_TIMEOUT_S} s.") from exc


def read_image(
    image: Path, *, dpi: int | None, lang: str, what: str = "the page", in_pixels: bool = False
) -> OcrPage:
    """Read a PNG with tesseract: its text and word boxes from one run. ``dpi``: the image's
    resolution (None: tesseract estimates it); ``in_pixels``: boxes in the image's pixels,
    not points; ``what`` names the image in errors."""
    config = f"--dpi {dpi}" if dpi else ""
    if any(code.removesuffix("_vert") in _UNSPACED for code in lang.split("+")):
        config += " -c preserve_interword_spaces=1"
    # pytesseract's run_and_get_multiple_output takes no config (--dpi, the spacing above), so
    # tesseract is run here with the txt config file and TSV switched on: one recognition.
    config += " -c tessedit_create_tsv=1"
    base = image.with_name(f"{image.stem}-ocr")
    _run_tesseract(image, base, lang, config, what)
    text = base.with_suffix(".txt").read_text("utf-8")
    tsv = base.with_suffix(".tsv").read_text("utf-8")
    width, height = _png_size(image)
    boxes_dpi = None if in_pixels or not dpi else dpi
    return OcrPage(text, word_boxes(tsv, width_px=width, height_px=height, dpi=boxes_dpi))


def orientation(image: Path) -> tuple[int, str | None]:
    """Tesseract's orientation detection (``--psm 0``) on an image: the clockwise rotation in
    degrees that makes it upright (0 when it cannot tell: too little text) and the script it
    saw ("Latin", "Han", "Cyrillic"…; None when it cannot tell)."""
    base = image.with_name(f"{image.stem}-osd")
    try:
        _run_tesseract(image, base, "osd", "--psm 0", "orientation detection")
    except CorruptFile as exc:  # "Too few characters": nothing to turn, nothing to read
        log.info("%s: no orientation (%s)", image.name, exc)
        return 0, None
    found = dict(
        (key.strip(), value.strip())
        for key, _, value in (
            line.partition(":") for line in base.with_suffix(".osd").read_text().splitlines()
        )
    )
    rotate = int(found.get("Rotate", "0") or 0) % 360
    # The script's own confidence is a margin over the next script, small between Han and
    # Japanese (under 1 on a clean Japanese page): the script is taken when the page had text
    # enough to be sure of its orientation.
    if float(found.get("Orientation confidence", "0") or 0) < MIN_OSD_CONFIDENCE:
        return 0, None
    return rotate, found.get("Script")


def ocr_page(pdf: Path, number: int, *, dpi: int, lang: str) -> OcrPage:
    """Render one page and read it with tesseract: its text and word boxes from one run."""
    with tempfile.TemporaryDirectory(prefix="quire-ocr-") as tmp:
        image = render_page(pdf, number, dpi, Path(tmp))
        return read_image(image, dpi=dpi, lang=lang, what=f"page {number}")


def ocr_pages(
    pdf: Path,
    numbers: list[int],
    *,
    dpi: int,
    lang: str,
    workers: int,
    on_page: Callable[[int, int], None] | None = None,
    languages: Mapping[int, str] | None = None,
) -> dict[int, OcrPage]:
    """OCR the given 1-based pages in parallel; ``on_page(done, total)`` after each one.

    A page is read in ``languages[number]`` when given (installed: see installed_fallbacks),
    else in ``lang``."""
    if not numbers:
        return {}
    check_available(lang)
    langs = languages or {}
    results: dict[int, OcrPage] = {}
    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="ocr") as pool:
        futures = {
            pool.submit(ocr_page, pdf, n, dpi=dpi, lang=langs.get(n, lang)): n for n in numbers
        }
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_EXCEPTION)
            for future in done:
                exc = future.exception()
                if exc is not None:
                    for other in pending:
                        other.cancel()
                    raise exc
                results[futures[future]] = future.result()
                if on_page is not None:
                    on_page(len(results), len(numbers))
    log.info("OCR read %d page(s) of %s", len(results), pdf.name)
    return results
