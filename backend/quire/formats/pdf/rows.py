"""A table's cells as lines of text a person reads: one line per row, each value with its
column's header, ``Header: value · Header: value`` (U+00B7 with a space either side).

    table_rows([["Model", "C", "L"], ["BA", "0.037", "2.51"]])
    # ["Model: BA · C: 0.037 · L: 2.51"]

The grid comes from formats/pdf/tables.py: a list of rows, each a list of cells, a cell being
its text ("" when empty) or None where a merged cell from the row above covers it. Decisions:

- Header: the first row, when every cell in it that has text reads like a label (a letter in
  it, not a number, at most ``MAX_HEADER_CHARS``). A header cell that is empty (the stub over
  a column of row labels) gives that column's values bare: ``C · Facebook: 0.61``.
- No header: a two-column table is key and value, ``Source articles: 28,009``; a wider one
  joins its values bare, ``0x59 · MSIZE · 0 · 1 · Get the size of active memory in bytes.``
- Empty cells are left out of the line; a row with no letter or digit at all (empty, or the
  vertical ellipses that stand for rows left out) is dropped.
- A row that goes on from the one above (a cell wrapped onto a line of its own, ruled off by
  the generator as a row of its own: its first cell empty and at most half its cells filled,
  or its filled cells continuing values that end in a hyphen, ``59-`` / ``191``) is joined to
  it, column by column.
- A cell merged over several rows (None below it) is repeated in each row it spans, and one
  merged across columns in each column (tables.py fills those in), so that every line holds
  its whole fact. A header cell merged over several columns names each.
- A row whose cells each hold the same number of lines, three or more (a table drawn as one
  row of tall cells, each line a record: naacl06 Table 5), is read as that many rows; in
  such a table, so is a row of two lines in each cell.
- Each cell's lines are joined with a space; a line ending in a hyphen, or a last fragment of
  one or two lower-case letters (``Enu`` / ``m`` in a narrow header), is joined without one.
"""

from __future__ import annotations

import re

from quire.text.table_rows import SEPARATOR

MAX_HEADER_CHARS = 60
MIN_SPLIT_LINES = 3  # a row of tall cells with this many lines in each is that many rows
_NUMBER = re.compile(r"[-+−]?[\d.,\s%x]+")  # 12, 0.037, 28,009, 0x (a hex prefix alone)
_LETTER = re.compile(r"[^\W\d_]")
_WORD_HYPHEN = re.compile(r"\w-$")  # "59-" / "191", "non-" / "zero"; not "S + A -"

Grid = list[list[str | None]]


def join_lines(lines: list[str]) -> str:
    """A cell's lines as one line (see the module docstring)."""
    out = ""
    for raw in lines:
        line = " ".join(raw.split())
        if not line:
            continue
        if not out:
            out = line
        elif _WORD_HYPHEN.search(out) or (len(line) <= 2 and line.isalpha() and line.islower()):
            out += line
        else:
            out += " " + line
    return out


def _is_label(cell: str) -> bool:
    return (
        len(cell) <= MAX_HEADER_CHARS
        and _LETTER.search(cell) is not None
        and not _NUMBER.fullmatch(cell)
    )


def is_header(row: list[str | None]) -> bool:
    """Whether a row reads as column headers: two cells or more, each a label."""
    cells = [c for c in row if c]
    return len(cells) >= 2 and all(_is_label(join_lines(c.split("\n"))) for c in cells)


def has_header(grid: Grid) -> bool:
    """Whether the first row of a table of two rows or more is its header."""
    return len(grid) >= 2 and is_header(grid[0])


def _lines_each(row: list[str | None]) -> int:
    """How many lines each cell with text holds, when they all hold as many (else 1)."""
    counts = {len(c.split("\n")) for c in row if c}
    return counts.pop() if len(counts) == 1 else 1


def _split_tall(row: list[str | None], least: int) -> list[list[str | None]]:
    """A row of tall cells holding one record per line, as one row per line."""
    n = _lines_each(row)
    if n < least:
        return [row]
    return [[c.split("\n")[i] if c else c for c in row] for i in range(n)]


def _continues(raw: list[str | None], row: list[str], previous: list[str]) -> bool:
    """Whether a row only goes on with cells of the one above (a merged first cell, None,
    starts a row of its own in the same group)."""
    filled = [i for i, c in enumerate(row) if c]
    if not filled:
        return False
    if all(_WORD_HYPHEN.search(previous[i]) for i in filled):
        return True
    return raw[0] == "" and len(filled) <= len(row) / 2


def _merge(into: list[str], row: list[str]) -> None:
    for i, cell in enumerate(row):
        if cell:
            into[i] = join_lines([into[i], cell]) if into[i] else cell


def _header_names(header: list[str | None]) -> list[str]:
    """Header texts, a merged header cell naming each column it spans."""
    names: list[str] = []
    for cell in header:
        names.append(names[-1] if cell is None and names else join_lines((cell or "").split("\n")))
    return names


def table_rows(grid: Grid) -> list[str]:
    """The table as row lines (see the module docstring); [] when it holds no text."""
    width = max((len(r) for r in grid), default=0)
    grid = [list(r) + [""] * (width - len(r)) for r in grid]
    header = _header_names(grid[0]) if has_header(grid) else None
    body = grid[1:] if header is not None else grid
    rows: list[list[str]] = []
    # Once one row is tall cells of records, a row of two lines in each cell is two records.
    least = 2 if any(_lines_each(r) >= MIN_SPLIT_LINES for r in body) else MIN_SPLIT_LINES
    for tall in body:
        for raw in _split_tall(tall, least):
            own = ["" if c is None else join_lines(c.split("\n")) for c in raw]
            if not any(ch.isalnum() for c in own for ch in c):
                continue  # empty, or a row of ellipses standing for rows left out
            if rows and _continues(raw, own, rows[-1]):
                _merge(rows[-1], own)
                continue
            # A merged cell (None) repeats the text of the row above.
            above = rows[-1] if rows else [""] * width
            rows.append([above[i] if c is None else own[i] for i, c in enumerate(raw)])
    return [line for line in (row_line(r, header) for r in rows) if line]


def row_line(cells: list[str], header: list[str] | None) -> str:
    """One row as its line: each value with its column's header (see the module docstring);
    also the rows of a spreadsheet (formats/office/sheets.py)."""
    parts = []
    for i, value in enumerate(cells):
        if not value:
            continue
        name = header[i] if header is not None else ""
        parts.append(f"{name}: {value}" if name else value)
    if header is None and len(cells) == 2 and all(cells):
        return f"{cells[0]}: {cells[1]}"
    return SEPARATOR.join(parts)
