"""Word documents (.docx, .docm, and their templates), read from the package's XML.

What is read, and how (decisions in docs/sources/office.md):

- The body in document order: paragraphs, headings (a paragraph style or the paragraph's own
  outline level; "Title" is level 1; a short paragraph all in bold is a heading below them,
  flow.py), list items with their number or bullet as Word draws it (numbering.xml), tables
  as rows with their header (formats/pdf/rows.py, as for PDF tables), content controls and
  text boxes (each box's paragraphs after the paragraph that anchors it; of the two copies
  Word writes, ``mc:Choice`` and its VML ``mc:Fallback``, only the first).
- Visible text only: tracked insertions are in, tracked deletions and moved-away text out;
  hidden runs (``w:vanish``), field codes and deleted text (``w:delText``) are left out.
- Footnotes, endnotes and comments are read where they are referred to: a marker ``[n]`` in
  the text, the note's text at the end of that page or section.
- Headers and footers are kept out of the body (they repeat on every page); their text goes
  to the document's metadata.
- Pages: Word writes ``w:lastRenderedPageBreak`` where it broke pages when it last laid the
  document out. When one plus their number is the page count Word recorded (docProps/app.xml),
  the document is cut into those pages; otherwise (no breaks, as Outlook and other generators
  save, or breaks that miss pages) into sections by heading path (flow.py). A table row that
  a break falls in goes to the page after it.
- A layout table (one row, one column, or a cell of more than ``LAYOUT_CELL_CHARS``) is read
  as the text it lays out, cell after cell, not as rows.
- Macros (``vbaProject.bin`` in a .docm) are never run: the package is only read as XML.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from quire.errors import CorruptFile
from quire.formats.office.flow import BOLD_LEVEL, Flow
from quire.formats.office.package import (
    Package,
    core_properties,
    main_part,
    open_package,
    relationships,
    rendered_pages,
)
from quire.formats.pdf.rows import Grid, has_header, table_rows
from quire.formats.types import Extracted

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
BOLD_HEADING_CHARS = 120
LAYOUT_CELL_CHARS = 400
BREAK = "\x00"  # a rendered page break inside a paragraph's text

_HEADING_STYLE = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)
_LETTER = re.compile(r"[^\W\d_]")
_ROMAN = ((1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"),
          (50, "l"), (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i"))  # fmt: skip
_SKIP = {"rPr", "pPr", "delText", "instrText", "del", "moveFrom", "fldData", "sectPr", "tblPr",
         "trPr", "tcPr", "tblGrid", "bookmarkStart", "bookmarkEnd", "proofErr"}  # fmt: skip


def _w(tag: str) -> str:
    return f"{{{W}}}{tag}"


def _val(el: etree._Element | None, attr: str = "val") -> str | None:
    return None if el is None else el.get(_w(attr))


def _on(el: etree._Element | None) -> bool:
    """A toggle property (``<w:b/>``, ``<w:b w:val="0"/>``) is on."""
    return el is not None and _val(el) not in ("0", "false", "off")


def _local(el: etree._Element) -> str:
    return etree.QName(el).localname if isinstance(el.tag, str) else ""


@dataclass
class _Style:
    level: float | None = None
    bold: bool = False


def _styles(root: etree._Element | None) -> dict[str, _Style]:
    """Paragraph styles: the heading level (outline level, or a "Heading n" name) and bold."""
    if root is None:
        return {}
    raw: dict[str, tuple[str | None, float | None, bool | None]] = {}
    for style in root.iter(_w("style")):
        sid = style.get(_w("styleId"))
        if sid is None or style.get(_w("type"), "paragraph") != "paragraph":
            continue
        name = _val(style.find(_w("name"))) or ""
        level: float | None = None
        outline = _val(style.find(f"{_w('pPr')}/{_w('outlineLvl')}"))
        if outline is not None and outline.isdigit() and int(outline) < 9:
            level = int(outline) + 1
        elif m := _HEADING_STYLE.match(name):
            level = int(m.group(1))
        elif name.lower() == "title":
            level = 1
        b = style.find(f"{_w('rPr')}/{_w('b')}")
        raw[sid] = (_val(style.find(_w("basedOn"))), level, None if b is None else _on(b))
    out: dict[str, _Style] = {}
    for sid in raw:
        level, bold, seen, cur = None, None, set(), sid
        while cur in raw and cur not in seen:  # inherit through basedOn
            seen.add(cur)
            parent, own_level, own_bold = raw[cur]
            level = level if level is not None else own_level
            bold = bold if bold is not None else own_bold
            cur = parent  # type: ignore[assignment]
        out[sid] = _Style(level, bool(bold))
    return out


def _counter(n: int, fmt: str) -> str:
    if fmt in ("lowerLetter", "upperLetter"):
        s = ""
        while n > 0:
            n, r = divmod(n - 1, 26)
            s = chr(ord("a") + r) + s
        return s.upper() if fmt == "upperLetter" else s
    if fmt in ("lowerRoman", "upperRoman"):
        s = ""
        for value, numeral in _ROMAN:
            while n >= value:
                s, n = s + numeral, n - value
        return s.upper() if fmt == "upperRoman" else s
    return str(n)


@dataclass
class _Numbering:
    """List numbering (numbering.xml): each list's levels, and the counters as the body goes."""

    levels: dict[str, dict[int, tuple[str, str, int]]] = field(default_factory=dict)
    counters: dict[str, list[int]] = field(default_factory=dict)

    @classmethod
    def read(cls, root: etree._Element | None) -> _Numbering:
        out = cls()
        if root is None:
            return out
        abstract: dict[str, dict[int, tuple[str, str, int]]] = {}
        for a in root.iter(_w("abstractNum")):
            lvls = {}
            for lvl in a.iter(_w("lvl")):
                raw = lvl.get(_w("ilvl"), "0")
                ilvl = int(raw) if raw.isdigit() else -1
                start = _val(lvl.find(_w("start")))
                lvls[ilvl] = (
                    _val(lvl.find(_w("numFmt"))) or "decimal",
                    _val(lvl.find(_w("lvlText"))) or "",
                    int(start) if start and start.lstrip("-").isdigit() else 1,
                )
            abstract[a.get(_w("abstractNumId"), "")] = lvls
        for num in root.iter(_w("num")):
            ref = _val(num.find(_w("abstractNumId"))) or ""
            out.levels[num.get(_w("numId"), "")] = abstract.get(ref, {})
        return out

    def label(self, num_id: str, ilvl: int) -> str:
        """The next item's number as Word draws it ("2.", "b)", "•"), counters advanced."""
        levels = self.levels.get(num_id)
        if not levels or ilvl not in levels or not 0 <= ilvl < 10:
            return ""
        counts = self.counters.setdefault(num_id, [0] * 10)
        fmt, text, start = levels[ilvl]
        counts[ilvl] = counts[ilvl] + 1 if counts[ilvl] else start
        for deeper in range(ilvl + 1, len(counts)):
            counts[deeper] = 0
        if fmt == "bullet":
            return "•"
        if fmt == "none":
            return ""

        def number(m: re.Match[str]) -> str:
            k = int(m.group(1)) - 1
            lvl_fmt = levels.get(k, ("decimal", "", 1))[0]
            return _counter(counts[k] or levels.get(k, ("", "", 1))[2], lvl_fmt)

        return re.sub(r"%(\d)", number, text)


@dataclass
class _Para:
    """One paragraph as read: its text (``BREAK`` where a rendered page break falls), whether
    all of it is bold, and the text boxes it anchors."""

    text: str = ""
    bold: bool = True
    boxes: list[etree._Element] = field(default_factory=list)


class _Reader:
    def __init__(self, pkg: Package, main: str) -> None:
        self.pkg = pkg
        self.rels = relationships(pkg, main)
        self.styles = _styles(self._part("/styles"))
        self.numbering = _Numbering.read(self._part("/numbering"))
        self.notes: dict[str, dict[str, etree._Element]] = {
            kind: _by_id(self._part(f"/{kind}s"), kind) for kind in ("footnote", "endnote")
        }
        self.comments = _by_id(self._part("/comments"), "comment")
        self.note_count = 0
        self.flow = Flow()

    def _part(self, rel_type: str) -> etree._Element | None:
        targets = self.rels.get(rel_type, [])
        return self.pkg.xml(targets[0]) if targets else None

    def running_heads(self) -> list[str]:
        """The distinct texts of the headers and footers."""
        heads: list[str] = []
        for target in self.rels.get("/header", []) + self.rels.get("/footer", []):
            root = self.pkg.xml(target)
            if root is None:
                continue
            text = " ".join(self._text(p).text.replace(BREAK, "") for p in root.iter(_w("p")))
            text = " ".join(text.split())
            if text and text not in heads:
                heads.append(text)
        return heads

    # -- inline ---------------------------------------------------------------------------
    def _text(self, p: etree._Element, style_bold: bool = False) -> _Para:
        para = _Para()
        pending: list[str] = []
        self._inline(p, para, style_bold, pending)
        for note in pending:
            self.flow.note(note)
        return para

    def _inline(self, el: etree._Element, para: _Para, bold: bool, notes: list[str]) -> None:
        for child in el:
            name = _local(child)
            if not name or child.tag == f"{{{MC}}}Fallback":
                continue
            if name in ("del", "moveFrom"):
                # Deleted text is not read, but Word laid it out: its page breaks count.
                para.text += BREAK * sum(1 for _ in child.iter(_w("lastRenderedPageBreak")))
                continue
            if name in _SKIP:
                continue
            if name == "r":
                rpr = child.find(_w("rPr"))
                if rpr is not None and (
                    _on(rpr.find(_w("vanish"))) or _on(rpr.find(_w("webHidden")))
                ):
                    continue
                run_bold = bold
                if rpr is not None and rpr.find(_w("b")) is not None:
                    run_bold = _on(rpr.find(_w("b")))
                before = len(para.text)
                self._inline(child, para, run_bold, notes)
                if not run_bold and para.text[before:].strip(BREAK + " \t\n"):
                    para.bold = False
            elif name == "t":
                para.text += child.text or ""
            elif name == "tab" and _local(child.getparent()) == "r":
                para.text += "\t"
            elif name in ("br", "cr"):
                para.text += "\n"
            elif name == "noBreakHyphen":
                para.text += "-"
            elif name == "lastRenderedPageBreak":
                para.text += BREAK
            elif name in ("footnoteReference", "endnoteReference"):
                kind = name.removesuffix("Reference")
                body = self.notes[kind].get(child.get(_w("id"), ""))
                if body is not None:
                    self.note_count += 1
                    para.text += f"[{self.note_count}]"
                    text = self._plain(body)
                    if text:
                        notes.append(f"[{self.note_count}] {text}")
            elif name == "commentReference":
                comment = self.comments.get(child.get(_w("id"), ""))
                if comment is not None and (text := self._plain(comment)):
                    author = comment.get(_w("author"))
                    notes.append(f"Comment ({author}): {text}" if author else f"Comment: {text}")
            elif name == "txbxContent":
                para.boxes.append(child)
            else:  # ins, moveTo, hyperlink, smartTag, fldSimple, sdt, drawing, pict, ...
                self._inline(child, para, bold, notes)

    def _plain(self, container: etree._Element) -> str:
        """A note's or comment's paragraphs as one text (its own references not followed)."""
        parts = []
        for p in container.iter(_w("p")):
            para = _Para()
            self._inline(p, para, False, [])
            parts.append(" ".join(para.text.replace(BREAK, "").split()))
        return " ".join(part for part in parts if part)

    # -- blocks ---------------------------------------------------------------------------
    def blocks(self, container: etree._Element, *, in_table: bool = False) -> None:
        for child in container:
            name = _local(child)
            if name == "p":
                self.paragraph(child, in_table=in_table)
            elif name == "tbl":
                self.table(child)
            elif name in ("sdt", "sdtContent", "customXml", "ins", "moveTo", "AlternateContent",
                          "Choice", "txbxContent"):  # fmt: skip
                self.blocks(child, in_table=in_table)

    def paragraph(self, p: etree._Element, *, in_table: bool = False) -> None:
        ppr = p.find(_w("pPr"))
        style = self.styles.get(_val(ppr.find(_w("pStyle"))) or "" if ppr is not None else "")
        level = style.level if style else None
        if ppr is not None and (outline := _val(ppr.find(_w("outlineLvl")))) is not None:
            level = int(outline) + 1 if outline.isdigit() and int(outline) < 9 else None
        para = self._text(p, bool(style and style.bold))
        prefix = self._list_label(ppr)
        pieces = para.text.split(BREAK)
        filled = [i for i, piece in enumerate(pieces) if piece.strip()]
        for i, piece in enumerate(pieces):
            if i:
                self.flow.page_break()
            if i not in filled:
                continue
            text = f"{prefix} {piece.strip()}" if prefix and i == filled[0] else piece.strip()
            if len(filled) == 1 and level is not None:
                self.flow.heading(level, text)
            elif len(filled) == 1 and not in_table and self._bold_heading(para, prefix):
                self.flow.heading(BOLD_LEVEL, text)
            else:
                self.flow.paragraph(text, continued=i != filled[0])
        for box in para.boxes:
            self.blocks(box, in_table=True)

    @staticmethod
    def _bold_heading(para: _Para, prefix: str) -> bool:
        text = para.text.strip()
        return (
            para.bold
            and 2 <= len(text) <= BOLD_HEADING_CHARS
            and "\n" not in text
            and prefix != "•"
            and len(_LETTER.findall(text)) >= 2
        )

    def _list_label(self, ppr: etree._Element | None) -> str:
        num = ppr.find(_w("numPr")) if ppr is not None else None
        if num is None:
            return ""
        num_id = _val(num.find(_w("numId")))
        ilvl = _val(num.find(_w("ilvl")))
        if not num_id or num_id == "0":
            return ""
        return self.numbering.label(num_id, int(ilvl) if ilvl and ilvl.isdigit() else 0)

    def table(self, tbl: etree._Element) -> None:
        rows = [tr for tr in tbl.iter(_w("tr")) if _nearest_table(tr) is tbl]
        notes: list[str] = []
        # A layout table is read again as blocks: its notes and list items count once.
        counted = self.note_count, {k: list(v) for k, v in self.numbering.counters.items()}
        grid: Grid = []
        breaks: list[int] = []  # rendered page breaks in each row
        for tr in rows:
            row: list[str | None] = []
            row_breaks = 0
            for tc in tr.iterchildren(_w("tc"), _w("sdt")):
                cells = [tc] if _local(tc) == "tc" else list(tc.iter(_w("tc")))
                for cell in cells:
                    tcpr = cell.find(_w("tcPr"))
                    merge = tcpr.find(_w("vMerge")) if tcpr is not None else None
                    span = _val(tcpr.find(_w("gridSpan"))) if tcpr is not None else None
                    text, n = self._cell_text(cell, notes)
                    row_breaks += n
                    continued = merge is not None and _val(merge) in (None, "continue")
                    width = int(span) if span and span.isdigit() else 1
                    row.extend([None if continued else text] * max(1, width))
            grid.append(row)
            breaks.append(row_breaks)
        if _is_layout(grid):
            self.note_count, self.numbering.counters = counted
            for tr in rows:
                for cell in tr.iter(_w("tc")):
                    if _nearest_table(cell) is tbl:
                        self.blocks(cell, in_table=True)
            return
        lead = 0  # caption rows above the header
        while lead < len(grid) and _spanning(grid[lead]):
            lead += 1
        header = grid[lead : lead + 1] if has_header(grid[lead:]) else []
        part: Grid = []
        for i, (row, n) in enumerate(zip(grid, breaks, strict=True)):
            if n:
                self._rows(header, part)
                part = []
                for _ in range(n):
                    self.flow.page_break()
            if header and i == lead:
                continue
            if _spanning(row):  # a caption or group row ("January") across the table
                self._rows(header, part)
                part = []
                self.flow.paragraph(row[0] or "")
            else:
                part.append(row)
        self._rows(header, part)
        for note in notes:
            self.flow.note(note)

    def _rows(self, header: Grid, part: Grid) -> None:
        if part:
            self.flow.rows(table_rows(header + part))

    def _cell_text(self, cell: etree._Element, notes: list[str]) -> tuple[str, int]:
        """A cell's paragraphs (nested tables' too) as lines, and the page breaks in them."""
        lines, breaks = [], 0
        for p in cell.iter(_w("p")):
            para = _Para()
            self._inline(p, para, False, notes)
            breaks += para.text.count(BREAK)
            prefix = self._list_label(p.find(_w("pPr")))
            text = " ".join(para.text.replace(BREAK, " ").split())
            if text:
                lines.append(f"{prefix} {text}" if prefix else text)
        return "\n".join(lines), breaks


def _nearest_table(el: etree._Element) -> etree._Element | None:
    for parent in el.iterancestors(_w("tbl")):
        return parent
    return None


def _spanning(row: list[str | None]) -> bool:
    """One text across a row of several columns (a cell spanning them all)."""
    return len(row) > 1 and bool(row[0]) and all(c == row[0] for c in row)


def _is_layout(grid: Grid) -> bool:
    width = max((len(r) for r in grid), default=0)
    longest = max((len(c) for r in grid for c in r if c), default=0)
    return len(grid) <= 1 or width <= 1 or longest > LAYOUT_CELL_CHARS


def _by_id(root: etree._Element | None, tag: str) -> dict[str, etree._Element]:
    if root is None:
        return {}
    return {el.get(_w("id"), ""): el for el in root.iter(_w(tag))}


def extract_word(path: Path, *, max_unpacked_bytes: int) -> Extracted:
    """Read a Word document into pages (rendered pages) or sections (see the module docstring)."""
    with open_package(path, "Word document", max_unpacked_bytes) as pkg:
        main = main_part(pkg)
        root = pkg.xml(main)
        if root is None:
            raise CorruptFile("Damaged Word document: no document part")
        body = root.find(_w("body"))
        if body is None:
            raise CorruptFile("Damaged Word document: the document part has no body")
        reader = _Reader(pkg, main)
        reader.blocks(body)
        recorded = rendered_pages(pkg)
        heads = reader.running_heads()
        title, author = core_properties(pkg)
        macros = any(n.lower().endswith("vbaproject.bin") for n in pkg.names)
    laid_out = reader.flow.page  # 1 + the rendered page breaks of the body
    paginated = laid_out > 1 and (recorded is None or recorded == laid_out)
    pages = reader.flow.pages(paginated=paginated, source="office")
    metadata = {
        "pagination": "rendered" if paginated else "sections",
        "recorded_pages": recorded,
        "rendered_pages": laid_out,
        "running_heads": heads,
        "macros": "present, never run" if macros else None,
    }
    return Extracted(kind="docx", title=title, author=author, pages=pages, metadata=metadata)
