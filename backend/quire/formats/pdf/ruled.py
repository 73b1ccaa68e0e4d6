"""Ruled tables on a PDF page: horizontal rules only (LaTeX's booktabs), read into rows; see
formats/pdf/tables.py for how they are found and what makes one."""

from __future__ import annotations

import statistics

from pdfminer.layout import LTAnno, LTChar, LTTextLine

from quire.formats.pdf.cells import (
    MAX_CELLS,
    SNAP,
    Piece,
    Table,
    inside,
    monospaced,
    overlaps,
)
from quire.formats.pdf.rows import Grid, is_header, table_rows

GAP_EM = 0.6  # characters further apart than this (in font sizes) are in different cells
SPAN_SHARE = 0.1  # rows allowed to cross a gutter (a spanning label)
MIN_SPREAD = 0.2  # share of a ruled table's lines with text in two columns or more (of those
# with text outside the last column)


def ruled(rules: list[tuple[float, float, float]], lines: list[LTTextLine]) -> list[Table]:
    """Tables between horizontal rules of one extent (see the module docstring)."""
    groups: list[list[tuple[float, float, float]]] = []
    for rule in sorted(rules, key=lambda r: (r[0], r[1], -r[2])):
        for group in groups:
            if abs(group[0][0] - rule[0]) <= SNAP and abs(group[0][1] - rule[1]) <= SNAP:
                group.append(rule)
                break
        else:
            groups.append([rule])
    out = []
    for group in groups:
        ys = sorted({round(r[2], 1) for r in group}, reverse=True)
        if len(ys) < 2:
            continue
        x0, x1 = group[0][0], group[0][1]
        bbox = (x0 - SNAP, ys[-1], x1 + SNAP, ys[0])
        within = [ln for ln in lines if inside(ln, bbox)]
        table = _ruled_table(bbox, within)
        if table is not None:
            out.append(table)
    return out


def _pieces(line: LTTextLine) -> list[Piece]:
    """A line cut where its characters are further apart than ``GAP_EM`` font sizes."""
    out: list[Piece] = []
    piece: Piece | None = None
    last: LTChar | None = None
    for item in line:
        if isinstance(item, LTChar):
            if item.get_text().isspace():
                if piece is not None:
                    piece.text += " "
                continue
            if piece is None or last is None or item.x0 - last.x1 > GAP_EM * max(item.size, 1.0):
                piece = Piece(item.x0, item.x1, item.y0, item.y1)
                out.append(piece)
            piece.text += item.get_text()
            piece.x1 = max(piece.x1, item.x1)
            piece.y0, piece.y1 = min(piece.y0, item.y0), max(piece.y1, item.y1)
            last = item
        elif isinstance(item, LTAnno) and piece is not None and item.get_text() == " ":
            piece.text += " "
    for p in out:
        p.text = " ".join(p.text.split())
    return [p for p in out if p.text]


def _visual_rows(pieces: list[Piece]) -> list[list[Piece]]:
    rows: list[list[Piece]] = []
    for piece in sorted(pieces, key=lambda p: -p.y1):
        for row in rows[-3:]:
            if any(overlaps(p, piece) for p in row):
                row.append(piece)
                break
        else:
            rows.append([piece])
    return [sorted(r, key=lambda p: p.x0) for r in rows]


def _gutters(rows: list[list[Piece]], min_gap: float) -> list[tuple[float, float]]:
    """The columns: x-ranges between gutters at least ``min_gap`` wide that at most
    ``SPAN_SHARE`` of the rows cross (a sweep over each row's covered ranges)."""
    events: list[tuple[float, int]] = []
    for row in rows:
        spans: list[list[float]] = []
        for p in sorted(row, key=lambda p: p.x0):
            if spans and p.x0 <= spans[-1][1]:
                spans[-1][1] = max(spans[-1][1], p.x1)
            else:
                spans.append([p.x0, p.x1])
        for a, b in spans:
            events += [(a, 1), (b, -1)]
    events.sort()
    allowed = int(SPAN_SHARE * len(rows))
    columns: list[tuple[float, float]] = []
    depth = 0
    for (x, step), (nxt, _) in zip(events, events[1:], strict=False):
        depth += step
        if depth <= allowed or nxt <= x:
            continue
        if columns and x - columns[-1][1] < min_gap:
            columns[-1] = (columns[-1][0], nxt)  # a word space, not a gutter
        else:
            columns.append((x, nxt))
    return columns


def _column_of(piece: Piece, columns: list[tuple[float, float]]) -> int:
    overlaps = [min(piece.x1, b) - max(piece.x0, a) for a, b in columns]
    best = max(range(len(columns)), key=lambda j: overlaps[j])
    if overlaps[best] > 0:
        return best
    centre = (piece.x0 + piece.x1) / 2
    return min(range(len(columns)), key=lambda j: min(abs(centre - c) for c in columns[j]))


def _spans(piece: Piece, columns: list[tuple[float, float]]) -> bool:
    return sum(min(piece.x1, b) - max(piece.x0, a) > 0 for a, b in columns) >= 2


def _ruled_table(bbox: tuple[float, float, float, float], lines: list[LTTextLine]) -> Table | None:
    if monospaced(lines):
        return None  # a code listing between rules
    pieces = [p for ln in lines for p in _pieces(ln)]
    if not 4 <= len(pieces) <= MAX_CELLS:
        return None
    rows = _visual_rows(pieces)
    size = statistics.median(p.y1 - p.y0 for p in pieces)
    # Columns from the rows of several cells, the first (a header, wider than its values)
    # left out when there are others.
    several = [r for r in rows if len(r) >= 2 and any(c.isalnum() for p in r for c in p.text)]
    basis = several[1:] if len(several) >= 3 else several
    columns = _gutters(basis, GAP_EM * size)
    if len(basis) >= 4:  # a column only one row has text in is a stray mark's
        columns = [
            (a, b)
            for a, b in columns
            if sum(any(p.x0 < b and p.x1 > a for p in r) for r in basis) >= 2
        ]
    if len(columns) < 2:
        return None
    # A row with text in the last column only goes on the row above (a wrapped description):
    # it is not counted against the rows with cells.
    last = len(columns) - 1
    placed = [{_column_of(p, columns) for p in r} for r in rows]
    spread = sum(len(c) >= 2 for c in placed)
    if spread < max(2, MIN_SPREAD * sum(c != {last} for c in placed)):
        return None  # text with a ragged edge, not rows of cells
    out: list[str] = []
    grid: Grid = []
    header: list[str | None] | None = None
    made = 0

    def flush() -> None:
        nonlocal made
        if grid:
            rows = table_rows([header, *grid] if header is not None else grid)
            out.extend(rows)
            made += len(rows)
            grid.clear()

    for row in rows:
        if len(row) == 1 and (_spans(row[0], columns) or (header is None and not grid)):
            flush()  # a title over the table or between its groups
            out.append(row[0].text)
            continue
        cells: list[list[str]] = [[] for _ in columns]
        for piece in row:
            cells[_column_of(piece, columns)].append(piece.text)
        line: list[str | None] = [" ".join(c) for c in cells]
        if header is None and not grid and is_header(line):
            header = line
            continue
        grid.append(line)
    flush()
    if made < 2:
        return None
    return Table(bbox, out, {id(ln) for ln in lines})
