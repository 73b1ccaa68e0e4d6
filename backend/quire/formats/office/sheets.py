"""Spreadsheets (.xlsx, .xlsm; .ods): each sheet as pages of at most ``ROWS_PER_PAGE`` rows.

A row is one line, each value with its column's header, ``Country: Peru · Year: 2019``
(formats/pdf/rows.py :func:`row_line`, the same line a PDF table row gives). The header is a
row of two or more labels (rows.py :func:`is_header`), with the rows of labels under it (up
to ``MAX_HEADER_ROWS`` in all, stacked column by column: "COMBINED ADJUSTED GROSS INCOME"),
followed by a row holding a number or a date; it names the columns until the next header or
two empty rows (sheets often hold several tables one under another, and space a table's
rows out with single empty ones). Header rows are
kept as lines of their own too; rows with no header in effect join their values bare.

Values are what the sheet shows as far as the file says it: formulas give the value the
application cached when it last saved (openpyxl ``data_only``; a file never opened by a
spreadsheet application after its formulas were written has none, and the cell reads
empty), whole numbers without ".0", percentages as percentages (0.94 formatted ``0%`` reads
94%), dates as ISO dates. Hidden sheets are read and marked "(hidden)" in their citation.

Each page's citation is "sheet Results, rows 12–40" (the sheet's own row numbers), its
heading path the sheet's name. Memory is bounded by the rows of one page, not the sheet:
openpyxl's read-only mode streams each sheet's XML, and an OpenDocument sheet is read with
lxml's ``iterparse``, each row dropped once read.
"""

from __future__ import annotations

import datetime as dt
import warnings
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lxml import etree
from openpyxl import load_workbook
from openpyxl.utils.exceptions import InvalidFileException

from quire.errors import CorruptFile
from quire.formats.office.odf import odf_properties
from quire.formats.office.package import core_properties, open_package
from quire.formats.pdf.rows import is_header, row_line
from quire.formats.types import Extracted
from quire.storage.records import Page
from quire.text.clean import clean_page_text

ROWS_PER_PAGE = 200
MAX_GAP = 2  # one empty row spaces a table out; two end it
MAX_HEADER_ROWS = 4  # header rows stacked over one table ("COMBINED / ADJUSTED / GROSS")
#: A lone label above a header starts its stack when it is this short ("COMBINED"); a longer
#: one is the table's title ("Class Profile for First-Year Full-Time MBA … Students"), kept as
#: a line of its own, not prefixed to the first column's name in every row.
MAX_STACKED_WORDS = 3
MAX_REPEAT = 100  # an ODS row or cell repeated more often than this (with content) is cut
_NUMERIC = (int, float, dt.datetime, dt.date, dt.time)


def show(value: Any, number_format: str = "General") -> str:
    """A cell's value as the sheet shows it (see the module docstring)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, int | float):
        if "%" in number_format:
            decimals = len(number_format.split(".")[1].split("%")[0]) if "." in number_format else 0
            decimals = min(decimals, 10)
            return f"{value * 100:.{decimals}f}%"
        if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.10g}" if isinstance(value, float) else str(value)
    return " ".join(str(value).split())


@dataclass
class _Cell:
    text: str
    numeric: bool


@dataclass
class SheetPages:
    """Rows of one sheet in, pages out (see the module docstring)."""

    name: str
    hidden: bool
    first_page: int
    pages: list[Page] = field(default_factory=list)
    _lines: list[str] = field(default_factory=list)
    _rows: tuple[int, int] | None = None
    _header: list[str] | None = None
    #: Header-like rows (labels only, the first with two or more), until a row of values.
    _pending: list[tuple[int, list[_Cell], bool]] = field(default_factory=list)  # (…, written)
    _above: tuple[int, list[_Cell]] | None = None  # the row above, when it holds labels only
    _last: int = 0

    def add(self, number: int, cells: list[_Cell]) -> None:
        """Row ``number`` (1-based, as the sheet numbers it) with its cells."""
        if not any(c.text for c in cells):
            return
        if number > self._last + MAX_GAP:  # empty rows end a table
            self._flush_pending()
            self._header = None
            self._above = None
        self._last = number
        numeric = any(c.numeric for c in cells)
        if not numeric and (self._pending or is_header([c.text for c in cells])):
            if len(self._pending) >= MAX_HEADER_ROWS:
                self._flush_pending()
            if (
                not self._pending
                and self._above
                and self._above[0] == number - 1
                and _short(self._above[1])
            ):
                # A lone label just above starts the stack ("COMBINED" over "ADJUSTED").
                self._pending.append((self._above[0], self._above[1], True))
            self._pending.append((number, cells, False))
            return
        if self._pending and numeric:
            self._header = _stacked([cells for _, cells, _ in self._pending])
        self._flush_pending()
        self._above = None if numeric else (number, cells)
        self._line(number, row_line([c.text for c in cells], self._header))

    def _flush_pending(self) -> None:
        for number, cells, written in self._pending:
            if not written:
                self._line(number, row_line([c.text for c in cells], None))
        self._pending = []

    def _line(self, number: int, line: str) -> None:
        if not line:
            return
        if self._rows is not None and len(self._lines) >= ROWS_PER_PAGE:
            self._page()
        self._lines.append(clean_page_text(line, drop_page_numbers=False))
        self._rows = (self._rows[0] if self._rows else number, number)

    def _page(self) -> None:
        if self._rows is None:
            return
        first, last = self._rows
        where = f"row {first}" if first == last else f"rows {first}–{last}"
        hidden = " (hidden)" if self.hidden else ""
        self.pages.append(
            Page(
                self.first_page + len(self.pages),
                "\n".join(self._lines),
                heading_path=self.name,
                source="office",
                meta={"sheet": self.name, "rows": [first, last], "hidden": self.hidden},
                label=f"sheet {self.name}{hidden}, {where}",
            )
        )
        self._lines, self._rows = [], None

    def close(self) -> list[Page]:
        """The sheet's pages, the last one included."""
        self._flush_pending()
        self._page()
        return self.pages


def _short(cells: list[_Cell]) -> bool:
    """Whether a row of labels is short enough to be part of a column's name."""
    return sum(len(c.text.split()) for c in cells) <= MAX_STACKED_WORDS


def _stacked(rows: list[list[_Cell]]) -> list[str]:
    """Header rows stacked over a table, as one header: each column's labels joined."""
    width = max(len(r) for r in rows)
    return [
        " ".join(r[i].text for r in rows if i < len(r) and r[i].text).replace("\n", " ")
        for i in range(width)
    ]


def _xlsx_rows(ws: Any) -> Iterator[tuple[int, list[_Cell]]]:
    for row in ws.iter_rows():
        number = next((c.row for c in row if getattr(c, "row", None)), None)
        if number is None:
            continue
        cells = []
        for c in row:
            value = getattr(c, "value", None)
            fmt = getattr(c, "number_format", "General") or "General"
            cells.append(_Cell(show(value, fmt), isinstance(value, _NUMERIC)))
        yield number, cells


def extract_xlsx(path: Path, *, max_unpacked_bytes: int) -> Extracted:
    """Read an Excel workbook, sheet by sheet, in bounded memory (see the module docstring)."""
    with open_package(path, "Excel workbook", max_unpacked_bytes) as pkg:
        title, author = core_properties(pkg)
        macros = any(n.lower().endswith("vbaproject.bin") for n in pkg.names)
    with warnings.catch_warnings():
        # openpyxl warns of each part it cannot use (a header it cannot parse, data
        # validation): none is text a citation needs.
        warnings.simplefilter("ignore", UserWarning)
        return _read_xlsx(path, title, author, macros)


def _read_xlsx(path: Path, title: str | None, author: str | None, macros: bool) -> Extracted:
    try:
        wb = load_workbook(path, read_only=True, data_only=True, keep_links=False)
    except (InvalidFileException, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise CorruptFile(f"Damaged Excel workbook: {exc}") from exc
    pages: list[Page] = []
    hidden: list[str] = []
    try:
        for ws in wb.worksheets:
            is_hidden = getattr(ws, "sheet_state", "visible") != "visible"
            if is_hidden:
                hidden.append(ws.title)
            sheet = SheetPages(ws.title, is_hidden, len(pages) + 1)
            for number, cells in _xlsx_rows(ws):
                sheet.add(number, cells)
            pages += sheet.close()
    finally:
        wb.close()
    metadata = {
        "sheets": len(wb.sheetnames),
        "hidden_sheets": hidden,
        "macros": "present, never run" if macros else None,
    }
    return Extracted(kind="xlsx", title=title, author=author, pages=pages, metadata=metadata)


# -- OpenDocument spreadsheets ------------------------------------------------------------------
TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
STYLE = "urn:oasis:names:tc:opendocument:xmlns:style:1.0"
TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"


def _t(tag: str) -> str:
    return f"{{{TABLE}}}{tag}"


def _ods_cell(cell: etree._Element) -> _Cell:
    kind = cell.get(f"{{{OFFICE}}}value-type")
    value = cell.get(f"{{{OFFICE}}}value")
    if kind in ("float", "currency", "percentage") and value is not None:
        try:
            number = float(value)
        except ValueError:
            number = None
        if number is not None:
            return _Cell(show(number, "0%" if kind == "percentage" else "General"), True)
    if kind == "date" and (date := cell.get(f"{{{OFFICE}}}date-value")):
        return _Cell(date.removesuffix("T00:00:00"), True)
    if kind == "boolean":
        return _Cell(show(cell.get(f"{{{OFFICE}}}boolean-value") == "true"), False)
    lines = [" ".join("".join(p.itertext()).split()) for p in cell.iter(f"{{{TEXT}}}p")]
    return _Cell("\n".join(line for line in lines if line), False)


def _repeat(el: etree._Element, attr: str) -> int:
    raw = el.get(_t(attr), "1")
    return int(raw) if raw.isdigit() else 1


def extract_ods(path: Path, *, max_unpacked_bytes: int) -> Extracted:
    """Read an OpenDocument spreadsheet, row by row (see the module docstring)."""
    with open_package(path, "OpenDocument spreadsheet", max_unpacked_bytes) as pkg:
        if "content.xml" not in pkg.names:
            raise CorruptFile("Damaged OpenDocument spreadsheet: no content.xml")
        title, author = odf_properties(pkg)
        hidden_styles: set[str] = set()
        pages: list[Page] = []
        hidden: list[str] = []
        sheet: SheetPages | None = None
        number = 0
        with pkg.zip.open("content.xml") as fh:
            events = etree.iterparse(
                fh,
                events=("start", "end"),
                resolve_entities=False,
                no_network=True,
                load_dtd=False,
                huge_tree=False,
            )
            try:
                for event, el in events:
                    if event == "end" and el.tag == f"{{{STYLE}}}style":
                        props = el.find(f"{{{STYLE}}}table-properties")
                        if props is not None and props.get(_t("display")) == "false":
                            hidden_styles.add(el.get(f"{{{STYLE}}}name", ""))
                    elif event == "start" and el.tag == _t("table"):
                        name = el.get(_t("name"), f"Sheet{len(hidden) + 1}")
                        is_hidden = el.get(_t("style-name")) in hidden_styles
                        if is_hidden:
                            hidden.append(name)
                        sheet = SheetPages(name, is_hidden, len(pages) + 1)
                        number = 0
                    elif event == "end" and el.tag == _t("table-row") and sheet is not None:
                        cells: list[_Cell] = []
                        for cell in el:
                            if not isinstance(cell.tag, str):
                                continue
                            read = _ods_cell(cell)
                            times = _repeat(cell, "number-columns-repeated")
                            cells += [read] * (min(times, MAX_REPEAT) if read.text else times)
                            if len(cells) > 16384:  # the widest sheet an application opens
                                break
                        times = _repeat(el, "number-rows-repeated")
                        if any(c.text for c in cells):
                            for _ in range(min(times, MAX_REPEAT)):
                                number += 1
                                sheet.add(number, cells)
                            times -= min(times, MAX_REPEAT)
                        number += times
                        el.clear()
                    elif event == "end" and el.tag == _t("table") and sheet is not None:
                        pages += sheet.close()
                        sheet = None
                        el.clear()
            except etree.XMLSyntaxError as exc:
                raise CorruptFile(f"Damaged OpenDocument spreadsheet: {exc}") from exc
    metadata = {"sheets": len({p.meta["sheet"] for p in pages}), "hidden_sheets": hidden}
    return Extracted(kind="ods", title=title, author=author, pages=pages, metadata=metadata)
