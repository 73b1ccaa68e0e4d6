"""EPUB 2 and 3: spine order, sections at h1–h3, the heading path as the citation label.

Before ebooklib sees the file, the zip is checked with :func:`check_container`: entry names
(no absolute paths, no ``..``), total unpacked size and compression ratio (zip bombs), and every
XML entry for entity declarations (XXE, billion laughs), parsed with defusedxml.

Sections: every h1–h3 starts a new section whose heading path is the stack of open headings
("Chapter 3 > The Voyage"). A heading that follows another with no text in between is nested
under it instead of replacing it, so ``<h3>CHAPTER V</h3><h3>OUR MARCH…</h3>`` gives
"CHAPTER V > OUR MARCH…" rather than an empty section. Each spine document starts a fresh
stack (a title page's h1 is not the parent of every chapter); text before its first heading
is labelled with the document's entry in the table of contents. The navigation document
(EPUB 3 nav, EPUB 2 NCX) is skipped. The section ordinal is the page number.

A content document that does not decode in the encoding it declares (XML declaration or
``<meta charset>``; UTF-8 if none) is decoded as a text file of unknown encoding
(formats/detect.py: Shift_JIS, GB18030, ...), not left to the parser's guess, which reads
Japanese as Korean. Vertical writing (``writing-mode: vertical-rl``) changes only how a
page is drawn: the text is in reading order in the markup already.
"""

from __future__ import annotations

import codecs
import logging
import posixpath
import re
import warnings
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import ParseError

import ebooklib
from bs4 import BeautifulSoup, XMLParsedAsHTMLWarning
from bs4.element import Comment, Declaration, Doctype, NavigableString, ProcessingInstruction, Tag
from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring as safe_fromstring
from ebooklib import epub

from quire.errors import CorruptFile, ResourceLimit
from quire.formats.detect import decode_text
from quire.formats.notes import is_note_marker
from quire.formats.types import Extracted
from quire.storage.records import Page

log = logging.getLogger(__name__)

MAX_UNPACKED_BYTES = 500 * 1024 * 1024  # the default of QUIRE_MAX_UNPACKED_MB
MAX_ENTRIES = 20_000
MAX_RATIO = 100  # deflate rarely beats 10:1 on real content; bombs reach 1000:1
RATIO_MIN_BYTES = 1024 * 1024  # tiny entries (a repetitive CSS file) may compress very well
XML_SUFFIXES = (".xml", ".xhtml", ".html", ".htm", ".opf", ".ncx", ".svg", ".xht", ".smil")

_ENTITY_DECL = re.compile(rb"<!ENTITY", re.IGNORECASE)
_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:")
_SPACE = re.compile(r"\s+")
_DECLARED_ENCODING = re.compile(rb"""(?:encoding|charset)\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.I)

_SKIP_TAGS = {"script", "style", "head", "title", "nav", "template", "noscript", "meta", "link"}
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3}
_BLOCK_TAGS = {
    "address", "article", "aside", "blockquote", "caption", "center", "dd", "div", "dl", "dt",
    "figcaption", "figure", "footer", "h4", "h5", "h6", "header", "hr", "li", "main", "ol", "p",
    "pre", "section", "table", "tbody", "tfoot", "thead", "tr", "ul",
}  # fmt: skip
_CELL_TAGS = {"td", "th"}
_BREAKS = {"br", *_BLOCK_TAGS, *_CELL_TAGS}  # a space inside a heading


def _unsafe_name(name: str) -> bool:
    parts = name.replace("\\", "/").split("/")
    return name.startswith(("/", "\\")) or bool(_WINDOWS_DRIVE.match(name)) or ".." in parts


def check_xml_safe(name: str, data: bytes) -> None:
    """Raise CorruptFile if an XML entry declares entities (internal or external)."""
    try:
        safe_fromstring(data, forbid_dtd=False, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as exc:
        raise CorruptFile(f"unsafe XML: {name} declares entities ({exc!r})") from exc
    except (ParseError, ValueError):
        # Malformed XHTML is common and ebooklib recovers from it; the parse may have stopped
        # before the DOCTYPE, so look for a declaration in the raw bytes as well.
        raw = data
        if data[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
            raw = data.decode("utf-16", "replace").encode("utf-8")
        if _ENTITY_DECL.search(raw):
            raise CorruptFile(f"unsafe XML: {name} declares entities") from None


def check_zip_limits(
    zf: zipfile.ZipFile, label: str, max_unpacked_bytes: int = MAX_UNPACKED_BYTES
) -> list[zipfile.ZipInfo]:
    """The archive's entries, once their count, names (no absolute paths, no ``..``), unpacked
    size and compression ratios are checked (also for chat-export zips; ``label`` names the
    archive in the errors)."""
    infos = zf.infolist()
    if len(infos) > MAX_ENTRIES:
        raise ResourceLimit(f"{label} has {len(infos)} files; the limit is {MAX_ENTRIES}.")
    total = 0
    for info in infos:
        if _unsafe_name(info.filename):
            raise CorruptFile(f"Damaged {label}: unsafe path in archive: {info.filename!r}")
        total += info.file_size
        ratio = info.file_size / max(1, info.compress_size)
        if info.file_size > RATIO_MIN_BYTES and ratio > MAX_RATIO:
            raise ResourceLimit(
                f"{label} entry {info.filename} expands {ratio:.0f}-fold (limit {MAX_RATIO}); "
                "refusing a possible zip bomb."
            )
    if total > max_unpacked_bytes:
        raise ResourceLimit(
            f"{label} unpacks to {total // 2**20} MB; "
            f"the limit is {max_unpacked_bytes // 2**20} MB (QUIRE_MAX_UNPACKED_MB)."
        )
    return infos


def check_container(path: Path, max_unpacked_bytes: int = MAX_UNPACKED_BYTES) -> None:
    """Validate the zip before parsing: names, sizes, ratios and XML safety."""
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise CorruptFile(f"Damaged EPUB: not a readable zip archive ({exc})") from exc
    with zf:
        infos = check_zip_limits(zf, "EPUB", max_unpacked_bytes)
        for info in infos:
            if info.is_dir() or not info.filename.lower().endswith(XML_SUFFIXES):
                continue
            try:
                data = zf.read(info)
            except (zipfile.BadZipFile, zlib.error, OSError, EOFError) as exc:
                raise CorruptFile(f"Damaged EPUB: {info.filename} cannot be read ({exc})") from exc
            check_xml_safe(info.filename, data)


@dataclass
class _Section:
    path: list[tuple[float, str]]
    headings: list[str] = field(default_factory=list)
    body: list[str] = field(default_factory=list)


class _SectionBuilder:
    """Collects blocks and headings of one spine document into sections."""

    def __init__(self, label: str, sink: list[tuple[str, str]]) -> None:
        self.sink = sink
        self.current = _Section(path=[(0, label)] if label else [])
        self.buf: list[str] = []

    def text(self, s: str) -> None:
        self.buf.append(s)

    def flush(self) -> None:
        lines = [_SPACE.sub(" ", line).strip() for line in "".join(self.buf).split("\n")]
        self.buf = []
        block = "\n".join(line for line in lines if line)
        if block:
            self.current.body.append(block)

    def heading(self, level: int, title: str) -> None:
        self.flush()
        if not title:
            return
        cur = self.current
        if not cur.body and cur.headings:
            # Nothing since the previous heading: nest under it ("CHAPTER V > OUR MARCH…").
            # A deeper heading keeps its level; a sibling or shallower one goes just below.
            cur.path.append((max(float(level), cur.path[-1][0] + 0.5), title))
            cur.headings.append(title)
            return
        self.close()
        stack = [entry for entry in cur.path if entry[0] < level and entry[0] > 0]
        self.current = _Section(path=[*stack, (float(level), title)], headings=[title])

    def close(self) -> None:
        self.flush()
        cur = self.current
        if cur.body:
            text = "\n\n".join([*cur.headings, *cur.body])
            self.sink.append((" > ".join(t for _, t in cur.path), text))
        self.current = _Section(path=[])


def _heading_text(heading: Tag) -> str:
    """A heading as it reads: its inline markup joins without a space ("DISTRIBUTION—<i>
    continued</i>." is "DISTRIBUTION—continued."), a line break, a cell or a block inside it is
    one; a note's marker is left out (formats/notes.py)."""
    parts: list[str] = []

    def add(node: Tag) -> None:
        for child in node.children:
            if isinstance(child, Comment | Declaration | Doctype | ProcessingInstruction):
                continue
            if isinstance(child, NavigableString):
                parts.append(str(child))
            elif isinstance(child, Tag) and not _note_marker(child):
                if (child.name or "").lower() in _BREAKS:
                    parts.append(" ")
                add(child)

    add(heading)
    return _SPACE.sub(" ", "".join(parts)).strip()


def _note_marker(tag: Tag) -> bool:
    name = (tag.name or "").lower()
    return is_note_marker(
        name,
        tag.attrs,
        tag.get_text(),
        links=(name == "a" and tag.has_attr("href")) or tag.find("a", href=True) is not None,
        superscript=name == "sup" or tag.find("sup") is not None,
    )


def _walk(node: Tag, out: _SectionBuilder) -> None:
    for child in node.children:
        if isinstance(child, Comment | Declaration | Doctype | ProcessingInstruction):
            continue
        if isinstance(child, NavigableString):
            # In HTML any whitespace run, line breaks included, is one space; <br> is the break.
            out.text(_SPACE.sub(" ", str(child)))
            continue
        if not isinstance(child, Tag):
            continue
        name = (child.name or "").lower()
        if name in _SKIP_TAGS or child.has_attr("hidden"):
            continue
        if name in _HEADINGS:
            out.heading(_HEADINGS[name], _heading_text(child))
        elif name == "br":
            out.text("\n")
        elif name == "pre":
            out.flush()
            out.text(child.get_text())
            out.flush()
        elif name in _BLOCK_TAGS:
            out.flush()
            _walk(child, out)
            out.flush()
        else:
            _walk(child, out)
            if name in _CELL_TAGS:
                out.text(" ")


def _markup(content: bytes) -> bytes | str:
    """The document as the parser should get it: its bytes when they decode as declared."""
    declared = _DECLARED_ENCODING.search(content[:1024])
    try:
        content.decode(declared.group(1).decode("ascii") if declared else "utf-8")
        return content
    except (LookupError, UnicodeDecodeError):
        return decode_text(content)


def document_sections(content: bytes, label: str = "") -> list[tuple[str, str]]:
    """(heading path, text) for each non-empty section of one XHTML document."""
    with warnings.catch_warnings():
        # XHTML is XML, but the lenient HTML parser copes with the broken markup found in
        # real books; bs4 warns about that choice every time.
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        soup = BeautifulSoup(_markup(content), "lxml")
    sections: list[tuple[str, str]] = []
    builder = _SectionBuilder(label, sections)
    _walk(soup.body or soup, builder)
    builder.close()
    return sections


def _toc_labels(book: epub.EpubBook) -> dict[str, str]:
    labels: dict[str, str] = {}

    def visit(entries: Any) -> None:
        for entry in entries:
            if isinstance(entry, tuple | list) and len(entry) == 2:
                section, children = entry
                visit([section])
                visit(children)
            elif isinstance(entry, epub.Link | epub.Section) and getattr(entry, "href", None):
                href = str(entry.href).split("#", 1)[0]
                title = _SPACE.sub(" ", str(entry.title or "")).strip()
                if href and title:
                    labels.setdefault(href, title)
                    labels.setdefault(posixpath.basename(href), title)

    visit(book.toc)
    return labels


def _first(book: epub.EpubBook, name: str) -> list[str]:
    values = []
    for value, _attrs in book.get_metadata("DC", name):
        if isinstance(value, str) and value.strip():
            values.append(_SPACE.sub(" ", value).strip())
    return values


def extract_epub(
    path: Path,
    progress: Callable[[float], None] | None = None,
    *,
    max_unpacked_bytes: int = MAX_UNPACKED_BYTES,
) -> Extracted:
    """Read an EPUB into one Page per section, in spine order."""
    check_container(path, max_unpacked_bytes)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ebooklib warns about its own future defaults
            book = epub.read_epub(str(path), options={"ignore_ncx": True})
    except Exception as exc:  # ebooklib raises anything from KeyError to lxml errors
        raise CorruptFile(f"Damaged EPUB: {type(exc).__name__}: {exc}") from exc
    labels = _toc_labels(book)
    spine = [idref for idref, _linear in book.spine if idref]
    pages: list[Page] = []
    for i, idref in enumerate(spine, start=1):
        item = book.get_item_with_id(idref)
        if (
            item is None
            or isinstance(item, epub.EpubNav | epub.EpubNcx)
            or "nav" in (getattr(item, "properties", None) or [])
            or item.get_type() != ebooklib.ITEM_DOCUMENT
        ):
            continue
        label = labels.get(item.file_name) or labels.get(posixpath.basename(item.file_name), "")
        # The file as stored: get_content() re-parses it, and loses its declared encoding.
        for heading_path, text in document_sections(item.content or b"", label):
            pages.append(Page(len(pages) + 1, text, heading_path=heading_path, source="epub"))
        if progress is not None:
            progress(i / len(spine))
    titles, creators = _first(book, "title"), _first(book, "creator")
    languages, identifiers = _first(book, "language"), _first(book, "identifier")
    return Extracted(
        kind="epub",
        title=titles[0] if titles else None,
        author=", ".join(creators) or None,
        pages=pages,
        metadata={
            "language": languages[0] if languages else None,
            "identifier": identifiers[0] if identifiers else None,
            "epub_version": book.version,
            "direction": getattr(book, "direction", None),
        },
    )
