"""PDF text per page with pdfminer.six, and the per-page decision to OCR.

A page is sent to OCR when its text layer has fewer than ``ocr_min_words`` words, or is
mojibake: pdfminer's ``(cid:N)`` placeholders (a font without a usable ToUnicode map),
replacement / private-use / control characters, or few letters and digits. Precisely, over the
non-space characters (each ``(cid:N)`` counted as one bad character): more than 10% bad, or
less than half letters-and-digits. A page with no text, no images and no vector drawing is
blank and skipped instead of OCRed. Chinese and Japanese are written without spaces, so there
every two of their characters count as a word.

Vertical writing (Japanese and Chinese set top to bottom in columns from right to left) is
decided per page before layout analysis, from the characters themselves: when most steps from
one upright CJK character to the next in the content stream go down a column rather than
across a line, the page is laid out with ``detect_vertical``, which reads columns right to
left; other pages get exactly the analysis they always had. In a vertical box the word spaces
pdfminer guesses between CJK characters are dropped, and a column that runs to the foot of the
box continues into the next without a line break (the sentence goes on there).

OCR reads a page in its own script (ingest/ocr.py's ``tesseract_language``): the language is
the first that can be told from the page's text, its fonts' CID character collection
(Adobe-Japan1, -GB1, -CNS1, -Korea1), the text of the document's other pages, or the
catalog's ``/Lang``; Latin script, or nothing to go on, takes ``QUIRE_OCR_LANG``. A vertical
page is read with the ``_vert`` model; a page of unknown direction in Japanese or traditional
Chinese with both.

A hidden OCR layer made by a scanner (vicksburg-scan-ocr.pdf: invisible text under page
images, with errors such as "Eichmond" for "Richmond") is a text layer like any other: when it
passes the checks above it is kept, not re-OCRed. Tesseract reads those pages a little better
but costs 2–4 s per page, and a layer that fails the checks is replaced anyway.

Damage: a file whose cross-reference table cannot be read is rebuilt by scanning for objects
(as pdfminer does on its own); when the table reads but leads nowhere (a page tree with no
pages, as in scan-grumman-175.pdf whose xref is off by one) the rebuild is forced. A file
that needed rebuilding and has no ``%%EOF`` marker near its end is truncated: CorruptFile.
"""

from __future__ import annotations

import copy
import functools
import itertools
import logging
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, BinaryIO

from pdfminer.converter import PDFPageAggregator
from pdfminer.layout import (
    LAParams,
    LTAnno,
    LTChar,
    LTCurve,
    LTFigure,
    LTImage,
    LTPage,
    LTTextBox,
    LTTextBoxVertical,
    LTTextLineVertical,
)
from pdfminer.pdfdocument import (
    PDFDocument,
    PDFEncryptionError,
    PDFNoPageLabels,
    PDFNoValidXRef,
    PDFPasswordIncorrect,
    PDFXRefFallback,
)
from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
from pdfminer.pdfpage import PDFPage
from pdfminer.pdfparser import PDFParser
from pdfminer.pdftypes import resolve1
from pdfminer.psexceptions import PSException
from pdfminer.utils import decode_text

from quire.config import Settings
from quire.errors import CorruptFile, EncryptedFile, OcrUnavailable, ResourceLimit
from quire.ingest.ocr import OcrPage, installed_fallbacks, ocr_pages, tesseract_language
from quire.ingest.pdf_headings import HeadingFinder
from quire.ingest.pdf_structure import OutlineEntry, read_outline, read_page_labels
from quire.ingest.scripts import (
    CJK,
    CJK_TEXT,
    HAN_LANGUAGES,
    UPRIGHT,
    tag_language,
    text_language,
)
from quire.ingest.types import Extracted, Progress, no_progress
from quire.storage.records import Page

log = logging.getLogger(__name__)

# Defaults except all_texts: text inside Form XObjects (figures, and whole pages in some
# generators) must not be lost. boxes_flow 0.5 orders two-column papers column by column.
LAPARAMS = LAParams(
    line_overlap=0.5,
    char_margin=2.0,
    line_margin=0.5,
    word_margin=0.1,
    boxes_flow=0.5,
    detect_vertical=False,
    all_texts=True,
)
# For pages in vertical writing: vertical text lines allowed, and columns set up to a column's
# width apart grouped as one box (vertical text is set with wider gaps than horizontal lines).
VERTICAL_LAPARAMS = copy.copy(LAPARAMS)
VERTICAL_LAPARAMS.detect_vertical = True
VERTICAL_LAPARAMS.line_margin = 1.5
MIN_DIRECTION_STEPS = 8  # steps between upright characters needed to tell a page's direction
UPRIGHT_SHARE = 0.3  # ...and the share of the page's characters that must be upright
DOCUMENT_SAMPLE_CHARS = 200_000  # text of the other pages read to tell a document's language
EOF_WINDOW = 1024
_PASSWORD_MESSAGE = "The PDF is password-protected; remove the password and upload it again."
BAD_SHARE = 0.10
MIN_ALNUM_SHARE = 0.5

# Errors pdfminer raises on damaged input besides its own PSException tree.
_PARSE_ERRORS = (PSException, ValueError, KeyError, TypeError, IndexError, AssertionError, EOFError)

_CID = re.compile(r"\(cid:\d+\)")
_WORD = re.compile(r"\w")
_APP_PREFIX = re.compile(r"^Microsoft (?:Word|PowerPoint|Excel) - ")
_FILE_SUFFIX = re.compile(r"\.(?:pdf|docx?|pptx?|xlsx?|indd|tex|dvi|qxd|rtf|odt|pages)$", re.I)
_PLACEHOLDER_TITLE = re.compile(r"(?:untitled|binder|document|presentation)\s*\d*", re.I)
# The character collection of a CID font says which language its glyphs are for.
_ORDERING_LANGUAGE = {"Japan1": "ja", "GB1": "zh-Hans", "CNS1": "zh-Hant", "Korea1": "ko"}


@dataclass(frozen=True)
class RawPage:
    """A page's text layer and whether it should be OCRed (``ocr_reason`` says why).

    ``vertical``: whether its characters run in vertical columns (None: too few to tell);
    ``font_language``: the language of its CID fonts, read for pages to be OCRed only."""

    number: int
    text: str
    ocr_reason: str | None = None
    vertical: bool | None = None
    font_language: str | None = None


@dataclass
class TextLayer:
    """Everything read from a PDF without OCR."""

    pages: list[RawPage]
    title: str | None
    author: str | None
    metadata: dict[str, Any] = field(default_factory=dict)
    outline: list[OutlineEntry] = field(default_factory=list)
    #: The catalog's /Lang ("ja-JP"), if any.
    language: str | None = None
    #: Each page's printed label (/PageLabels), when the PDF declares them.
    labels: list[str | None] | None = None


def count_words(text: str) -> int:
    """Words with at least one letter or digit; ``(cid:N)`` placeholders are not words, and
    every two Chinese or Japanese characters count as one."""
    text = _CID.sub(" ", text)
    cjk = len(CJK.findall(text))
    if cjk:
        text = CJK.sub(" ", text)
    return sum(1 for token in text.split() if _WORD.search(token)) + (cjk + 1) // 2


def ocr_reason(text: str, min_words: int) -> str | None:
    """Why this text layer should be replaced by OCR ("few_words", "mojibake"), or None."""
    if count_words(text) < min_words:
        return "few_words"
    cids = len(_CID.findall(text))
    chars = [c for c in _CID.sub("", text) if not c.isspace()]
    total = len(chars) + cids
    if not total:
        return "few_words"
    bad = cids + sum(
        1 for c in chars if c == "\ufffd" or unicodedata.category(c) in ("Co", "Cc", "Cs")
    )
    alnum = sum(1 for c in chars if c.isalnum())
    if bad / total > BAD_SHARE or alnum / total < MIN_ALNUM_SHARE:
        return "mojibake"
    return None


class _Document(PDFDocument):
    """A PDFDocument that leaves page labels to pdf_structure.read_page_labels: pdfminer's own
    reader runs while pages are listed, and a damaged /PageLabels tree (a roman numbering from
    0) would then fail the whole file."""

    def get_page_labels(self) -> Iterator[str]:
        raise PDFNoPageLabels


class _RebuiltDocument(_Document):
    """A PDFDocument that ignores the xref table and rebuilds it by scanning the file."""

    def find_xref(self, parser: PDFParser) -> int:
        raise PDFNoValidXRef("rebuilding the cross-reference table")


def _decode_info(value: object) -> str | None:
    value = resolve1(value)
    if isinstance(value, bytes):
        value = decode_text(value)
    if not isinstance(value, str):
        return None
    value = "".join(c for c in value if c.isprintable()).strip()
    return value or None


def _clean_title(title: str | None) -> str | None:
    """Drop what generators put in Title when nobody set one ("Binder1.pdf", "Untitled")."""
    if title is None:
        return None
    title = _FILE_SUFFIX.sub("", _APP_PREFIX.sub("", title)).strip()
    return None if not title or _PLACEHOLDER_TITLE.fullmatch(title) else title


def _open(fh: BinaryIO, has_eof: bool, rebuild: bool) -> PDFDocument:
    cls = _RebuiltDocument if rebuild else _Document
    truncated = "" if has_eof else " (the file looks truncated: no %%EOF marker at its end)"
    try:
        doc = cls(PDFParser(fh), password="")
    except PDFPasswordIncorrect as exc:
        raise EncryptedFile(_PASSWORD_MESSAGE) from exc
    except PDFEncryptionError as exc:
        if not has_eof:
            raise CorruptFile(f"Damaged PDF{truncated}: {exc}") from exc
        raise EncryptedFile(f"The PDF uses an unsupported encryption scheme: {exc}") from exc
    except _PARSE_ERRORS as exc:
        raise CorruptFile(f"Damaged PDF{truncated}: {exc or type(exc).__name__}") from exc
    rebuilt = any(isinstance(x, PDFXRefFallback) for x in doc.xrefs)
    if rebuilt and not has_eof:
        raise CorruptFile(f"Damaged PDF{truncated}: the cross-reference table is missing.")
    return doc


def runs_vertically(layout: LTPage) -> bool | None:
    """Whether the upright (CJK) characters of a page not yet analysed run down columns (True)
    or across lines (False), by most steps from one to the next; None when too few step, or
    when they are too small a part of the page (stacked pieces of a brace in a formula)."""
    down = across = upright = total = 0
    stack: list[Any] = [layout]
    while stack:
        chars: list[LTChar] = []
        for item in stack.pop():
            if isinstance(item, LTChar):
                chars.append(item)
            elif isinstance(item, LTFigure):
                stack.append(item)
        total += len(chars)
        found = len(UPRIGHT.findall("".join(c.get_text() for c in chars)))
        if not found:
            continue  # no CJK at all: the common case costs one join and one search
        upright += found
        prev: LTChar | None = None
        for char in chars:
            if not (char.upright and UPRIGHT.fullmatch(char.get_text())):
                prev = None
                continue
            if prev is not None:
                size = max(prev.width, prev.height)
                dx, dy = char.x0 - prev.x0, prev.y1 - char.y1
                if abs(dx) <= size / 2 and 0 < dy <= 2 * size:
                    down += 1
                elif abs(dy) <= size / 2 and 0 < dx <= 2 * size:
                    across += 1
            prev = char
    if down + across < MIN_DIRECTION_STEPS or upright < UPRIGHT_SHARE * total:
        return None
    return down > across


class _Aggregator(PDFPageAggregator):
    """Lays each page out with VERTICAL_LAPARAMS when its characters run vertically."""

    vertical: bool | None = None

    def end_page(self, page: PDFPage) -> None:
        assert isinstance(self.cur_item, LTPage)
        self.vertical = runs_vertically(self.cur_item)
        self.laparams = VERTICAL_LAPARAMS if self.vertical else LAPARAMS
        super().end_page(page)


def _is_cjk(text: str) -> bool:
    return bool(text) and CJK_TEXT.fullmatch(text) is not None


def _vertical_text(box: LTTextBoxVertical) -> str:
    """A vertical box's columns, right to left (see the module docstring)."""
    text = ""
    previous: LTTextLineVertical | None = None
    for line in box:
        if not isinstance(line, LTTextLineVertical):
            continue
        items = list(line)
        parts: list[str] = []
        for i, item in enumerate(items):
            piece = item.get_text()
            if isinstance(item, LTAnno) and (
                piece == "\n"
                or (
                    0 < i < len(items) - 1
                    and _is_cjk(items[i - 1].get_text()[-1:])
                    and _is_cjk(items[i + 1].get_text()[:1])
                )
            ):
                continue
            parts.append(piece)
        column = "".join(parts).strip()
        if not column:
            continue
        runs_on = (
            previous is not None
            and previous.y0 - box.y0 <= previous.width
            and _is_cjk(text[-1:])
            and _is_cjk(column[:1])
        )
        text += column if runs_on or not text else "\n" + column
        previous = line
    return text


def _page_text(layout: LTPage) -> tuple[str, bool]:
    """Text boxes in reading order (figure text after the body), and whether anything is drawn."""
    boxes: list[str] = []
    drawn = False

    def walk(container: Any) -> None:
        nonlocal drawn
        for item in container:
            if isinstance(item, LTTextBoxVertical):
                boxes.append(_vertical_text(item))
            elif isinstance(item, LTTextBox):
                boxes.append(item.get_text().strip("\n"))
            elif isinstance(item, LTFigure):
                drawn = True
                walk(item)
            elif isinstance(item, LTImage | LTCurve):
                drawn = True

    walk(layout)
    return "\n\n".join(b for b in boxes if b.strip()), drawn


def _iter_layouts(
    doc: PDFDocument, pages: list[PDFPage]
) -> Iterator[tuple[int, LTPage | None, bool | None]]:
    """Each page's layout (None when unreadable) and whether it runs vertically."""
    rsrcmgr = PDFResourceManager(caching=True)
    device = _Aggregator(rsrcmgr, laparams=LAPARAMS)
    interpreter = PDFPageInterpreter(rsrcmgr, device)
    for number, page in enumerate(pages, start=1):
        device.vertical = None
        try:
            interpreter.process_page(page)
            yield number, device.get_result(), device.vertical
        except _PARSE_ERRORS as exc:
            # One broken content stream should not sink the book; OCR may still read it.
            log.warning("page %d: text layer unreadable (%s)", number, exc)
            yield number, None, device.vertical


def _font_language(page: PDFPage) -> str | None:
    """The language of the page's first CID font whose character collection names one."""
    try:
        fonts = resolve1(page.resources.get("Font"))
        for spec in (fonts or {}).values():
            for descendant in resolve1(resolve1(spec).get("DescendantFonts")) or ():
                info = resolve1(resolve1(descendant).get("CIDSystemInfo")) or {}
                ordering = resolve1(info.get("Ordering"))
                if isinstance(ordering, bytes):
                    ordering = ordering.decode("latin-1")
                if ordering in _ORDERING_LANGUAGE:
                    return _ORDERING_LANGUAGE[ordering]
    except (*_PARSE_ERRORS, AttributeError):
        return None
    return None


def read_text_layer(
    path: Path,
    *,
    max_pages: int,
    min_words: int,
    progress: Callable[[float], None] | None = None,
) -> TextLayer:
    """Read every page's text layer and mark the pages that need OCR."""
    size = path.stat().st_size
    with path.open("rb") as fh:
        fh.seek(max(0, size - EOF_WINDOW))
        has_eof = b"%%EOF" in fh.read()
        fh.seek(0)
        doc = _open(fh, has_eof, rebuild=False)
        declared = _declared_page_count(doc)
        if declared > max_pages:  # refused before millions of page objects are parsed
            raise ResourceLimit(
                f"The PDF has {declared} pages; the limit is {max_pages} (QUIRE_MAX_PAGES)."
            )
        pages = _list_pages(doc, max_pages)
        if not pages and not any(isinstance(x, PDFXRefFallback) for x in doc.xrefs):
            log.info("%s: no pages through the xref table; rebuilding it", path.name)
            fh.seek(0)
            doc = _open(fh, has_eof, rebuild=True)
            pages = _list_pages(doc, max_pages)
        if not pages:
            raise CorruptFile("Damaged PDF: no pages found.")
        if len(pages) > max_pages:
            raise ResourceLimit(
                f"The PDF has more than {max_pages} pages; the limit is {max_pages} "
                "(QUIRE_MAX_PAGES)."
            )
        info: dict[str, Any] = {}
        for entry in doc.info:
            info.update(entry)
        outline, outline_notice = read_outline(doc, pages)
        labels, labels_notice = read_page_labels(doc, len(pages))
        # Without an outline, headings are told from the fonts (pdf_headings).
        finder = HeadingFinder() if not outline else None
        raw: list[RawPage] = []
        for number, layout, vertical in _iter_layouts(doc, pages):
            if layout is None:
                text, drawn = "", True
            else:
                text, drawn = _page_text(layout)
            reason = ocr_reason(text, min_words)
            if reason == "few_words" and not text.strip() and not drawn:
                reason = None  # a blank page: nothing to read
            font_language = _font_language(pages[number - 1]) if reason else None
            raw.append(RawPage(number, text, reason, vertical, font_language))
            if finder is not None and layout is not None and reason is None and not vertical:
                finder.add(number, layout)
            if progress is not None:
                progress(number / len(pages))
    try:
        language = _decode_info(doc.catalog.get("Lang"))
    except (*_PARSE_ERRORS, AttributeError):
        language = None
    metadata: dict[str, Any] = {
        "page_count": len(pages),
        "producer": _decode_info(info.get("Producer")),
        "rebuilt_xref": any(isinstance(x, PDFXRefFallback) for x in doc.xrefs),
        "outline_entries": len(outline),
        "page_labels": labels is not None,
    }
    if finder is not None:
        outline = finder.headings()
        metadata["layout_headings"] = len(outline)
    notices = [n for n in (outline_notice, labels_notice) if n]
    if notices:
        metadata["notices"] = notices
    return TextLayer(
        pages=raw,
        title=_clean_title(_decode_info(info.get("Title"))),
        author=_decode_info(info.get("Author")),
        metadata=metadata,
        outline=outline,
        language=language,
        labels=labels,
    )


def _declared_page_count(doc: PDFDocument) -> int:
    """The page tree's /Count (0 when missing or unreadable); it may lie, so pages are still
    counted as they are listed."""
    try:
        count = resolve1(resolve1(doc.catalog.get("Pages")).get("Count"))
    except (*_PARSE_ERRORS, AttributeError):
        return 0
    return count if isinstance(count, int) else 0


def _list_pages(doc: PDFDocument, max_pages: int) -> list[PDFPage]:
    """At most ``max_pages + 1`` pages: a page tree of millions is not walked to the end."""
    try:
        return list(itertools.islice(PDFPage.create_pages(doc), max_pages + 1))
    except PDFPasswordIncorrect as exc:
        raise EncryptedFile(_PASSWORD_MESSAGE) from exc
    except _PARSE_ERRORS as exc:
        raise CorruptFile(f"Damaged PDF: the page tree cannot be read ({exc})") from exc


def _page_language(
    page: RawPage, document_language: Callable[[], str | None], declared: str | None
) -> str | None:
    """The first language the page's text, its fonts, the other pages or /Lang tell."""
    sources: tuple[Callable[[], str | None], ...] = (
        lambda: text_language(_CID.sub(" ", page.text)),
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
    will read) before OCR starts, when some page needs it.

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
    if wanted and before_ocr is not None:
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
            pages.append(Page(raw.number, raw.text, source="text_layer"))
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
