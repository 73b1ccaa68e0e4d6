"""A PDF's text layer, page by page with pdfminer.six, and the per-page decision to OCR.

A page is sent to OCR when its text layer has fewer than ``ocr_min_words`` words, or is
mojibake: pdfminer's ``(cid:N)`` placeholders (a font without a usable ToUnicode map),
replacement / private-use / control characters, or few letters and digits. Precisely, over the
non-space characters (each ``(cid:N)`` counted as one bad character): more than 10% bad, or
less than half letters-and-digits. A page with no text, no images and no vector drawing is
blank and skipped instead of OCRed. Chinese and Japanese are written without spaces, so there
every two of their characters count as a word.

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

import itertools
import logging
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from pdfminer.pdfdocument import (
    PDFDocument,
    PDFEncryptionError,
    PDFNoPageLabels,
    PDFNoValidXRef,
    PDFPasswordIncorrect,
    PDFXRefFallback,
)
from pdfminer.pdfpage import PDFPage
from pdfminer.pdfparser import PDFParser
from pdfminer.pdftypes import resolve1
from pdfminer.utils import decode_text

from quire.errors import CorruptFile, EncryptedFile, ResourceLimit
from quire.formats.pdf.headings import HeadingFinder
from quire.formats.pdf.layout import PARSE_ERRORS, iter_layouts, page_text
from quire.formats.pdf.structure import read_outline, read_page_labels
from quire.formats.types import OutlineEntry
from quire.text.scripts import (
    CJK,
)

log = logging.getLogger(__name__)

EOF_WINDOW = 1024
_PASSWORD_MESSAGE = "The PDF is password-protected; remove the password and upload it again."
BAD_SHARE = 0.10
MIN_ALNUM_SHARE = 0.5

CID = re.compile(r"\(cid:\d+\)")
#: An unmapped glyph that starts a line before its words: a list's bullet.
_CID_BULLET = re.compile(r"(?m)^(\s*)\(cid:\d+\)(?=[ \t]+\S)")


def unmapped_glyphs(text: str) -> str:
    """``text`` with pdfminer's ``(cid:N)`` for a glyph its font maps to no character shown as
    a reader would see it: a bullet at the start of a line ("• Strogatz, Sync."), else the
    replacement character (the glyph is there, what it is is not known)."""
    if "(cid:" not in text:
        return text
    return CID.sub("\ufffd", _CID_BULLET.sub("\\1\u2022", text))


#: TeX's accents as spacing characters, and the combining marks they stand for.
_SPACING_ACCENTS = {
    "\u00b4": "\u0301",  # ´ acute
    "\u00a8": "\u0308",  # ¨ diaeresis
    "\u02dd": "\u030b",  # ˝ double acute
    "\u02c6": "\u0302",  # ˆ circumflex
    "\u02dc": "\u0303",  # ˜ tilde
    "\u02c7": "\u030c",  # ˇ caron
    "\u02d8": "\u0306",  # ˘ breve
    "\u02d9": "\u0307",  # ˙ dot above
    "\u00af": "\u0304",  # ¯ macron
    "\u02da": "\u030a",  # ˚ ring
}
_ACCENTED = re.compile("([" + "".join(_SPACING_ACCENTS) + "])([A-Za-z\u0131])")


def spacing_accents(text: str) -> str:
    """``text`` with TeX's accented letters whole: an accent typeset over a letter comes out of
    pdfminer as a spacing accent before it ("Barab´asi", "Erd˝os-R´enyi", "na¨ıve"), which
    splits the word for search; it is composed with its letter ("Barabási", "naïve")."""

    def compose(m: re.Match[str]) -> str:
        letter = "i" if m[2] == "\u0131" else m[2]  # TeX accents a dotless i
        return unicodedata.normalize("NFC", letter + _SPACING_ACCENTS[m[1]])

    return _ACCENTED.sub(compose, text)


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
    text = CID.sub(" ", text)
    cjk = len(CJK.findall(text))
    if cjk:
        text = CJK.sub(" ", text)
    return sum(1 for token in text.split() if _WORD.search(token)) + (cjk + 1) // 2


def ocr_reason(text: str, min_words: int) -> str | None:
    """Why this text layer should be replaced by OCR ("few_words", "mojibake"), or None."""
    if count_words(text) < min_words:
        return "few_words"
    cids = len(CID.findall(text))
    chars = [c for c in CID.sub("", text) if not c.isspace()]
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
    except PARSE_ERRORS as exc:
        raise CorruptFile(f"Damaged PDF{truncated}: {exc or type(exc).__name__}") from exc
    rebuilt = any(isinstance(x, PDFXRefFallback) for x in doc.xrefs)
    if rebuilt and not has_eof:
        raise CorruptFile(f"Damaged PDF{truncated}: the cross-reference table is missing.")
    return doc


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
    except (*PARSE_ERRORS, AttributeError):
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
        for number, layout, vertical in iter_layouts(doc, pages):
            if layout is None:
                text, drawn = "", True
            else:
                text, drawn = page_text(layout)
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
    except (*PARSE_ERRORS, AttributeError):
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
    except (*PARSE_ERRORS, AttributeError):
        return 0
    return count if isinstance(count, int) else 0


def _list_pages(doc: PDFDocument, max_pages: int) -> list[PDFPage]:
    """At most ``max_pages + 1`` pages: a page tree of millions is not walked to the end."""
    try:
        return list(itertools.islice(PDFPage.create_pages(doc), max_pages + 1))
    except PDFPasswordIncorrect as exc:
        raise EncryptedFile(_PASSWORD_MESSAGE) from exc
    except PARSE_ERRORS as exc:
        raise CorruptFile(f"Damaged PDF: the page tree cannot be read ({exc})") from exc
