"""The pages of a PDF: its text layer (formats/pdf/text.py), replaced by OCR on the pages that
need it (formats/pdf/ocr.py).

OCR reads a page in its own script (formats/pdf/ocr.py's ``tesseract_language``): the language is
the first that can be told from the page's text, its fonts' CID character collection
(Adobe-Japan1, -GB1, -CNS1, -Korea1), the text of the document's other pages, or the
catalog's ``/Lang``; Latin script, or nothing to go on, takes ``QUIRE_OCR_LANG``. A vertical
page is read with the ``_vert`` model; a page of unknown direction in Japanese or traditional
Chinese with both.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from quire.config import Settings
from quire.errors import OcrUnavailable
from quire.formats.pdf.ocr import OcrPage, installed_fallbacks, ocr_pages, tesseract_language
from quire.formats.pdf.text import (
    CID,
    RawPage,
    TextLayer,
    count_words,
    read_text_layer,
    spacing_accents,
    unmapped_glyphs,
)
from quire.formats.types import Extracted, Progress, no_progress
from quire.storage.records import Page
from quire.text.scripts import (
    HAN_LANGUAGES,
    tag_language,
    text_language,
)

log = logging.getLogger(__name__)

DOCUMENT_SAMPLE_CHARS = 200_000  # text of the other pages read to tell a document's language


def _page_language(
    page: RawPage, document_language: Callable[[], str | None], declared: str | None
) -> str | None:
    """The first language the page's text, its fonts, the other pages or /Lang tell."""
    sources: tuple[Callable[[], str | None], ...] = (
        lambda: text_language(CID.sub(" ", page.text)),
        lambda: page.font_language,
        document_language,
        lambda: declared,
    )
    language = None
    for source in sources:
        found = source()
        if found is None or (language == "zh" and found not in HAN_LANGUAGES):
            continue
        language = found
        if language != "zh":  # Han without a telling character: a later source may tell
            break
    return "zh-Hans" if language == "zh" else language


def ocr_languages(layer: TextLayer, wanted: list[int], default: str) -> dict[int, str]:
    """The tesseract language of each page to OCR (see the module docstring)."""

    @functools.cache  # read once, and only when a page needs it
    def document_language() -> str | None:
        sample, size = [], 0
        for page in layer.pages:
            if page.ocr_reason is None and size < DOCUMENT_SAMPLE_CHARS:
                sample.append(page.text)
                size += len(page.text)
        return text_language("\n".join(sample)[:DOCUMENT_SAMPLE_CHARS])

    declared = tag_language(layer.language) if layer.language else None
    by_number = {p.number: p for p in layer.pages}
    chosen: dict[int, str] = {}
    for number in wanted:
        page = by_number[number]
        language = _page_language(page, document_language, declared)
        code = tesseract_language(language, page.vertical) if language else None
        chosen[number] = code or default
    return chosen


def _use_ocr(raw: RawPage, ocr_text: str) -> bool:
    if raw.ocr_reason == "mojibake":
        return count_words(ocr_text) > 0
    return count_words(ocr_text) >= count_words(raw.text)


def extract_pdf(
    path: Path,
    settings: Settings,
    progress: Progress = no_progress,
    *,
    before_ocr: Callable[[Extracted], None] | None = None,
) -> Extracted:
    """Pages of a PDF: the text layer, replaced by OCR on the pages that need it.

    ``before_ocr`` is given the text layer alone (``metadata["ocr_pending"]``: the pages OCR
    will read) before OCR starts, when some pages need it and others do not.

    If OCR is not installed, a PDF with no usable text layer at all fails with OcrUnavailable;
    otherwise the pages that wanted OCR keep their text layer and are listed in
    ``metadata["ocr_skipped_pages"]`` (a blank verso should not need tesseract).
    """
    layer = read_text_layer(
        path,
        max_pages=settings.max_pages,
        min_words=settings.ocr_min_words,
        progress=lambda fraction: progress("extract", fraction),
    )
    wanted = [p.number for p in layer.pages if p.ocr_reason]
    ocr_read: dict[int, OcrPage] = {}
    metadata = dict(layer.metadata)
    languages: dict[int, str] = {}
    # Only a text layer that has pages of its own is worth searching before OCR: a scan's
    # stray words would make it "searchable" while nothing of it can be found.
    if wanted and before_ocr is not None and len(wanted) < len(layer.pages):
        before_ocr(_assembled(layer, {}, {**metadata, "ocr_pending": wanted}, {}, settings))
    if wanted:
        progress("ocr", 0.0)  # the stage starts now (its first page may take seconds)
        try:
            languages, notices = installed_fallbacks(
                ocr_languages(layer, wanted, settings.ocr_lang), settings.ocr_lang
            )
            if notices:
                metadata["notices"] = [*metadata.get("notices", []), *notices]
            ocr_read = ocr_pages(
                path,
                wanted,
                dpi=settings.ocr_dpi,
                lang=settings.ocr_lang,
                workers=settings.ocr_workers,
                on_page=lambda done, total: progress("ocr", done / total),
                languages=languages,
            )
        except OcrUnavailable:
            if not any(p.ocr_reason is None and p.text.strip() for p in layer.pages):
                raise
            log.warning("%s: OCR unavailable; %d page(s) keep their text layer", path, len(wanted))
            metadata["ocr_skipped_pages"] = wanted
    return _assembled(layer, ocr_read, metadata, languages, settings)


def _assembled(
    layer: TextLayer,
    ocr_read: dict[int, OcrPage],
    metadata: dict[str, Any],
    languages: dict[int, str],
    settings: Settings,
) -> Extracted:
    """The document: each page's text layer, or its OCR text where that was read and won."""
    pages: list[Page] = []
    for raw in layer.pages:
        read = ocr_read.get(raw.number)
        if read is not None and _use_ocr(raw, read.text):
            meta: dict[str, Any] = {"ocr_reason": raw.ocr_reason, "ocr_words": read.words}
            pages.append(Page(raw.number, read.text, source="ocr", meta=meta))
        else:
            text = spacing_accents(unmapped_glyphs(raw.text))
            pages.append(Page(raw.number, text, source="text_layer"))
    if layer.labels is not None:
        pages = [replace(p, label=label) for p, label in zip(pages, layer.labels, strict=True)]
    metadata["ocr_pages"] = [p.number for p in pages if p.source == "ocr"]
    if metadata["ocr_pages"]:
        by_language: dict[str, list[int]] = {}
        for number in metadata["ocr_pages"]:
            by_language.setdefault(languages.get(number, settings.ocr_lang), []).append(number)
        metadata["ocr_languages"] = by_language
    return Extracted(
        kind="pdf",
        title=layer.title,
        author=layer.author,
        pages=pages,
        metadata=metadata,
        outline=layer.outline,
    )
