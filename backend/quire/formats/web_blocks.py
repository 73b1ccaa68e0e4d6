"""The blocks of a saved web page in document order (formats/web.py): headings, paragraphs,
list items, code blocks and tables, each with the normalised text that is matched against what
readability kept; what a reader never reads (scripts, forms, navigation, hidden elements,
comment and sharing boxes, short paragraphs of links) is skipped as the tree is walked."""

from __future__ import annotations

import re
from dataclasses import dataclass

import lxml.html

from quire.formats.notes import is_note_marker
from quire.formats.pdf.rows import Grid

#: A paragraph this short whose links make this share of its text is a related-links insert.
MAX_LINKS_CHARS = 200
LINK_SHARE = 0.6

_SKIP = {
    "script", "style", "noscript", "template", "head", "nav", "form", "button", "input",
    "select", "textarea", "iframe", "object", "embed", "svg", "math", "canvas", "audio",
    "video", "dialog", "label", "option",
}  # fmt: skip
_BLOCKS = {
    "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details",
    "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "header", "hgroup", "hr",
    "li", "main", "ol", "p", "section", "summary", "td", "th", "tr", "ul", "tbody", "thead",
    "tfoot", "html", "menu",
}  # fmt: skip
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
#: Class or id words of the boxes around an article (whole words of the attribute).
_BOILERPLATE = re.compile(
    r"(?:^|[\s_-])(?:comments?|comment-list|commentlist|cookies?|consent|gdpr|cookiebanner"
    r"|share|sharing|social|related|newsletter|breadcrumbs?|navbar|sidebar|mw-editsection"
    r"|skip-link|visually-hidden|sr-only)(?:$|[\s_-])",
    re.IGNORECASE,
)
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
#: A heading's own link to itself ("#", "¶", "🔗") or Wikipedia's "[edit]".
_ANCHOR_MARK = re.compile(r"\s*(?:[#¶§🔗]|\[\s*(?:edit|modifier|bearbeiten)\s*\])\s*$")
_SPACE = re.compile(r"\s+")


@dataclass
class Item:
    """One block of the page in document order."""

    kind: str  # "heading", "text", "code", "table"
    text: str  # normalised text, what is matched against readability's
    level: int = 0
    shown: str = ""  # the text as stored (a list item's bullet, a code block's lines)
    grid: Grid | None = None
    kept: bool = False


def norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


class Walker:
    """Blocks of a tree in document order (see the module docstring)."""

    def __init__(self) -> None:
        self.items: list[Item] = []
        self.buffer: list[str] = []
        self.bullet = ""

    def flush(self) -> None:
        raw = "".join(self.buffer)
        self.buffer = []
        lines = [norm(line) for line in raw.split("\n")]
        text = "\n".join(line for line in lines if line)
        if text:
            self.items.append(Item("text", norm(text), shown=self.bullet + text))
        self.bullet = ""

    def walk(self, el: lxml.html.HtmlElement) -> None:
        tag = el.tag if isinstance(el.tag, str) else ""
        if tag in _SKIP or _hidden(el):
            return
        if tag in _HEADINGS:
            self.flush()
            title = _ANCHOR_MARK.sub("", norm(_heading_text(el)))
            if title:
                self.items.append(Item("heading", title, level=_HEADINGS[tag]))
            return
        if tag == "pre":
            self.flush()
            code = "\n".join(line.rstrip() for line in _pre_text(el).strip("\n").split("\n"))
            if code.strip():
                self.items.append(Item("code", norm(code), shown=code))
            return
        if tag == "table" and (grid := _grid(el)) is not None:
            self.flush()
            caption = norm(" ".join(c.text_content() for c in el.iterchildren("caption")))
            if caption:  # "Table 6-1. Example symptoms and causes"
                self.items.append(Item("text", caption, shown=caption))
            cells = [c for row in grid for c in row if c]
            self.items.append(Item("table", norm(" ".join(cells)), grid=grid))
            return
        if tag == "p" and _links_only(el):
            return
        if tag == "br":
            self.buffer.append("\n")
        block = tag in _BLOCKS
        if block:
            self.flush()
        if tag == "li":
            parent = el.getparent()
            if parent is not None and parent.tag == "ol":
                self.bullet = f"{[c for c in parent if c.tag == 'li'].index(el) + 1}. "
            else:
                self.bullet = "- "
        if el.text:
            self.buffer.append(el.text)
        for child in el:
            self.walk(child)
            if child.tail:
                self.buffer.append(child.tail)
        if block:
            self.flush()

    def done(self) -> list[Item]:
        self.flush()
        return self.items


def _hidden(el: lxml.html.HtmlElement) -> bool:
    if el.get("hidden") is not None or el.get("aria-hidden") == "true":
        return True
    if _HIDDEN_STYLE.search(el.get("style") or ""):
        return True
    marks = f"{el.get('class') or ''} {el.get('id') or ''} {el.get('role') or ''}"
    return el.tag not in ("body", "html", "main", "article") and bool(_BOILERPLATE.search(marks))


def _pre_text(pre: lxml.html.HtmlElement) -> str:
    """A code block's text, its ``<br>`` as line breaks."""
    parts: list[str] = []

    def add(el: lxml.html.HtmlElement) -> None:
        if el.tag == "br":
            parts.append("\n")
        elif isinstance(el.tag, str) and el.text:
            parts.append(el.text)
        for child in el:
            add(child)
            if child.tail:
                parts.append(child.tail)

    add(pre)
    return "".join(parts)


def _links_only(p: lxml.html.HtmlElement) -> bool:
    """A short paragraph that is mostly links: a "Lire aussi : …" or "Read more" insert."""
    text = norm(p.text_content())
    if not text or len(text) > MAX_LINKS_CHARS:
        return False
    linked = sum(len(norm(a.text_content())) for a in p.iter("a"))
    return linked >= LINK_SHARE * len(text)


def _heading_text(el: lxml.html.HtmlElement) -> str:
    """A heading's text without its edit links, hidden parts and notes' markers
    (formats/notes.py); its inline markup joins without a space, a line break is one (as
    formats/epub.py reads a heading)."""
    parts: list[str] = []

    def add(node: lxml.html.HtmlElement) -> None:
        if node.text:
            parts.append(node.text)
        for child in node:
            if child.tag == "br":
                parts.append(" ")
            elif (
                isinstance(child.tag, str)
                and child.tag not in _SKIP
                and not _hidden(child)
                and not _note_marker(child)
            ):
                add(child)
            if child.tail:
                parts.append(child.tail)

    add(el)
    return "".join(parts)


def _note_marker(el: lxml.html.HtmlElement) -> bool:
    return is_note_marker(
        el.tag,
        el.attrib,
        el.text_content(),
        links=any(a.get("href") is not None for a in el.iter("a")),
        superscript=any(True for _ in el.iter("sup")),
    )


def _grid(table: lxml.html.HtmlElement) -> Grid | None:
    """A data table's cells (a merged cell repeated where it spans); None for a layout table
    (one column or row, nested tables, or long cells), which is read as its blocks."""
    if table.xpath(".//table"):
        return None
    grid: Grid = []
    spans: dict[int, tuple[int, str]] = {}  # column -> (rows left, text) of a rowspan above
    for tr in table.iter("tr"):
        row: list[str | None] = []
        for cell in [c for c in tr if c.tag in ("td", "th")]:
            _spanned(row, spans)
            text = norm(" ".join(cell.itertext()))
            down = _int(cell.get("rowspan"), 1, 500)
            for _ in range(_int(cell.get("colspan"), 1, 50)):
                if down > 1:
                    spans[len(row)] = (down - 1, text)
                row.append(text)
        _spanned(row, spans)
        if any(row):
            grid.append(row)
    width = max((len(r) for r in grid), default=0)
    longest = max((len(c) for r in grid for c in r if c), default=0)
    if len(grid) < 2 or width < 2 or longest > 400:
        return None
    return grid


def _spanned(row: list[str | None], spans: dict[int, tuple[int, str]]) -> None:
    """Fill the next columns of ``row`` that cells of the rows above span down into."""
    while len(row) in spans:
        left, text = spans.pop(len(row))
        if left > 1:
            spans[len(row)] = (left - 1, text)
        row.append(text)


def _int(value: str | None, default: int, most: int) -> int:
    try:
        return max(1, min(int(value or default), most))
    except ValueError:
        return default
