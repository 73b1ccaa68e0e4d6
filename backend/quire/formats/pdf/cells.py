"""What a PDF table is read from and into (formats/pdf/tables.py finds grids, ruled.py tables
between rules): a table's box and lines, the pieces of text lines that fall in one cell, and
the tests both finders share."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pdfminer.layout import LTChar, LTTextLine

MAX_CELLS = 5000  # cells per page beyond which the page keeps its plain text
SNAP = 3.0  # edges this close are one (pdfplumber's default tolerances)
MONO = re.compile(r"mono|courier|consol|code|cmtt|sftt|typewriter|mplus1mn|menlo", re.I)


@dataclass
class Table:
    """A table found on a page: its box (pdfminer coordinates) and its lines of text."""

    bbox: tuple[float, float, float, float]
    lines: list[str]
    #: The text lines of the page it consumed (their ids): page_text leaves them out.
    consumed: set[int] = field(default_factory=set)


@dataclass
class Piece:
    """Characters of one text line that sit together: a cell's text on that line."""

    x0: float
    x1: float
    y0: float
    y1: float
    text: str = ""


def inside(line: LTTextLine, box: tuple[float, float, float, float]) -> bool:
    cx, cy = (line.x0 + line.x1) / 2, (line.y0 + line.y1) / 2
    return box[0] <= cx <= box[2] and box[1] <= cy <= box[3]


def cell_text(pieces: list[Piece]) -> str:
    """A cell's pieces as its lines, top to bottom (a line's pieces left to right)."""
    rows: list[list[Piece]] = []
    for piece in sorted(pieces, key=lambda p: -p.y1):
        if rows and overlaps(rows[-1][0], piece):
            rows[-1].append(piece)
        else:
            rows.append([piece])
    return "\n".join(
        " ".join(p.text.strip() for p in sorted(r, key=lambda p: p.x0) if p.text.strip())
        for r in rows
    )


def overlaps(a: Piece, b: Piece) -> bool:
    """Whether two pieces sit on one line (they overlap by half the lower one's height)."""
    return min(a.y1, b.y1) - max(a.y0, b.y0) > 0.5 * min(a.y1 - a.y0, b.y1 - b.y0)


def monospaced(lines: list[LTTextLine]) -> bool:
    chars = [c for ln in lines for c in ln if isinstance(c, LTChar) and not c.get_text().isspace()]
    return sum(bool(MONO.search(c.fontname)) for c in chars) > len(chars) / 2
