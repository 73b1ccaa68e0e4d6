"""Headings told from the layout, for PDFs without an outline (pdf_structure reads outlines).

A heading is a run of one or two lines set apart from the body by its font: the body size is
the size most characters of the document are set in; a heading run is set at least
``LARGER`` times that size, or in bold (the body not being bold) at about that size. The rule
is conservative, because a passage cited under a wrong heading is worse than one with none:
the run must be short (``MAX_CHARS``, ``MAX_LINES``), read like a title (mostly words, starts
with a capital letter or a section number, does not end like a sentence: ".", ",", ";", ":"),
stand on lines of its own (every character in the run's style), and be followed on its page
by text (a heading at the foot of a page, or a name over an affiliation, is left out). A style
that covers much of the document (``MAX_STYLE_SHARE``), or that repeats on most pages with
the same text (a running head), is no heading style. Text inside figures is never a heading.

Levels follow size: the largest heading style is level 1, the next 2, ...; at one size bold
outranks bold italic. The headings then take the outline's path (OutlineEntry, apply_outline)
so that chunks get "2 Basic Idea" or "TITLE II > Limitation for System Caching".

    finder = HeadingFinder()
    for number, layout in pages: finder.add(number, layout)
    outline = finder.headings()
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from pdfminer.layout import LTAnno, LTChar, LTPage, LTRect, LTTextBox, LTTextLine

from quire.formats.types import OutlineEntry

MAX_CHARS = 120
MAX_LINES = 2
MAX_WORDS = 16
LARGER = 1.12  # a heading set larger than the body is at least this many times its size
BOLD_MIN = 0.9  # a bold heading at body size may be a little smaller (small capitals)
MAX_STYLE_SHARE = 0.05  # a heading style covers at most this share of the characters
MAX_LEVELS = 4
MAX_PER_PAGE = 6  # a style with more runs than this on a page is a table's, not a heading's
JOIN_GAP = 3.0  # lines of one style this many sizes apart on a row are one line
NEXT_MAX = 1.05  # a heading is followed by body text (or another heading), not larger type
_BOLD = re.compile(r"bold|black|heavy|semibold|demi|medi", re.I)
_ITALIC = re.compile(r"italic|oblique", re.I)
_NUMBERED = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[A-Z]\.(?:\d+\.?)*|[IVXLC]+\.|§+\s*\d+[\w.]*)\s+\S")
_SECTION_NUMBER = re.compile(r"(?:\d+|[A-Z])(?:\.\d+)*\.?|[IVXLC]+\.")
_CODE = re.compile(r"[_=<>{}\[\]|\\@#$]")  # an identifier or a formula, not a title
_SENTENCE_END = re.compile(r"[.,;:]$")
_WORD = re.compile(r"[^\W\d_]{2,}")


@dataclass(frozen=True)
class _Style:
    size: float  # rounded to a tenth of a point
    bold: bool
    italic: bool


@dataclass
class _Run:
    """Consecutive lines of one style on a page."""

    page: int
    style: _Style
    lines: list[str]
    top: float
    bottom: float
    followed: bool = False  # text comes after it on the page
    #: The next line's size when it is not bold (a name over an affiliation: larger than body).
    next_size: float = 0.0
    #: The next line is in the same style without joining the run (names side by side).
    next_same: bool = False
    #: The first line's box: (x0, y0, x1, y1).
    box: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)

    @property
    def text(self) -> str:
        out = ""
        for line in self.lines:
            if out.endswith("-") and line[:1].islower():
                out = out[:-1] + line  # a word broken over the two lines
            else:
                out = f"{out} {line}" if out else line
        return " ".join(out.split())


def _line_style(line: LTTextLine) -> tuple[_Style | None, int]:
    """The style every visible character of the line shares (None when they differ), and the
    number of those characters."""
    sizes: Counter[float] = Counter()
    bold = italic = 0
    total = 0
    for char in line:
        if isinstance(char, LTAnno) or not isinstance(char, LTChar):
            continue
        if char.get_text().isspace():
            continue
        total += 1
        sizes[round(char.size, 1)] += 1
        bold += bool(_BOLD.search(char.fontname))
        italic += bool(_ITALIC.search(char.fontname))
    if not total:
        return None, 0
    if bold not in (0, total):
        return None, total  # a bold word inside a sentence
    size, count = sizes.most_common(1)[0]
    if len(sizes) > 1:
        # Small capitals: the capitals larger than the rest; the line counts at its largest.
        text = line.get_text()
        letters = [c for c in text if c.isalpha()]
        if letters and all(c.isupper() for c in letters):
            size = max(sizes)
        elif count < 0.9 * total:
            return None, total
    return _Style(size, bold == total, italic > total / 2), total


class HeadingFinder:
    """Collects a document's candidate runs page by page; ``headings()`` decides at the end."""

    def __init__(self) -> None:
        self.sizes: Counter[float] = Counter()  # characters per size, over the whole document
        self.bold_chars = 0
        self.style_chars: Counter[_Style] = Counter()
        self.runs: list[_Run] = []
        self.heights: dict[int, float] = {}  # each page's height

    def add(self, number: int, layout: LTPage) -> None:
        """Read one page's text lines (the top level only: text inside figures is left out)."""
        self.heights[number] = layout.height
        # Rectangles drawn around a line (table cells, framed notes), and every text line.
        cells: list[tuple[float, float, float, float]] = []
        lines: list[_Line] = []
        page_sizes: Counter[float] = Counter()
        for box in layout:
            if isinstance(box, LTRect) and box.width < 0.9 * layout.width:
                cells.append(box.bbox)
            if not isinstance(box, LTTextBox):
                continue
            for item in box:
                if not isinstance(item, LTTextLine):
                    continue
                style, chars = _line_style(item)
                if not chars:
                    continue
                size = style.size if style is not None else round(_mean_size(item), 1)
                self.sizes[size] += chars
                page_sizes[size] += chars
                if style is not None:
                    self.style_chars[style] += chars
                    self.bold_chars += chars if style.bold else 0
                text = " ".join(item.get_text().split())
                lines.append(_Line(text, style, size, list(item.bbox)))
        mode = max(page_sizes, key=page_sizes.__getitem__) if page_sizes else 0.0
        _join_rows([li for li in lines if li.style and (li.style.bold or li.style.size > mode)])
        page_runs: list[_Run] = []
        current: _Run | None = None
        for line in lines:
            if line.joined:
                continue
            style = line.style
            x0, y0, x1, y1 = line.box
            if current is not None:
                current.followed = True
                current.next_size = 0.0 if style and style.bold else line.size
                current.next_same = style == current.style
                gap = current.bottom - y1
                if (
                    style == current.style
                    and len(current.lines) < MAX_LINES + 1
                    and -1 < gap < current.style.size
                ):
                    current.lines.append(line.text)
                    current.bottom = y0
                    current.followed = False
                    current.next_size = 0.0
                    current.next_same = False
                    continue
            current = None
            if style is not None and len(line.text) <= MAX_CHARS:
                current = _Run(number, style, [line.text], y1, y0, box=(x0, y0, x1, y1))
                page_runs.append(current)
        # Only what stands out from the page's own text is kept (not every short line of a
        # 20,000-page book): bold runs, and runs larger than most of the page.
        for run in page_runs:
            if not (run.style.bold or run.style.size > mode):
                continue
            x0, y0, x1, y1 = run.box
            if any(
                a <= x0 + 1 and x1 <= c + 1 and b <= y0 + 1 and y1 <= d + 1 for a, b, c, d in cells
            ):
                continue  # a table's cell or a framed note
            if any(
                li.style == run.style
                and not li.joined
                and li.box[0] != x0
                and _overlap(li.box, run.box) > 0.5 * (y1 - y0)
                for li in lines
            ):
                continue  # beside another line in its style, apart: a table's header row
            self.runs.append(run)

    def headings(self) -> list[OutlineEntry]:
        """The runs that pass the rule (module docstring), as outline entries in page order."""
        if not self.sizes:
            return []
        total = sum(self.sizes.values())
        body = self.sizes.most_common(1)[0][0]
        body_bold = self.bold_chars > total / 2
        per_page: Counter[tuple[int, _Style]] = Counter()
        pages_of_text: dict[str, set[int]] = {}
        for run in self.runs:
            per_page[run.page, run.style] += 1
            pages_of_text.setdefault(run.text.casefold(), set()).add(run.page)
        page_count = len({run.page for run in self.runs}) or 1
        # A style seen on the first page only is the title page's (title, authors), when the
        # document goes on: those are not sections.
        pages_of_style: dict[_Style, set[int]] = {}
        for run in self.runs:
            pages_of_style.setdefault(run.style, set()).add(run.page)
        title_page = {s for s, p in pages_of_style.items() if p == {1}} if page_count > 1 else set()
        chosen = [
            run
            for run in self.runs
            if self._heading_style(run.style, body, body_bold, total)
            and per_page[run.page, run.style] <= MAX_PER_PAGE
            and run.followed
            and run.next_size <= NEXT_MAX * body
            and not run.next_same
            and run.style not in title_page
            and len(run.lines) <= MAX_LINES
            and _reads_like_a_heading(run.text)
            and (run.style.size >= LARGER * body or _strong_title(run.text))
            and (len(pages_of_text[run.text.casefold()]) <= max(2, page_count // 4))
        ]
        styles = sorted(
            {run.style for run in chosen}, key=lambda s: (-s.size, not s.bold, s.italic)
        )
        level = {style: min(i + 1, MAX_LEVELS) for i, style in enumerate(styles)}
        return [
            OutlineEntry(level[r.style], r.text, r.page, r.top, self.heights.get(r.page))
            for r in chosen
        ]

    def _heading_style(self, style: _Style, body: float, body_bold: bool, total: int) -> bool:
        if self.style_chars[style] > MAX_STYLE_SHARE * total:
            return False
        if style.size >= LARGER * body:
            return True
        return style.bold and not body_bold and style.size >= BOLD_MIN * body


@dataclass
class _Line:
    text: str
    style: _Style | None  # None: its characters differ in size or weight
    size: float
    box: list[float]  # x0, y0, x1, y1
    joined: bool = False  # appended to the line on its left


def _overlap(a: list[float] | tuple[float, ...], b: list[float] | tuple[float, ...]) -> float:
    """How far two boxes overlap vertically."""
    return min(a[3], b[3]) - max(a[1], b[1])


def _join_rows(lines: list[_Line]) -> None:
    """Join a section number to the title beside it in its style ("5.5" and "Implementing
    CAs" in boxes of their own); cells of a table's header row stay apart."""
    for line in sorted(lines, key=lambda li: li.box[0]):
        if line.joined or not _SECTION_NUMBER.fullmatch(line.text):
            continue
        for other in sorted(lines, key=lambda li: li.box[0]):
            if other is line or other.joined or other.style != line.style:
                continue
            gap = other.box[0] - line.box[2]
            height = line.box[3] - line.box[1]
            if 0 <= gap <= JOIN_GAP * line.size and _overlap(line.box, other.box) > 0.5 * height:
                line.text = f"{line.text} {other.text}"
                line.box = [
                    line.box[0],
                    min(line.box[1], other.box[1]),
                    other.box[2],
                    max(line.box[3], other.box[3]),
                ]
                other.joined = True
                break


def _mean_size(line: LTTextLine) -> float:
    sizes = [c.size for c in line if isinstance(c, LTChar) and not c.get_text().isspace()]
    return sum(sizes) / len(sizes) if sizes else 0.0


def _strong_title(text: str) -> bool:
    """What a heading in bold at the body's size must be besides (a bold term opening a
    definition, "ILP32F" or "Tag_RISCV_arch", is not): numbered, or two words or more."""
    return _NUMBERED.match(text) is not None or len(_WORD.findall(text)) >= 2


def _reads_like_a_heading(text: str) -> bool:
    """Short, mostly words, starts like a title or a numbered section, does not end like a
    sentence."""
    if len(text) < 3 or len(text) > MAX_CHARS or _SENTENCE_END.search(text) or _CODE.search(text):
        return False
    numbered = _NUMBERED.match(text) is not None
    tokens = text.split()[1:] if numbered else text.split()
    if len(tokens) > MAX_WORDS:
        return False
    rest = " ".join(tokens)
    letters = sum(c.isalpha() for c in rest)
    if letters < 3 or letters < 0.6 * sum(not c.isspace() for c in rest):
        return False
    words = sum(bool(_WORD.search(t)) for t in tokens)
    if words < 0.6 * len(tokens):
        return False
    return numbered or text[0].isupper()
