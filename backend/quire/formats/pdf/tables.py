"""Tables on a laid-out PDF page (pdfminer's LTPage), read into rows (formats/pdf/rows.py).

Two kinds are found, both from the page's drawn lines, so a page without ruling costs one walk
over its graphics and nothing more:

- Grids (every cell boxed: riscv-abi-spec's relocation tables): pdfplumber's lattice finder
  (edges merged → intersections → cells → tables → rows; pdfplumber is built on pdfminer.six)
  over the page's lines and rectangles. The cell search and the grouping into tables are
  pdfplumber's, rewritten with an index (its own look at every pair of points and cells: 50 s
  on a page of 5,000 cells, 2 s here). It runs only when the page has at least two vertical
  and two horizontal edges; a page of more than ``MAX_POINTS`` intersections keeps its plain
  text. A frame around text set
  mostly in a monospaced font is a code listing, not a table.
- Ruled tables (formats/pdf/ruled.py; horizontal rules only, LaTeX's booktabs:
  thinkcomplexity2's Table 4.1, the yellow paper's fee schedule): two or more rules of the
  same extent with text between them.
  Their columns are the gutters no row's text crosses (one row in ten may: a spanning label);
  each line of text is a row, and a line that only goes on in some columns of the one above
  (a wrapped description, a formula under it) is joined to it by rows.py. At least a fifth
  of the lines must have text in two columns, not counting the lines with text in the last
  column only (a description running on for lines of formulas under its row, as the yellow
  paper's opcode tables run), and a region set mostly in a monospaced font
  is a code listing, no table. A line of one piece
  spanning several columns (a group title inside the table) stands as a line of its own.

Only the page's own drawing and text are read, not what is inside a figure (a Form XObject):
there, ruled lines with text between them are a chart's axes and labels (thinkcomplexity2
p. 147). A table must have two columns and two rows with text, else the region is left as text: a
framed code listing or a boxed note is no table. Cell text is taken from pdfminer's own
characters and spaces (the words the rest of the page is made of), each character going to
the cell its centre falls in. A page of more than ``MAX_CELLS`` cells keeps its plain text.
"""

from __future__ import annotations

import bisect
from typing import Any, cast

from pdfminer.layout import (
    LTAnno,
    LTChar,
    LTCurve,
    LTLine,
    LTPage,
    LTRect,
    LTTextBox,
    LTTextLine,
    LTTextLineHorizontal,
)
from pdfplumber.table import (
    Table as PlumberTable,
)
from pdfplumber.table import edges_to_intersections, merge_edges
from pdfplumber.utils.geometry import filter_edges

from quire.formats.pdf.cells import MAX_CELLS, SNAP, Piece, Table, cell_text, inside, monospaced
from quire.formats.pdf.rows import Grid, table_rows
from quire.formats.pdf.ruled import ruled

MAX_POINTS = 20_000  # grid intersections per page beyond which the lattice finder is not run
RULE_THICKNESS = 2.5  # a filled rectangle this thin is a rule
MIN_RULE = 20.0  # a rule at least this long
BACKGROUND = 0.8  # a rectangle over this share of the page is its background, not a cell


_Box = tuple[float, float, float, float]  # pdfplumber's: x0, top, x1, bottom


def _text_lines(layout: LTPage) -> list[LTTextLine]:
    return [
        line
        for item in layout
        if isinstance(item, LTTextBox)
        for line in item
        if isinstance(line, LTTextLineHorizontal)
    ]


def _edges(layout: LTPage) -> tuple[list[dict[str, Any]], list[tuple[float, float, float]]]:
    """The page's straight edges as pdfplumber edge dicts (top-down coordinates), and its
    horizontal rules as (x0, x1, y)."""
    height = layout.height
    area = layout.width * layout.height
    edges: list[dict[str, Any]] = []
    rules: list[tuple[float, float, float]] = []

    def add(x0: float, y0: float, x1: float, y1: float, kind: str, rule: bool = True) -> None:
        orientation = "h" if abs(y1 - y0) < abs(x1 - x0) else "v"
        if orientation == "h":
            y0 = y1 = (y0 + y1) / 2
        else:
            x0 = x1 = (x0 + x1) / 2
        edges.append(
            {
                "x0": x0,
                "x1": x1,
                "top": height - y1,
                "bottom": height - y0,
                "width": x1 - x0,
                "height": y1 - y0,
                "orientation": orientation,
                "object_type": kind,
            }
        )
        if rule and orientation == "h" and x1 - x0 >= MIN_RULE:
            rules.append((x0, x1, y0))

    for item in layout:
        if isinstance(item, LTRect):
            x0, y0, x1, y1 = item.bbox
            if item.width * item.height > BACKGROUND * area:
                continue
            if item.height <= RULE_THICKNESS or item.width <= RULE_THICKNESS:
                add(x0, y0, x1, y1, "rect_edge")
            else:
                for box in ((x0, y0, x1, y0), (x0, y1, x1, y1), (x0, y0, x0, y1), (x1, y0, x1, y1)):
                    add(*box, "rect_edge", rule=False)  # a box's side is no rule
        elif isinstance(item, LTLine):
            add(*item.bbox, "line")
        elif isinstance(item, LTCurve) and item.pts:
            for (ax, ay), (bx, by) in zip(item.pts, item.pts[1:], strict=False):
                if ax == bx or ay == by:
                    add(min(ax, bx), min(ay, by), max(ax, bx), max(ay, by), "curve_edge")
    return edges, rules


def find_tables(layout: LTPage) -> list[Table]:
    """The tables on a page, in no particular order (page_text places them)."""
    edges, rules = _edges(layout)
    if len(rules) < 2 and len(edges) < 4:
        return []  # most pages: nothing ruled, nothing more to do
    lines = _text_lines(layout)
    if not lines:
        return []
    tables = _grids(layout, edges, lines)
    if len(rules) >= 2:
        taken = [t.bbox for t in tables]
        free = [ln for ln in lines if not any(inside(ln, box) for box in taken)]
        tables += ruled(rules, free)
    return tables


def _grids(layout: LTPage, edges: list[dict[str, Any]], lines: list[LTTextLine]) -> list[Table]:
    vertical = sum(e["orientation"] == "v" and e["height"] >= SNAP for e in edges)
    horizontal = sum(e["orientation"] == "h" and e["width"] >= SNAP for e in edges)
    if vertical < 2 or horizontal < 2:
        return []
    merged = filter_edges(merge_edges(edges, SNAP, SNAP, SNAP, SNAP), min_length=SNAP)
    points = edges_to_intersections(merged, SNAP, SNAP)
    if len(points) > MAX_POINTS:
        return []
    cells = _cells(points)
    if len(cells) > MAX_CELLS:
        return []
    out = []
    for group in _tables(cells):
        box = _bbox_of(layout.height, group)
        if monospaced([ln for ln in lines if inside(ln, box)]):
            continue  # a code listing in a frame
        # pdfplumber groups the cells into rows itself; the page is only needed for its text.
        rows = [r.cells for r in PlumberTable(cast(Any, None), group).rows]
        table = _grid_table(layout.height, rows, lines)
        if table is not None:
            out.append(table)
    return out


def _cells(points: dict[Any, dict[str, list[Any]]]) -> list[_Box]:
    """pdfplumber's intersections_to_cells (the smallest box from each point whose sides are
    drawn), with the points below and right of each looked up by column and row rather than
    by scanning all of them: that scan made a page of 5,000 cells take 50 s."""
    sides = {
        p: (
            {(e["x0"], e["top"], e["x1"], e["bottom"]) for e in edges["v"]},
            {(e["x0"], e["top"], e["x1"], e["bottom"]) for e in edges["h"]},
        )
        for p, edges in points.items()
    }
    columns: dict[float, list[Any]] = {}
    rows: dict[float, list[Any]] = {}
    for p in sorted(points):
        columns.setdefault(p[0], []).append(p)
        rows.setdefault(p[1], []).append(p)
    cells: list[_Box] = []
    for p in sorted(points):
        column, row = columns[p[0]], sorted(rows[p[1]])
        below = column[bisect.bisect_right(column, p) :]
        right = row[bisect.bisect_right(row, p) :]
        cell = next(
            (
                (p[0], p[1], r[0], b[1])
                for b in below
                if sides[p][0] & sides[b][0]
                for r in right
                if sides[p][1] & sides[r][1]
                and (r[0], b[1]) in sides
                and sides[(r[0], b[1])][0] & sides[r][0]
                and sides[(r[0], b[1])][1] & sides[b][1]
            ),
            None,
        )
        if cell is not None:
            cells.append(cell)
    return cells


def _tables(cells: list[_Box]) -> list[list[_Box]]:
    """Cells that share a corner, transitively, as tables of two cells or more, from the top
    (pdfplumber's cells_to_tables, by union-find: its passes are quadratic too)."""
    parent = list(range(len(cells)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[tuple[float, float], int] = {}
    for i, (x0, top, x1, bottom) in enumerate(cells):
        for corner in ((x0, top), (x0, bottom), (x1, top), (x1, bottom)):
            j = owner.setdefault(corner, i)
            parent[root(i)] = root(j)
    groups: dict[int, list[_Box]] = {}
    for i, cell in enumerate(cells):
        groups.setdefault(root(i), []).append(cell)
    tables = [g for g in groups.values() if len(g) > 1]
    return sorted(tables, key=lambda t: min((c[1], c[0]) for c in t))


def _bbox_of(height: float, cells: list[Any]) -> tuple[float, float, float, float]:
    """The box around pdfplumber cells (top-down) in pdfminer's coordinates."""
    return (
        min(c[0] for c in cells),
        height - max(c[3] for c in cells),
        max(c[2] for c in cells),
        height - min(c[1] for c in cells),
    )


def _grid_table(height: float, rows: list[list[Any]], lines: list[LTTextLine]) -> Table | None:
    """A grid's text, cell by cell; None when it is no table (one column, one row of text)."""
    if len(rows) < 2 or max(len(r) for r in rows) < 2:
        return None
    # Cells in pdfminer's coordinates, rows from the top.
    boxes = [
        [None if c is None else (c[0], height - c[3], c[2], height - c[1]) for c in r] for r in rows
    ]
    tops = [-max(c[3] for c in r if c is not None) for r in boxes]
    bbox = _bbox_of(height, [c for r in rows for c in r if c is not None])
    texts: dict[tuple[int, int], list[Piece]] = {}
    consumed: set[int] = set()

    def cell_of(char: LTChar) -> tuple[int, int] | None:
        cx, cy = (char.x0 + char.x1) / 2, (char.y0 + char.y1) / 2
        i = bisect.bisect_right(tops, -cy) - 1
        for k in (i, i + 1, i - 1):
            if 0 <= k < len(boxes):
                for j, c in enumerate(boxes[k]):
                    if c is not None and c[0] <= cx <= c[2] and c[1] <= cy <= c[3]:
                        return k, j
        return None

    for line in lines:
        if not inside(line, bbox):
            continue
        consumed.add(id(line))
        current: tuple[int, int] | None = None
        piece: Piece | None = None
        for item in line:
            if isinstance(item, LTChar):
                where = cell_of(item)
                if where != current or piece is None:
                    current = where
                    piece = Piece(item.x0, item.x1, item.y0, item.y1)
                    if where is not None:
                        texts.setdefault(where, []).append(piece)
                piece.text += item.get_text()
                piece.x1 = item.x1
            elif isinstance(item, LTAnno) and piece is not None and item.get_text() != "\n":
                piece.text += item.get_text()
    grid: Grid = [
        [None if c is None else cell_text(texts.get((i, j), [])) for j, c in enumerate(r)]
        for i, r in enumerate(boxes)
    ]
    _spread_across(grid, boxes)
    if sum(any(c for c in r) for r in grid) < 2 or _columns_used(grid) < 2:
        return None
    return Table(bbox, table_rows(grid), consumed)


def _spread_across(grid: Grid, boxes: list[list[Any]]) -> None:
    """A cell merged across columns gives its text to each column it covers (pdfplumber has
    None there, as under a cell merged down rows, which rows.py repeats from above)."""
    lefts = sorted({c[0] for r in boxes for c in r if c is not None})
    for i, row in enumerate(boxes):
        for j in range(1, len(row)):
            if row[j] is not None or j >= len(lefts):
                continue
            k = next((k for k in range(j - 1, -1, -1) if row[k] is not None), None)
            if k is not None and row[k][2] > lefts[j] + SNAP:
                grid[i][j] = grid[i][k]


def _columns_used(grid: Grid) -> int:
    return sum(any(r[j] for r in grid if j < len(r)) for j in range(max(len(r) for r in grid)))
