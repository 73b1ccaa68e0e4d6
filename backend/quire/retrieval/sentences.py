"""Sentences, and the rows of tables and code, as units of text: what the search's window
stage and the extractive answers score, and what an answer quotes.

Sentences are split with a regular expression that keeps abbreviations, initials and decimals
together (the texts are a few dozen passages of clean text; a sentence-splitting library would
add a dependency for no measurable gain). A "sentence" made of short lines, of lines laid out
as columns, or of lines that each start as a list item does, is a table, a list or code: each
line is a unit of its own, since a line of a table or list holds one fact. A PDF table's row
is one line, ``Header: value · Header: value`` (formats/pdf/rows.py), and one unit whatever its
cells say: no sentence ends inside it, unless it is longer than ``MAX_CHARS`` (cells of whole
paragraphs): then its sentences are units. A sentence ending in a colon is read with the short
lines after it that have no bullet and end no sentence (a labelled list set out as lines: "the
following default ABIs …:" / "on RV32G" / "ILP32D" / "on RV64G" / "LP64D"): one unit. So is a
line naming a constant and the sentence after it that defines it, as a specification's
definition list sets them out ("EF_RISCV_TSO (0x0010)" / "This bit is set when …"). A line
that starts a field, a name in lower case and a colon ("recipient: the 20-byte address …"),
after a line that ends a sentence, starts a unit of its own.

    split_sentences("Dr. Smith left at 3.5 p.m. He came back.")   # [(0, "Dr. …"), (27, "He …")]
    split_sentences("彼は言った。「本当か？」と聞いた。")  # [(0, "彼は言った。"), (6, "「本当…")]
"""

from __future__ import annotations

import re
from collections.abc import Callable

# A boundary: . ! ? (optionally closing quotes/brackets) then space and an upper-case letter,
# digit or opening quote — but not after common abbreviations or single initials.
_ABBREV = (
    r"(?<!\bMr)(?<!\bMrs)(?<!\bMs)(?<!\bDr)(?<!\bProf)(?<!\bSt)(?<!\bvs)(?<!\betc)(?<!\bal)"
    r"(?<!\bFig)(?<!\bNo)(?<!\bVol)(?<!\bp)(?<!\bpp)(?<!\be\.g)(?<!\bi\.e)(?<!\b[A-Z])"
)
# Abbreviations that stand before a number: "Sep. 21, 2005", "Eq. 3", "Sec. 4.2", "Ch. 7"
# (not a boundary there; "in Sep. The next …" still is).
_BEFORE_NUMBER = (
    r"(?!(?:(?<=\b(?:Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Oct|Nov|Dec|Sec|Tab|Ref|Art|Eqs|Nos))"
    r"|(?<=\b(?:Sept|Sect|Figs|Refs))|(?<=\b(?:Eq|Ch|Nr)))\.\s+\d)"
)
# A line that starts a specification's field, a name in lower case and a colon ("recipient:
# the 20-byte address …"): after a line that ends a sentence, a new unit, though no capital
# starts it (the yellow paper's fields were read two to a unit, "… formally Wv. recipient: …").
# Its alternative below starts with the newline, so that other positions fail on it at once.
_FIELD = r"[a-z][A-Za-z0-9_]{0,30}: "
# The lookahead first: most positions fail on it at once, before the abbreviation checks
# (17 lookbehinds at every position made splitting the slowest step of the window stage).
# Chinese and Japanese end a sentence with 。！？ (no space after), and closing brackets
# stay with it; not before a quoting particle (「本当か？」と言った is one sentence). Arabic
# ends one with . ! ؟ ۔ and a space before the next Arabic letter.
_BOUNDARY = re.compile(
    r"(?=[.!?])" + _ABBREV + _BEFORE_NUMBER + r"[.!?][\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9])|\n\s*\n"
    r"|[。！？]+[」』）】〕”’]*(?![とっ、，」』])\s*"
    r"|[.!؟۔]\s+(?=[\u0600-\u06ff])"
    r"|\n(?<=[.!?]\n)(?=" + _FIELD + ")"
)
MAX_CHARS = 600
#: A list read with the sentence that introduces it: at most this many lines of at most
#: this many characters.
LIST_LINES = 12
LISTED_CHARS = 40
#: A line this long is a line of running text (a heading or a table cell is shorter).
FULL_LINE = 60
#: Lines this short on average are rows (a table, a list, code), each a unit.
SHORT_LINE = 32
#: A line laid out as a table row: cells between bars, separated by runs of spaces/tabs, or
#: by the middle dot of a PDF table's row (formats/pdf/rows.py).
ROWISH = re.compile(r"^\s*\||\|\s*$|\S\s{2,}\S|\t|\S \u00b7 \S")
#: A PDF table's row, as the page text has it: one line of cells joined by " · ".
TABLE_ROW = re.compile(r"^[^\n]*\S \u00b7 \S[^\n]*$", re.M)
#: A line naming a constant of a specification: an identifier with an underscore, perhaps
#: with its value in brackets (``EF_RISCV_TSO (0x0010)``, ``SHT_RISCV_ATTRIBUTES``).
DEFINED_TERM = re.compile(r"[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+(\s*\([^()\n]{1,24}\))?")
#: The characters a list's item starts with, before a space.
BULLETS = "[-•*–▪◦]"
#: A line that starts as an item of a list does: a bullet, "3.", "(b)", "12:", "150 years:".
LIST_ITEM = re.compile(rf"^\s*({BULLETS}\s|\(?\w{{1,3}}[.)]\s|\d+(\s\w+)?:\s)")


def split_sentences(passage: str) -> list[tuple[int, str]]:
    """(offset, unit) pairs: sentences, and the lines of table- or code-like sentences; each
    unit is an exact substring of the passage."""
    out: list[tuple[int, str]] = []
    pos = 0
    # A row is one unit, unless it is longer than a unit may be (a slide's table of
    # paragraphs): then the sentences of its cells are.
    found = TABLE_ROW.finditer(passage) if "\u00b7" in passage else ()
    rows = [m.span() for m in found if m.end() - m.start() <= MAX_CHARS]
    row = 0
    for m in _BOUNDARY.finditer(passage):
        while row < len(rows) and rows[row][1] - 1 <= m.start():
            row += 1
        if row < len(rows) and rows[row][0] <= m.start():
            continue  # inside a table's row, before its last character
        if m.group(0).lstrip(" \t").startswith("\n") and _runs_on(passage, m.start(), m.end()):
            continue
        end = m.start() + len(m.group(0).rstrip())
        _add(out, passage, pos, end)
        pos = m.end()
    _add(out, passage, pos, len(passage))
    if "_" in passage:
        out = _with_terms(out, passage)
    return _with_short_lists(out, passage) if ":" in passage else out


def _with_terms(units: list[tuple[int, str]], passage: str) -> list[tuple[int, str]]:
    """A line that names a constant, alone (``EF_RISCV_TSO (0x0010)``), and the sentence after
    it that says what it is ("This bit is set when …"), as a specification's definition list
    sets them out: one unit, as a person reads them."""

    def extent(i: int) -> int:
        start, unit = units[i]
        if i + 1 < len(units) and DEFINED_TERM.fullmatch(unit):
            after, sentence = units[i + 1]
            gap = passage[start + len(unit) : after]
            says = sentence[:1].isupper() and sentence.endswith((".", "!", "?"))
            if says and not gap.strip() and "\n" in gap and "\n" not in sentence:
                return 2
        return 1

    return _joined(units, passage, extent)


def _with_short_lists(units: list[tuple[int, str]], passage: str) -> list[tuple[int, str]]:
    """A sentence ending in a colon and the short lines after it (no bullets, no sentence
    ends: a labelled list laid out as lines, "default ABIs …:" / "on RV64G" / "LP64D") are read
    together, as one unit, as a person reads them."""

    def extent(i: int) -> int:
        start, unit = units[i]
        j = i + 1
        if unit.endswith(":"):
            while (
                j < len(units)
                and j - i <= LIST_LINES
                and _listed(units[j][1])
                and not passage[units[j - 1][0] + len(units[j - 1][1]) : units[j][0]].strip()
            ):
                j += 1
        end = units[j - 1][0] + len(units[j - 1][1])
        return j - i if j - i > 2 and end - start <= MAX_CHARS else 1

    return _joined(units, passage, extent)


def _joined(
    units: list[tuple[int, str]], passage: str, extent: Callable[[int], int]
) -> list[tuple[int, str]]:
    """``units`` with each run of ``extent(i)`` units from unit ``i`` read as one unit: the
    passage from the first one's start to the last one's end."""
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(units):
        n = extent(i)
        start = units[i][0]
        last, text = units[i + n - 1]
        out.append((start, passage[start : last + len(text)]))
        i += n
    return out


def _listed(unit: str) -> bool:
    return (
        len(unit) <= LISTED_CHARS
        and "\n" not in unit
        and not unit.endswith((".", "!", "?", ":"))
        and not LIST_ITEM.match(unit)
        and not ROWISH.search(unit)
    )


def _runs_on(passage: str, start: int, end: int) -> bool:
    """Whether the sentence goes on across the blank line at [start, end): some layouts set
    every line of a paragraph apart ("The default value is 16 for\n\nRV32I or RV64I."). It
    does when the line before is a full one (not a heading or a table cell) that ends inside
    a sentence (a comma, or a word in lower case: a long heading ends in a capitalised word,
    "… Relating to Technological Development"), and the text after starts as words do."""
    line = passage[passage.rfind("\n", 0, start) + 1 : start].rstrip()
    after = passage[end : end + 1]
    last = line.rsplit(None, 1)[-1] if line else ""
    if not (
        len(line) >= FULL_LINE
        and (last[-1:] in ",;" or (last[-1:].isalnum() and not last[:1].isupper()))
        and not ROWISH.search(line)
        and (after.isalnum() or after in "(\"'“")
    ):
        return False
    # A capitalised word after the blank line starts a sentence, unless the line before
    # stops where no sentence can (a comma, "for", "de"): a heading in sentence case
    # ("Retour sur les revues … quelques articles") ends in a lower-case word too.
    word = passage[end : end + 3].lstrip("\"'“‘(")
    starts = len(word) >= 2 and word[0].isupper() and word[1].islower()
    return not starts or last[-1:] in ",;" or len(last) <= 3


def _add(out: list[tuple[int, str]], passage: str, start: int, end: int) -> None:
    raw = passage[start:end]
    lead = len(raw) - len(raw.lstrip())
    sentence = raw.strip()
    if not sentence:
        return
    if "\n" not in sentence:  # one line: a sentence (the common case, decided at once)
        out.append((start + lead, sentence))
        return
    lines = sentence.split("\n")
    filled = sum(bool(ln.strip()) for ln in lines)
    rows = sum(bool(ROWISH.search(ln)) for ln in lines)
    if (
        rows >= 2
        or any(TABLE_ROW.fullmatch(ln) for ln in lines)
        or (filled >= 2 and all(LIST_ITEM.match(ln) for ln in lines if ln.strip()))
        or (filled > 2 and (len(sentence) > MAX_CHARS or len(sentence) / filled < SHORT_LINE))
    ):
        # Rows of a table or code: each line is a unit of its own.
        offset = start + lead
        for line in lines:
            stripped = line.strip()
            if stripped:
                out.append((offset + line.index(stripped[0]), stripped))
            offset += len(line) + 1
        return
    out.append((start + lead, sentence))
