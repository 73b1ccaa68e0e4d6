"""How pdfminer lays a page out, and its text in reading order.

Vertical writing (Japanese and Chinese set top to bottom in columns from right to left) is
decided per page before layout analysis, from the characters themselves: when most steps from
one upright CJK character to the next in the content stream go down a column rather than
across a line, the page is laid out with ``detect_vertical``, which reads columns right to
left; other pages get exactly the analysis they always had. In a vertical box the word spaces
pdfminer guesses between CJK characters are dropped, and a column that runs to the foot of the
box continues into the next without a line break (the sentence goes on there).
"""

from __future__ import annotations

import copy
import itertools
import logging
from collections.abc import Iterator
from typing import Any

import pdfminer.layout
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
    LTTextLine,
    LTTextLineVertical,
)
from pdfminer.pdfdocument import (
    PDFDocument,
)
from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
from pdfminer.pdfpage import PDFPage
from pdfminer.psexceptions import PSException

from quire.formats.pdf.cells import Table
from quire.formats.pdf.pairs import NO_PAIRS, label_pairs
from quire.formats.pdf.tables import find_tables
from quire.text.scripts import (
    CJK_TEXT,
    UPRIGHT,
)

log = logging.getLogger(__name__)

# Errors pdfminer raises on damaged input besides its own PSException tree.
PARSE_ERRORS = (PSException, ValueError, KeyError, TypeError, IndexError, AssertionError, EOFError)

# Defaults except all_texts and line_overlap. all_texts: text inside Form XObjects (figures,
# and whole pages in some generators) must not be lost. boxes_flow 0.5 orders two-column papers
# column by column. line_overlap 0.4 (of 0.5): TeX's typewriter quotes sit half a line high
# (5.8 pt of a 12 pt line), and each one broke its line, so a quoted code string was read as a
# column of letters after the sentence ("is ’CCDCDCD’." came out as "is\n’\n." … "CCDCDCD").
LAPARAMS = LAParams(
    line_overlap=0.4,
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


class _FirstSeen:
    """pdfminer groups a page's text boxes closest first and breaks a tie in distance by the
    boxes' ``id()``: their memory addresses, which depend on all that the process did before.
    The same page then came out in another order in another run (Think Complexity's chart
    labels on pp. 164 and 200, read after the first 163 pages). Bound as ``id`` in
    pdfminer.layout's namespace (``group_textboxes`` is its only caller), a box's number is the
    order in which grouping first met it, the same in every run: the boxes are met in their
    order on the page, and the groups as they are made."""

    def __init__(self) -> None:
        self._next = itertools.count()

    def __call__(self, obj: object) -> int:
        number: int | None = getattr(obj, "_quire_first_seen", None)
        if number is None:
            number = next(self._next)
            obj._quire_first_seen = number  # type: ignore[attr-defined]
        return number


pdfminer.layout.id = _FirstSeen()  # type: ignore[attr-defined]
HANG_GAP = 0.6  # a paragraph's next line's gap to the line above, at most, in line heights
HANG_INDENT = 3.0  # ...and its indent (a hanging indent), at most
FLUSH_WIDTH = 15.0  # a line that a flush line goes on from is this many line heights wide
TURN_SLACK = 0.05  # a character is turned a quarter when its matrix's a is this small beside b
TURN_SPACE = 0.2  # a gap along a turned column wider than this share of its width is a space
MIN_DIRECTION_STEPS = 8  # steps between upright characters needed to tell a page's direction
UPRIGHT_SHARE = 0.3  # ...and the share of the page's characters that must be upright


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


def page_text(layout: LTPage) -> tuple[str, bool]:
    """Text boxes in reading order (figure text after the body), and whether anything is drawn.

    A table (formats/pdf/tables.py) stands where the first text box holding part of it
    stands, as one line per row with a blank line before and after; its lines leave the boxes
    they were in. Labels beside their values (formats/pdf/pairs.py) are read as one line each,
    ``Label: value``, where the label stands."""
    boxes: list[str] = []
    drawn = False
    vertical = layout_vertical(layout)
    tables = [] if vertical else find_tables(layout)
    consumed = {line for table in tables for line in table.consumed}
    placed: set[int] = set()
    pairs = NO_PAIRS if vertical else label_pairs(layout, consumed)

    last_whole: LTTextBox | None = None  # the box just read whole, if any

    def walk(container: Any) -> None:
        nonlocal drawn, last_whole
        turned = _turned_columns(container)
        for item in container:
            above, last_whole = last_whole, None
            if id(item) in turned:
                boxes.append(turned[id(item)])
            elif isinstance(item, LTTextBoxVertical):
                boxes.append(_vertical_text(item))
            elif isinstance(item, LTTextBox):
                if id(item) in pairs.taken:
                    continue
                if id(item) in pairs.lines:
                    boxes.append(pairs.lines[id(item)])
                elif consumed and any(id(line) in consumed for line in item):
                    _split_box(item, tables, placed, boxes)
                elif above is not None and _goes_on_from(above, item):
                    boxes[-1] += "\n" + item.get_text().strip("\n")
                    last_whole = item
                else:
                    boxes.append(item.get_text().strip("\n"))
                    last_whole = item
            elif isinstance(item, LTFigure):
                drawn = True
                walk(item)
            elif isinstance(item, LTImage | LTCurve):
                drawn = True

    walk(layout)
    return "\n\n".join(b for b in boxes if b.strip()), drawn


def _goes_on_from(above: LTTextBox, box: LTTextBox) -> bool:
    """Whether ``box`` goes on with the paragraph of the box read before it. pdfminer puts in
    one box only the lines aligned on a side and less than its line margin (half a line) apart,
    so a paragraph came out a paragraph per run of lines, cut mid-sentence:
    - set with a hanging indent (a definition's second line: "amount: a nonzero amount of Ether
      denominated" / "  in Gwei (10⁹ Wei); formally Wa."), each indented run;
    - set a little looser than half a line (the RISC-V ABI's lines are 0.505 of their height
      apart), each line: "Editors Kito Cheng and Jessica" / "Clarke, RISC-V International,
      November 2022."
    It goes on when its first line starts just below the last line above (within HANG_GAP of
    its height), flush with it or indented by up to HANG_INDENT heights, and that line above
    runs to the right edge of the two without ending a sentence or a clause ("Furthermore:"
    under an equation's "(39)." stays apart). A flush line goes on only from a line of text
    (FLUSH_WIDTH heights wide): a column of equation numbers, "(104)" / "(105)", stays apart."""
    last = next((line for line in reversed(list(above)) if isinstance(line, LTTextLine)), None)
    first = next((line for line in box if isinstance(line, LTTextLine)), None)
    if last is None or first is None:
        return False
    height = min(last.height, first.height)
    gap = last.y0 - first.y1
    indent = first.x0 - last.x0
    hangs = 0.5 * height < indent <= HANG_INDENT * height
    flush = abs(indent) <= 0.5 * height and last.width >= FLUSH_WIDTH * height
    return (
        -HANG_GAP * height < gap <= HANG_GAP * height
        and (hangs or flush)
        and last.x1 >= max(above.x1, box.x1) - height
        and not last.get_text().rstrip().endswith((".", "!", "?", ":", ";"))
    )


def _turned(box: Any) -> list[LTChar] | None:
    """A horizontal box's characters when all of them are turned a quarter (a chart's axis
    title set sideways), else None."""
    if not isinstance(box, LTTextBox) or isinstance(box, LTTextBoxVertical):
        return None
    chars = [c for line in box for c in line if isinstance(c, LTChar)]
    if not chars or any(abs(c.matrix[0]) > TURN_SLACK * abs(c.matrix[1]) for c in chars):
        return None
    return chars


def _turned_columns(container: Any) -> dict[int, str]:
    """Text turned a quarter, read as written: {id of the first box of a column: its text}, and
    the column's other boxes mapped to "" (left out).

    pdfminer reads lines across the page, so a word set sideways (an axis title, 'Average
    speed' going up the side of a chart) came out a letter per line in top-to-bottom order,
    "d e e p s e g a r e v A" once a sentence ran into it, and a gap between its words split it
    into boxes. Boxes whose characters are all turned are gathered into columns (overlapping
    across), and each column is read along its characters: upwards when they are turned left,
    downwards when turned right, with a space where a gap is wider than TURN_SPACE of the
    column's width."""
    columns: list[tuple[list[Any], list[LTChar]]] = []
    for item in container:
        chars = _turned(item)
        if chars is None:
            continue
        up = chars[0].matrix[1] > 0
        for boxes, held in columns:
            across = max(c.x1 for c in held) > item.x0 and min(c.x0 for c in held) < item.x1
            if (held[0].matrix[1] > 0) == up and across:
                boxes.append(item)
                held.extend(chars)
                break
        else:
            columns.append(([item], list(chars)))
    out: dict[int, str] = {}
    for boxes, held in columns:
        up = held[0].matrix[1] > 0
        held.sort(key=lambda c: c.y0 if up else -c.y1)
        width = max(c.x1 - c.x0 for c in held)
        text = ""
        for prev, char in zip([None, *held], held, strict=False):
            if prev is not None:
                gap = char.y0 - prev.y1 if up else prev.y0 - char.y1
                if gap > TURN_SPACE * width and not text.endswith(" "):
                    text += " "
            text += char.get_text()
        out[id(boxes[0])] = " ".join(text.split())
        out.update((id(b), "") for b in boxes[1:])
    return out


def layout_vertical(layout: LTPage) -> bool:
    """Whether pdfminer laid the page out in vertical text boxes (no tables are read there)."""
    return any(isinstance(item, LTTextBoxVertical) for item in layout)


def _split_box(box: LTTextBox, tables: list[Table], placed: set[int], boxes: list[str]) -> None:
    """A box holding table lines: its own lines above, the tables (once each), the rest."""
    above: list[str] = []
    below: list[str] = []
    here: list[Table] = []
    for line in box:
        table = next((t for t in tables if id(line) in t.consumed), None)
        if table is None:
            (below if here else above).append(line.get_text())
        elif id(table) not in placed:
            placed.add(id(table))
            here.append(table)
    boxes.append("".join(above).strip("\n"))
    boxes.extend("\n".join(t.lines) for t in here)
    boxes.append("".join(below).strip("\n"))


def iter_layouts(
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
        except PARSE_ERRORS as exc:
            # One broken content stream should not sink the book; OCR may still read it.
            log.warning("page %d: text layer unreadable (%s)", number, exc)
            yield number, None, device.vertical
