"""OpenDocument text (.odt) and presentations (.odp), read from content.xml with lxml.

Text is read as Word's is (formats/office/word.py, flow.py): headings (``text:h`` with its
outline level) and paragraphs, list items with a bullet, tables as rows with their header,
text boxes (frames) after the paragraph that anchors them, footnotes and endnotes
(``text:note``) and comments (``office:annotation``) at the end of the page or section that
refers to them. Tracked changes: insertions are in the text already; deletions live in
``text:tracked-changes`` and are left out. Generated indexes (table of contents, indexes of
figures or terms) are left out: their lines repeat the headings with page numbers of their
own. Headers and footers live in styles.xml, so they never reach the body.

Pages: LibreOffice writes ``text:soft-page-break`` where it last broke pages; a paragraph or
table whose style says ``fo:break-before="page"`` (or the one after a ``break-after``)
starts a page too. When one plus those breaks is the page count in meta.xml, the document is
cut into those pages; otherwise into sections by heading path.

A presentation is one page per ``draw:page`` (formats/office/slides.py), its title the frame
of class ``title``, its other frames in reading order by ``svg:y`` and ``svg:x``, its
speaker notes those of ``presentation:notes``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from quire.errors import CorruptFile
from quire.formats.office.flow import Flow
from quire.formats.office.package import Package, open_package
from quire.formats.office.slides import Slide
from quire.formats.pdf.rows import Grid, has_header, table_rows
from quire.formats.types import Extracted

NS = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "draw": "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0",
    "style": "urn:oasis:names:tc:opendocument:xmlns:style:1.0",
    "fo": "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0",
    "svg": "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0",
    "presentation": "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0",
    "meta": "urn:oasis:names:tc:opendocument:xmlns:meta:1.0",
    "dc": "http://purl.org/dc/elements/1.1/",
}
BREAK = "\x00"
_INDEXES = {"table-of-content", "illustration-index", "table-index", "object-index",
            "user-index", "alphabetical-index", "bibliography"}  # fmt: skip
_SKIP = {"tracked-changes", "sequence-decls", "variable-decls", "user-field-decls", "forms",
         "note-citation", "annotation-end", "bookmark", "bookmark-start",
         "bookmark-end"}  # fmt: skip
_LENGTH = re.compile(r"^(-?[\d.]+)\s*(cm|mm|in|pt|pc|px)?$")
_TO_CM = {"cm": 1.0, "mm": 0.1, "in": 2.54, "pt": 2.54 / 72, "pc": 2.54 / 6, "px": 2.54 / 96}


def q(name: str) -> str:
    """``"text:p"`` as lxml's ``{namespace}p``."""
    prefix, local = name.split(":")
    return f"{{{NS[prefix]}}}{local}"


def _local(el: etree._Element) -> str:
    return etree.QName(el).localname if isinstance(el.tag, str) else ""


def _cm(value: str | None) -> float:
    m = _LENGTH.match((value or "").strip())
    return float(m.group(1)) * _TO_CM[m.group(2) or "cm"] if m else 0.0


def odf_properties(pkg: Package) -> tuple[str | None, str | None]:
    """(title, author) from meta.xml."""
    root = pkg.xml("meta.xml")

    def first(tag: str) -> str | None:
        for el in root.iter(q(tag)) if root is not None else ():
            text = " ".join((el.text or "").split())
            if text:
                return text
        return None

    return first("dc:title"), first("meta:initial-creator") or first("dc:creator")


def _page_count(pkg: Package) -> int | None:
    root = pkg.xml("meta.xml")
    for el in root.iter(q("meta:document-statistic")) if root is not None else ():
        raw = el.get(q("meta:page-count"))
        if raw and raw.isdigit():
            return int(raw)
    return None


@dataclass
class _Breaks:
    """Paragraph and table styles that break the page before or after (both XML parts)."""

    before: set[str] = field(default_factory=set)
    after: set[str] = field(default_factory=set)

    def read(self, root: etree._Element | None) -> None:
        if root is None:
            return
        parents: dict[str, str] = {}
        for style in root.iter(q("style:style")):
            name = style.get(q("style:name"), "")
            if parent := style.get(q("style:parent-style-name")):
                parents[name] = parent
            for props in style:
                if props.get(q("fo:break-before")) == "page":
                    self.before.add(name)
                if props.get(q("fo:break-after")) == "page":
                    self.after.add(name)
        for name in parents:  # inherited from the parent styles
            seen, cur = set(), name
            while cur in parents and cur not in seen:
                seen.add(cur)
                cur = parents[cur]
                if cur in self.before:
                    self.before.add(name)
                if cur in self.after:
                    self.after.add(name)


class _TextReader:
    def __init__(self, breaks: _Breaks) -> None:
        self.breaks = breaks
        self.flow = Flow()
        self.notes = 0
        self.break_after = False

    def _style_breaks(self, el: etree._Element) -> None:
        style = el.get(q("text:style-name")) or el.get(q("table:style-name"))
        if self.break_after or style in self.breaks.before:
            if self.flow.blocks:  # a break before the first block starts no page
                self.flow.page_break()
        self.break_after = style in self.breaks.after

    def blocks(self, container: etree._Element, *, bullet: str = "") -> None:
        for child in container:
            name = _local(child)
            if name in ("p", "h"):
                self._style_breaks(child)
                self.paragraph(child, bullet=bullet)
                bullet = ""
            elif name == "soft-page-break":
                self.flow.page_break()
            elif name == "table":
                self._style_breaks(child)
                self.table(child)
            elif name == "list":
                self.blocks(child, bullet="•")
            elif name in ("list-item", "list-header"):
                self.blocks(child, bullet=bullet)
            elif name in _INDEXES:  # left out, but its pages were laid out
                for _ in child.iter(q("text:soft-page-break")):
                    self.flow.page_break()
            elif name in _SKIP:
                continue
            elif name in ("section", "text", "change-start", "index-body"):
                self.blocks(child)

    def paragraph(self, p: etree._Element, *, bullet: str = "") -> None:
        notes: list[str] = []
        frames: list[etree._Element] = []
        text = self._inline(p, notes, frames)
        pieces = text.split(BREAK)
        filled = [i for i, piece in enumerate(pieces) if piece.strip()]
        level = p.get(q("text:outline-level")) if _local(p) == "h" else None
        for i, piece in enumerate(pieces):
            if i:
                self.flow.page_break()
            if i not in filled:
                continue
            piece = f"{bullet} {piece.strip()}" if bullet and i == filled[0] else piece.strip()
            if level is not None and len(filled) == 1:
                self.flow.heading(float(level) if level.isdigit() else 1.0, piece)
            else:
                self.flow.paragraph(piece, continued=i != filled[0])
        for note in notes:
            self.flow.note(note)
        for frame in frames:
            self.blocks(frame)

    def _inline(self, el: etree._Element, notes: list[str], frames: list[etree._Element]) -> str:
        out = el.text or ""
        for child in el:
            name = _local(child)
            if name == "s":
                c = child.get(q("text:c"), "1")
                out += " " * (int(c) if c.isdigit() else 1)
            elif name == "tab":
                out += "\t"
            elif name == "line-break":
                out += "\n"
            elif name == "soft-page-break":
                out += BREAK
            elif name == "note":
                self.notes += 1
                out += f"[{self.notes}]"
                body = child.find(q("text:note-body"))
                if body is not None and (text := _plain(body)):
                    notes.append(f"[{self.notes}] {text}")
            elif name == "annotation":
                author = child.findtext(q("dc:creator"))
                text = " ".join(_plain(p) for p in child.iter(q("text:p")))
                if text.strip():
                    notes.append(f"Comment ({author}): {text}" if author else f"Comment: {text}")
            elif name == "frame":
                frames += list(child.iter(q("draw:text-box")))
            elif name not in _SKIP:
                out += self._inline(child, notes, frames)
            out += child.tail or ""
        return out

    def table(self, tbl: etree._Element) -> None:
        grid: Grid = []
        breaks: list[int] = []
        for row in _rows(tbl):
            cells, n = _row_cells(row)
            grid.append(cells)
            breaks.append(n)
        header = grid[:1] if has_header(grid) else []
        part: Grid = []
        for i, (row, n) in enumerate(zip(grid, breaks, strict=True)):
            if n:
                if part:
                    self.flow.rows(table_rows(header + part))
                part = []
                for _ in range(n):
                    self.flow.page_break()
            if not (header and i == 0):
                part.append(row)
        if part:
            self.flow.rows(table_rows(header + part))


def _plain(el: etree._Element) -> str:
    """An element's text on one line (notes, comments, cells, slide frames)."""
    parts: list[str] = []

    def walk(node: etree._Element) -> None:
        parts.append(node.text or "")
        for child in node:
            name = _local(child)
            if name == "s":
                parts.append(" ")
            elif name in ("tab", "line-break"):
                parts.append(" ")
            elif name not in _SKIP:
                if name in ("p", "h"):
                    parts.append(" ")
                walk(child)
            parts.append(child.tail or "")

    walk(el)
    return " ".join("".join(parts).split())


def _rows(tbl: etree._Element) -> list[etree._Element]:
    rows = []
    for child in tbl:
        name = _local(child)
        if name == "table-row":
            rows.append(child)
        elif name in ("table-header-rows", "table-rows", "table-row-group"):
            rows += _rows(child)
    return rows


def _row_cells(row: etree._Element) -> tuple[list[str | None], int]:
    """A table row's cells (a column span repeated, a row span None) and its soft breaks."""
    cells: list[str | None] = []
    breaks = 0
    span_left, span_text = 0, ""
    for cell in row:
        name = _local(cell)
        if name not in ("table-cell", "covered-table-cell"):
            continue
        breaks += sum(1 for _ in cell.iter(q("text:soft-page-break")))
        raw = cell.get(q("table:number-columns-repeated"), "1")
        times = min(int(raw), 1024) if raw.isdigit() else 1
        if name == "covered-table-cell":
            for _ in range(times):
                if span_left:
                    cells.append(span_text)
                    span_left -= 1
                else:
                    cells.append(None)
            continue
        lines = [_plain(p) for p in cell if _local(p) in ("p", "h", "list")]
        text = "\n".join(line for line in lines if line)
        cells += [text] * times
        span = cell.get(q("table:number-columns-spanned"), "1")
        span_left, span_text = (int(span) - 1 if span.isdigit() else 0), text
    while cells and not cells[-1]:
        cells.pop()  # the repeated empty columns to the sheet's edge
    return cells, breaks


def _content(pkg: Package) -> etree._Element:
    root = pkg.xml("content.xml")
    if root is None:
        raise CorruptFile(f"Damaged {pkg.label}: no content.xml")
    return root


def extract_odt(path: Path, *, max_unpacked_bytes: int) -> Extracted:
    """Read an OpenDocument text into pages or sections (see the module docstring)."""
    with open_package(path, "OpenDocument text", max_unpacked_bytes) as pkg:
        root = _content(pkg)
        breaks = _Breaks()
        breaks.read(pkg.xml("styles.xml"))
        breaks.read(root)
        body = root.find(f"{q('office:body')}/{q('office:text')}")
        if body is None:
            raise CorruptFile("Damaged OpenDocument text: no office:text body")
        reader = _TextReader(breaks)
        reader.blocks(body)
        recorded = _page_count(pkg)
        title, author = odf_properties(pkg)
    laid_out = reader.flow.page
    paginated = laid_out > 1 and (recorded is None or recorded == laid_out)
    metadata = {
        "pagination": "rendered" if paginated else "sections",
        "recorded_pages": recorded,
        "rendered_pages": laid_out,
    }
    pages = reader.flow.pages(paginated=paginated, source="office")
    return Extracted(kind="odt", title=title, author=author, pages=pages, metadata=metadata)


def _frame_text(frame: etree._Element) -> str:
    tables = list(frame.iter(q("table:table")))
    if tables:
        grid = [_row_cells(row)[0] for row in _rows(tables[0])]
        return "\n".join(table_rows(grid))
    return "\n".join(line for p in frame.iter(q("text:p")) if (line := _plain(p)))


def _shapes(container: etree._Element, slide: Slide) -> None:
    """A slide's frames and shapes (groups opened), its title and its notes."""
    for shape in container:
        name = _local(shape)
        if name == "notes":
            slide.notes = "\n".join(t for p in shape.iter(q("text:p")) if (t := _plain(p)))
        elif name == "g":
            _shapes(shape, slide)
        elif name in ("frame", "custom-shape", "rect", "ellipse", "polygon"):
            text = _frame_text(shape)
            if not text:
                continue
            if shape.get(q("presentation:class")) == "title" and not slide.title:
                slide.title = text
            else:
                slide.blocks.append((_cm(shape.get(q("svg:y"))), _cm(shape.get(q("svg:x"))), text))


def extract_odp(path: Path, *, max_unpacked_bytes: int) -> Extracted:
    """Read an OpenDocument presentation into one page per slide."""
    with open_package(path, "OpenDocument presentation", max_unpacked_bytes) as pkg:
        root = _content(pkg)
        title, author = odf_properties(pkg)
    body = root.find(f"{q('office:body')}/{q('office:presentation')}")
    if body is None:
        raise CorruptFile("Damaged OpenDocument presentation: no office:presentation body")
    pages = []
    for n, page in enumerate(body.iter(q("draw:page")), start=1):
        slide = Slide(n, hidden=page.get(q("presentation:visibility")) == "hidden")
        _shapes(page, slide)
        pages.append(slide.page(height=21.0))
    metadata = {"slides": len(pages)}
    return Extracted(kind="odp", title=title, author=author, pages=pages, metadata=metadata)
