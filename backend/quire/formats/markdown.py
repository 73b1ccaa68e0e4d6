"""Plain markdown and text files.

Markdown is split into sections at ATX (``#``–``###``) and setext headings outside fenced code;
the heading path is the stack of open headings, and a section with no text of its own (a
title directly followed by a subheading) yields no page. Text has no structure to follow, so
it is cut into "pages" at paragraph boundaries. In both, a page holds at most about
``PAGE_CHARS`` characters (a long section becomes several pages with the same heading path),
so a citation points at a passage a reader can find. YAML front matter is not content: its
``title`` and ``author`` fields become the document's, and all its fields the document's
``front_matter`` metadata (block lists such as Obsidian's tags joined with commas). Obsidian's
``[[wikilinks]]`` stay in the text as written.
"""

from __future__ import annotations

import re
from typing import Any

from markdown_it import MarkdownIt

from quire.formats.pdf.rows import row_line
from quire.formats.types import Extracted
from quire.storage.records import Page
from quire.text.split import split_text

PAGE_CHARS = 6000
TITLE_CHARS = 200

_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LIST_OR_QUOTE = re.compile(r"^\s*(?:[-*+>]|\d+[.)])\s")
_MAX_LEVEL = 3
_FRONT_MATTER = re.compile(r"\A\ufeff?---[ \t]*\n(.*?\n)(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)


def fenced_lines(lines: list[str]) -> list[bool]:
    """For each line, whether it is inside (or delimits) a fenced code block."""
    out: list[bool] = []
    opener: str | None = None
    for line in lines:
        m = _FENCE.match(line)
        if opener is None:
            opener = m.group(1) if m else None
            out.append(opener is not None)
            continue
        out.append(True)
        # A closing fence is the same character, at least as long, with nothing after it.
        if m and m.group(1)[0] == opener[0] and len(m.group(1)) >= len(opener):
            if not line.strip().strip(opener[0]):
                opener = None
    return out


def _heading(lines: list[str], i: int) -> tuple[int, str, int]:
    """The level and title of the heading at line ``i`` (level 0: none), and how many lines
    it takes (2 for a setext heading). The caller skips fenced lines."""
    line = lines[i]
    atx = _ATX.match(line)
    if atx:
        return len(atx.group(1)), atx.group(2).strip(), 1
    nxt = lines[i + 1] if i + 1 < len(lines) else ""
    if (
        line.strip()
        and _SETEXT.match(nxt)
        and not _LIST_OR_QUOTE.match(line)
        and (i == 0 or not lines[i - 1].strip())
    ):
        return (1 if nxt.strip()[0] == "=" else 2), line.strip(), 2
    return 0, "", 1


def heading_starts(text: str, skip_lines: int = 0) -> list[tuple[int, int, str]]:
    """``(offset, level, title)`` of each heading (levels 1–3, outside fenced code) in
    ``text``, after its first ``skip_lines`` lines; the offset is where the heading's line
    starts."""
    lines = text.split("\n")
    fenced = fenced_lines(lines)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    out: list[tuple[int, int, str]] = []
    i = skip_lines
    while i < len(lines):
        if fenced[i]:
            i += 1
            continue
        level, title, consumed = _heading(lines, i)
        if 1 <= level <= _MAX_LEVEL and title:
            out.append((starts[i], level, title))
        i += consumed
    return out


_TABLES = MarkdownIt("commonmark").enable("table")


def tables_as_rows(text: str) -> str:
    """``text`` with each pipe table (GitHub's, outside code, lists and quotes) written as a
    PDF table is read (formats/pdf/rows.py): one line per row, each value with its column's
    header, ``Issue: Cert fail · Solution: DNS/ports``, so that a quoted row says what its
    values are and search, highlights and answers read the same lines. markdown-it-py (which
    rich already brings) finds the tables, so escaped pipes and fences are read as GitHub
    reads them."""
    if "|" not in text:
        return text
    lines = text.split("\n")
    tables: list[tuple[int, int, list[list[str]]]] = []  # first line, end, rows of cells
    inside = False  # in a table at the top level
    for token in _TABLES.parse(text):
        if token.level == 0:
            inside = token.type == "table_open" and token.map is not None
            if inside and token.map:
                tables.append((token.map[0], token.map[1], []))
        elif inside and token.type == "tr_open":
            tables[-1][2].append([])
        elif inside and token.type == "inline":
            tables[-1][2][-1].append(" ".join(token.content.split()))
    for start, end, (header, *body) in reversed(tables):
        written = [line for cells in body if (line := row_line(cells, header))]
        if written:
            lines[start:end] = written
    return "\n".join(lines)


def _sections(text: str) -> list[tuple[str, str, str]]:
    """(heading path, heading line, body) for each markdown section, in order."""
    lines = text.split("\n")
    fenced = fenced_lines(lines)
    sections: list[tuple[str, str, str]] = []
    stack: list[tuple[int, str]] = []
    heading_line = ""
    body: list[str] = []

    def close() -> None:
        sections.append((" > ".join(t for _, t in stack), heading_line, "\n".join(body)))

    i = 0
    while i < len(lines):
        line = lines[i]
        if fenced[i]:
            body.append(line)
            i += 1
            continue
        level, title, consumed = _heading(lines, i)
        if 1 <= level <= _MAX_LEVEL and title:
            close()
            stack = [(lv, t) for lv, t in stack if lv < level] + [(level, title)]
            heading_line = "#" * level + " " + title
            body = []
        else:
            body.extend(lines[i : i + consumed])
        i += consumed
    close()
    return sections


def split_front_matter(text: str) -> tuple[dict[str, str], str]:
    """Split a leading YAML front-matter block (Obsidian, Jekyll) into flat fields and body."""
    m = _FRONT_MATTER.match(text)
    if not m:
        return {}, text
    fields: dict[str, str] = {}
    last = ""
    for line in m.group(1).split("\n"):
        item = line.strip()
        if last and item.startswith("- "):  # a block list (Obsidian tags, aliases): joined
            value = item[2:].strip().strip("\"'")
            fields[last] = f"{fields[last]}, {value}" if fields[last] else value
            continue
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith((" ", "\t", "-")):
            last = key.strip().lower()
            fields[last] = value.strip().strip("\"'")
    return fields, text[m.end() :]


def first_line_title(text: str) -> str | None:
    """The first line with at least two letters (heading markers removed), as a title."""
    for line in text.split("\n"):
        atx = _ATX.match(line)
        candidate = " ".join((atx.group(2) if atx else line).split())
        if sum(ch.isalpha() for ch in candidate) >= 2:  # not a rule, a number or a blank
            return candidate[:TITLE_CHARS]
    return None


def parse_markdown(text: str) -> Extracted:
    """Heading-aware pages of a markdown document; front matter gives the title if it has one."""
    fields, text = split_front_matter(text)
    pages: list[Page] = []
    for path, heading, body in _sections(text):
        for k, piece in enumerate(split_text(tables_as_rows(body), PAGE_CHARS, 0)):
            # The heading leads the first page of its section so a search for it lands there.
            page_text = f"{heading}\n\n{piece}" if heading and k == 0 else piece
            pages.append(Page(len(pages) + 1, page_text, heading_path=path, source="markdown"))
    title = fields.get("title") or first_line_title(text)
    author = fields.get("author") or None
    metadata: dict[str, Any] = {"front_matter": fields} if fields else {}
    return Extracted(kind="markdown", title=title, author=author, pages=pages, metadata=metadata)


def parse_text(text: str) -> Extracted:
    """Plain text cut into pages of at most about ``PAGE_CHARS`` at paragraph boundaries."""
    pieces = split_text(text, PAGE_CHARS, 0)
    pages = [Page(n, piece, source="text") for n, piece in enumerate(pieces, start=1)]
    return Extracted(kind="text", title=first_line_title(text), author=None, pages=pages)
