"""Which formats this machine reads, and why: the tools found (tesseract for scanned pages,
LibreOffice for renditions and legacy Office files), for ``quire doctor`` and /api/health."""

from __future__ import annotations

import functools
import shutil
from dataclasses import dataclass

from quire.config import Settings
from quire.formats.office.convert import INSTALL_HINT, soffice, version


@dataclass(frozen=True)
class FormatStatus:
    """One group of formats: whether it is read here, and why (or why not)."""

    formats: str
    enabled: bool
    why: str


@functools.lru_cache(maxsize=8)
def _libreoffice(command: str | None) -> str | None:
    return version(command) if command else None


def format_status(settings: Settings) -> list[FormatStatus]:
    """Every group of formats with its state, the always-read ones first."""
    command = soffice(settings)
    found = _libreoffice(command)
    if found:
        lo_why = f"{found} found ({command})"
    elif settings.soffice:
        lo_why = f"LibreOffice not found: {INSTALL_HINT}"
    else:
        lo_why = "LibreOffice turned off (QUIRE_SOFFICE is empty)"
    tesseract = shutil.which("tesseract")
    pdftoppm = shutil.which("pdftoppm")
    ocr_why = (
        f"tesseract found ({tesseract})"
        if tesseract and pdftoppm
        else "tesseract or poppler not found: apt install tesseract-ocr poppler-utils"
    )
    return [
        FormatStatus("PDF (text layer), EPUB, markdown, text, chat exports", True, "built in"),
        FormatStatus("Word .docx/.docm, OpenDocument .odt", True, "built in (python readers)"),
        FormatStatus("PowerPoint .pptx, OpenDocument .odp", True, "built in (python readers)"),
        FormatStatus("Excel .xlsx, OpenDocument .ods", True, "built in (openpyxl, lxml)"),
        FormatStatus(
            "web pages .html/.htm/.xhtml, .mhtml/.mht, SingleFile",
            True,
            "built in (readability-lxml, lxml)",
        ),
        FormatStatus("scanned PDF pages (OCR)", bool(tesseract and pdftoppm), ocr_why),
        FormatStatus("rendered view of Word, OpenDocument and slides", bool(found), lo_why),
        FormatStatus("legacy .doc, .ppt, .xls and .rtf", bool(found), lo_why),
    ]
