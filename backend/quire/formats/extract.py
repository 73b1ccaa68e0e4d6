"""One entry point for the worker: detect the kind, extract, clean, return pages."""

from __future__ import annotations

import dataclasses
import logging
import re
import tempfile
from collections.abc import Callable
from pathlib import Path

from quire.config import Settings
from quire.formats.bibliographic import read_bibliographic
from quire.formats.chat_export import extract_conversation
from quire.formats.detect import decode_text, detect_kind, legacy_format
from quire.formats.epub import extract_epub
from quire.formats.image import extract_image
from quire.formats.markdown import first_line_title, parse_markdown, parse_text
from quire.formats.office.convert import convert_legacy
from quire.formats.office.odf import extract_odp, extract_odt
from quire.formats.office.sheets import extract_ods, extract_xlsx
from quire.formats.office.slides import extract_pptx
from quire.formats.office.word import extract_word
from quire.formats.pdf.reader import extract_pdf
from quire.formats.pdf.structure import apply_outline
from quire.formats.perplexity_md import parse_perplexity_markdown, with_structure
from quire.formats.types import Extracted, Progress, no_progress
from quire.formats.web import read_web
from quire.storage.records import Kind, Page
from quire.text.clean import clean_page_text, strip_running_headers

log = logging.getLogger(__name__)


_WORD = re.compile(
    r"\(?[^\W\d_]{2,}[.,:;!?)]?"  # a word, maybe in brackets or before punctuation
    r"|\d{1,4}(?:[/.\-]\d{1,4})*[.,:)]?"  # 1998, 12/2024, 3.1
    r"|&|-|–|—"
)
_PUNCT_RUN = re.compile(r"[^\w\s]{3,}")
#: The reader of each Office kind (formats/office/, docs/sources/office.md).
OFFICE_READERS: dict[Kind, Callable[..., Extracted]] = {
    "docx": extract_word,
    "odt": extract_odt,
    "pptx": extract_pptx,
    "odp": extract_odp,
    "xlsx": extract_xlsx,
    "ods": extract_ods,
}


def reads_like_a_title(line: str) -> bool:
    """Mostly words: three quarters of the tokens words, short numbers or joining marks, three
    quarters of the characters letters, digits or spaces, and no run of punctuation."""
    tokens = line.split()
    words = sum(bool(_WORD.fullmatch(t)) for t in tokens)
    clean = sum(ch.isalnum() or ch.isspace() for ch in line)
    return words >= 0.75 * len(tokens) and clean >= 0.75 * len(line) and not _PUNCT_RUN.search(line)


def _clean_pages(pages: list[Page], *, pdf: bool) -> tuple[list[Page], str | None]:
    """Cleaned pages and, for PDFs, a fallback title taken before running headers go."""
    # Bare numbers are page numbers only in paginated sources; in markdown they may be content.
    texts = [clean_page_text(p.text, drop_page_numbers=pdf) for p in pages]
    first_line = None
    if pdf:
        # A running header is often the best title a PDF without metadata has; OCR noise
        # ("GRUMMAN .:.:.S20G 25) Ata") is not, and the file name stays the title then.
        first_line = first_line_title("\n".join(texts))
        if first_line is not None and not reads_like_a_title(first_line):
            first_line = None
        texts = strip_running_headers(texts)
    cleaned = [dataclasses.replace(p, text=t) for p, t in zip(pages, texts, strict=True)]
    return cleaned, first_line


def extract_file(
    path: Path,
    settings: Settings,
    progress: Progress = no_progress,
    partial: Callable[[Extracted], None] | None = None,
) -> Extracted:
    """Detect, extract and clean one file; stages reported to ``progress`` are extract and ocr.

    ``partial``: called with the PDF's text layer, cleaned like the final pages, before the
    pages that need OCR are read (so that the document can be searched meanwhile)."""
    kind = detect_kind(path)
    log.info("extracting %s as %s", path.name, kind)
    progress("extract", 0.0)
    if kind == "pdf":
        before_ocr = (lambda ex: partial(_finish(path, kind, ex))) if partial else None
        extracted = extract_pdf(path, settings, progress, before_ocr=before_ocr)
    elif kind == "image":
        extracted = extract_image(path, settings, progress)
    elif kind == "epub":
        extracted = extract_epub(
            path,
            lambda fraction: progress("extract", fraction),
            max_unpacked_bytes=settings.max_unpacked_mb << 20,
        )
    elif kind in OFFICE_READERS:
        # Born digital, read block by block and cleaned there: the page cuts, heading offsets
        # and labels the readers set stay as they are.
        extracted = _read_office(path, kind, settings)
        progress("extract", 1.0)
        return extracted
    elif kind == "web":
        # Cut into sections and cleaned block by block as an Office file is (formats/web.py).
        extracted = read_web(path)
        progress("extract", 1.0)
        return extracted
    elif kind in ("chatgpt", "claude"):
        # One stored conversation (quire import keeps each so); born digital, so not cleaned.
        return extract_conversation(path, kind)
    else:
        text = decode_text(path.read_bytes())
        if kind == "perplexity":
            extracted = parse_perplexity_markdown(text)
        elif kind == "markdown":
            extracted = parse_markdown(text)
        else:
            extracted = parse_text(text)
        progress("extract", 1.0)
    return _finish(path, kind, extracted)


def _read_office(path: Path, kind: Kind, settings: Settings) -> Extracted:
    """An Office file through its reader; a legacy one (doc, ppt, xls, rtf) converted first."""
    limit = settings.max_unpacked_mb << 20
    legacy = legacy_format(path)
    if legacy is None:
        return OFFICE_READERS[kind](path, max_unpacked_bytes=limit)
    with tempfile.TemporaryDirectory(prefix="quire-legacy-") as tmp:
        converted = convert_legacy(path, legacy, Path(tmp), settings)
        extracted = OFFICE_READERS[kind](converted, max_unpacked_bytes=limit)
    extracted.metadata["converted_from"] = legacy
    return extracted


def _finish(path: Path, kind: Kind, extracted: Extracted) -> Extracted:
    """Clean the pages, apply the outline and structure, read the citation metadata."""
    paginated = kind in ("pdf", "image")
    extracted.pages, first_line = _clean_pages(extracted.pages, pdf=paginated)
    # Sections start at offsets in the clean text, so the outline is applied after cleaning.
    extracted.pages = apply_outline(extracted.pages, extracted.outline)
    if kind == "perplexity":  # the same for a turn's sections and footnote markers
        extracted.pages = [with_structure(p) for p in extracted.pages]
    extracted.metadata.update(read_bibliographic(path, kind, extracted.pages))
    if not extracted.title and kind != "image":  # an image's first OCR line is often noise
        extracted.title = first_line
    return extracted
