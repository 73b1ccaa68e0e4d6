"""Labels and their values set side by side in two columns of one-line text boxes, as forms and
invoices print them ("Zapłacono … 0,00 PLN", "Do zapłaty … 148,83 PLN"): pdfminer gives each
its own box and reads the labels, then the values, so the page text lost which value is whose.
A person reads them across: each pair becomes one line, ``Label: value``, where the label
stood, which the answers quote as a labelled line and the rendered page highlights by its
label and value (frontend composables/textMatch.ts, ``rowCells``).

A pair is told by its geometry only: two one-line boxes on one baseline, the value to the
label's right, nearer than ``MAX_GAP`` of the page's width, the value holding a digit (an
amount, a date, a number), and at least ``MIN_PAIRS`` such pairs whose labels start at one
left edge (a column of labels), with nothing else on the line after the value, or before the
label nearer than the value is to it (two cells of a wider table's row are no pair). Two
columns of running text never qualify: their boxes are paragraphs, not single short lines.

    pairs = label_pairs(layout)   # {id(label box): "Do zapłaty: 148,83 PLN", ...}, values
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from pdfminer.layout import LTPage, LTTextBox, LTTextBoxVertical

#: A label or value longer than this is a line of text, not a form's field.
MAX_CHARS = 40
#: A page with more one-line boxes than this is a grid or a chart, not a form: not looked at
#: (the search for pairs compares every box with every other).
MAX_BOXES = 400
#: The widest gap between a label and its value, as a share of the page's width.
MAX_GAP = 0.35
#: A column of labels has at least this many pairs.
MIN_PAIRS = 2
#: Edges this close (points) are one edge; baselines this close are one line (share of height).
EDGE = 3.0
BASELINE = 0.5


@dataclass(frozen=True)
class Pairs:
    """The labels' boxes with the line each becomes, and the values' boxes it took in."""

    lines: dict[int, str]
    taken: frozenset[int]


#: No pairs (a page in vertical writing, or none found).
NO_PAIRS = Pairs({}, frozenset())


def label_pairs(layout: LTPage, consumed: Collection[int] = ()) -> Pairs:
    """The label/value pairs among the page's top-level one-line text boxes (not the lines
    of a table, ``consumed``)."""
    boxes = [
        (box, text)
        for box in layout
        if isinstance(box, LTTextBox)
        and not isinstance(box, LTTextBoxVertical)
        and len(inner := list(box)) == 1
        and id(inner[0]) not in consumed
        and 0 < len(text := box.get_text().strip()) <= MAX_CHARS
    ]
    if not 2 * MIN_PAIRS <= len(boxes) <= MAX_BOXES:
        return NO_PAIRS
    texts = [box for box in layout if isinstance(box, LTTextBox)]
    found: list[tuple[LTTextBox, str, LTTextBox, str]] = []
    for label, ltext in boxes:
        height = label.y1 - label.y0
        beside = [
            (value, vtext)
            for value, vtext in boxes
            if value is not label
            and value.x0 > label.x1
            and value.x0 - label.x1 <= MAX_GAP * layout.width
            and abs(value.y0 - label.y0) <= BASELINE * height
        ]
        if not beside:
            continue
        value, vtext = min(beside, key=lambda b: b[0].x0)
        if not any(ch.isdigit() for ch in vtext) or any(ch.isdigit() for ch in ltext):
            continue
        # Two cells of a wider table's row are no pair: nothing else on the line after the
        # value, nor just before the label.
        others = [
            box
            for box in texts
            if box is not label and box is not value and box.y0 - EDGE <= label.y0 <= box.y1
        ]
        if any(
            box.x0 >= value.x1 or label.x0 - (value.x0 - label.x1) <= box.x1 <= label.x0
            for box in others
        ):
            continue
        found.append((label, ltext, value, vtext))
    # Only a column of labels: pairs whose labels share a left edge.
    found.sort(key=lambda pair: pair[0].x0)
    columns: list[list[tuple[LTTextBox, str, LTTextBox, str]]] = []
    for pair in found:
        if columns and pair[0].x0 - columns[-1][0][0].x0 <= EDGE:
            columns[-1].append(pair)
        else:
            columns.append([pair])
    lines: dict[int, str] = {}
    taken: set[int] = set()
    for column in columns:
        if len(column) < MIN_PAIRS:
            continue
        for label, ltext, value, vtext in column:
            if id(value) in taken or id(value) in lines:
                continue
            lines[id(label)] = f"{ltext.rstrip(':').rstrip()}: {vtext}"
            taken.add(id(value))
    return Pairs(lines, frozenset(taken))
