"""OCR page by page: poppler renders one page, tesseract reads it.

Each page is its own pair of subprocesses (``pdftoppm`` for exactly that page, then tesseract
through pytesseract), so memory stays at one page image and pages run in parallel on a pool of
``workers`` threads (the threads only wait on the subprocesses). Tesseract's OpenMP threads
make it several times slower on a shared machine, so ``OMP_THREAD_LIMIT=1`` is set for it.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from pathlib import Path

import pytesseract

from quire.errors import CorruptFile, OcrUnavailable, ResourceLimit

log = logging.getLogger(__name__)

RENDER_TIMEOUT_S = 120
OCR_TIMEOUT_S = 300
INSTALL_HINT = "install it with `apt-get install tesseract-ocr tesseract-ocr-eng poppler-utils`"

_env_lock = threading.Lock()


def check_available(lang: str) -> None:
    """Raise OcrUnavailable unless pdftoppm, tesseract and every language in ``lang`` exist."""
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
        packages = " ".join(f"tesseract-ocr-{code}" for code in missing)
        raise OcrUnavailable(
            f"Tesseract language data missing for {'+'.join(missing)}: "
            f"`apt-get install {packages}`."
        )


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
    cmd += ["-singlefile", str(pdf), str(prefix)]
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


def ocr_page(pdf: Path, number: int, *, dpi: int, lang: str) -> str:
    """Render one page and return tesseract's text for it."""
    with tempfile.TemporaryDirectory(prefix="quire-ocr-") as tmp:
        image = render_page(pdf, number, dpi, Path(tmp))
        try:
            text = pytesseract.image_to_string(
                str(image), lang=lang, config=f"--dpi {dpi}", timeout=OCR_TIMEOUT_S
            )
        except pytesseract.TesseractNotFoundError as exc:
            raise OcrUnavailable(f"`tesseract` is not installed: {INSTALL_HINT}.") from exc
        except pytesseract.TesseractError as exc:
            raise CorruptFile(f"OCR failed on page {number}: {exc.message}") from exc
        except RuntimeError as exc:  # pytesseract's timeout; TesseractError is caught above
            raise ResourceLimit(f"OCR of page {number} took over {OCR_TIMEOUT_S} s.") from exc
    return str(text)


def ocr_pages(
    pdf: Path,
    numbers: list[int],
    *,
    dpi: int,
    lang: str,
    workers: int,
    on_page: Callable[[int, int], None] | None = None,
) -> dict[int, str]:
    """OCR the given 1-based pages in parallel; ``on_page(done, total)`` after each one."""
    if not numbers:
        return {}
    check_available(lang)
    _limit_tesseract_threads()
    results: dict[int, str] = {}
    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="ocr") as pool:
        futures = {pool.submit(ocr_page, pdf, n, dpi=dpi, lang=lang): n for n in numbers}
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
