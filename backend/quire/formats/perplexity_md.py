"""Perplexity threads exported as markdown, in both layouts of DESIGN §7; one Page per turn.

Built-in "Export → Markdown": a logo ``<img>``, then turns ``# question`` / answer with
``[^T_N]`` footnotes / hidden ``<span style="display:none">`` / ``⁂`` divider / footnote
definitions, separated by ``---``. The question is the ``#`` line and the lines directly under
it (a pasted multi-line prompt after a blank line cannot be told from the answer and stays in
the page text). Inline ``[^T_N]`` (``[^N]`` in a one-turn export) become ``[N]`` and
``meta["urls"]`` lists the definitions in footnote order; ``meta["cited"]`` lists the N used
inline.

Exporter layout: ``# title``, ``**Space:**`` / ``**ID:**`` / ``**Date:**`` lines (Quire's own
exporter adds ``**URL:**``), then turns ``## query`` / answer separated by ``---``, each
optionally ending in a ``### Sources`` list (``N. [title](url)``, or bare URLs numbered by
position). The answer's own ``[N]`` markers cite them.

Citations, for both layouts: ``meta["sources"]`` lists the turn's web sources as ``{"n", "url",
"title"}`` (title when the export has one; a definition without a URL is no web source), and
``meta["cites"]`` gives ``[offset, n]`` for every marker in the page text, outside code, so a
chunk's web sources are the markers inside it (storage/web_sources.py).

Sections: ``#``–``###`` headings inside an answer (outside code; the question's own line is
not one) start sections whose heading path is "question > heading > subheading";
``meta["headings"]`` gives ``[offset, path]`` of each, the mechanism PDF outlines use
(ingest/chunking.py cuts chunks there). Bold-only lines ("**Key metrics**:") are not
headings: answers use them as lead-ins to a list or a table, and a section per lead-in would
cut passages into fragments.

Turn splitting, for both layouts (answers contain ``##`` and ``---`` of their own): a new turn
starts only at a separator at the top level, that is a line that is exactly ``---``, outside
fenced code, not indented (so not inside a list or quote), after a blank line (so not a setext
underline), followed by blank lines and then the turn heading (``# `` built-in, ``## ``
exporter). If the file carries ``### Sources`` lists (Quire's own exporter), the list closes a
turn: a separator before the current turn's ``### Sources`` belongs to the answer. An answer
with a top-level ``---`` directly followed by a ``## `` heading is indistinguishable from a new
turn in the seed layout without Sources lists; there it is read as a new turn.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime
from typing import Any

from quire.formats.detect import is_perplexity_exporter
from quire.formats.markdown import fenced_lines, heading_starts, tables_as_rows
from quire.formats.types import Extracted
from quire.storage.records import Page
from quire.storage.web_sources import MARKER

HEADING_CHARS = 120
SEARCH_URL = "https://www.perplexity.ai/search/{slug}"

_FOOTNOTE_DEF = re.compile(r"^\[\^(?:\d+_)?(\d+)\]:[ \t]*(.*)$")
_FOOTNOTE_REF = re.compile(r"\[\^(?:\d+_)?(\d+)\]")
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_LINK_TITLE = re.compile(r"\[((?:\\.|[^\]\\])*)\]\(")
_ITEM_NUMBER = re.compile(r"^\s*(\d+)[.)]\s")
_ESCAPED = re.compile(r"\\([^\w\s])")
PATH_SEPARATOR = " > "
_HIDDEN_SPAN = re.compile(r"<span\b[^>]*display:\s*none[^>]*>.*?</span>", re.DOTALL | re.I)
_DIVIDER = re.compile(r"^\s*(?:<div\b[^>]*>\s*⁂\s*</div>|⁂)\s*$")
_LOGO = re.compile(r"^\s*<img\b[^>]*>\s*$", re.I)
_FIELD = re.compile(r"^\*\*([A-Za-z ]+):\*\*[ \t]*(.*?)[ \t]*$")
_SOURCES = re.compile(r"^###[ \t]+Sources[ \t]*:?[ \t]*$", re.I)
_URL = re.compile(r"https?://[^\s<>()\[\]]+(?:\([^\s<>()]*\)[^\s<>()\[\]]*)*")
_MANY_BLANK = re.compile(r"\n{3,}")


def _turn_starts(lines: list[str], marker: str, use_sources: bool) -> list[int]:
    """Indices of the heading lines that open turns (see the module docstring)."""
    fenced = fenced_lines(lines)
    starts: list[int] = []
    has_sources = False
    for i, line in enumerate(lines):
        if fenced[i]:
            continue
        if not starts:
            if line.startswith(marker):
                starts.append(i)
            continue
        if _SOURCES.match(line):
            has_sources = True
        if line.rstrip() != "---" or (i > 0 and lines[i - 1].strip()):
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        if j < len(lines) and lines[j].startswith(marker) and not fenced[j]:
            if use_sources and not has_sources:
                continue
            starts.append(j)
            has_sources = False
    return starts


def _blocks(lines: list[str], starts: list[int]) -> list[list[str]]:
    out = []
    for k, start in enumerate(starts):
        block = lines[start : starts[k + 1] if k + 1 < len(starts) else len(lines)]
        while block and not block[-1].strip():
            block.pop()
        if block and block[-1].rstrip() == "---":
            block.pop()  # the separator before the next turn
        out.append(block)
    return out


def shorten(text: str, limit: int = HEADING_CHARS) -> str:
    """One line of at most ``limit`` characters, cut at a word boundary with an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if text[limit - 1] != " " and " " in cut[limit // 2 :]:
        cut = cut[: cut.rindex(" ")]  # do not end on half a word
    return cut.rstrip(" ,;:") + "…"


def _url_of(value: str) -> str:
    m = _URL.search(value)
    return m.group(0).rstrip(".,;") if m else value.strip()


def _source(n: int, value: str) -> dict[str, Any] | None:
    """``{"n", "url", "title"}`` of a footnote definition or a Sources list item, or None
    when it holds no URL."""
    m = _URL.search(value)
    if not m:
        return None
    url = m.group(0).rstrip(".,;")
    link = _LINK_TITLE.search(value)
    if link:
        title = re.sub(r"\\(.)", r"\1", link.group(1))
    else:
        title = value[: m.start()] + value[m.end() :]
        title = re.sub(r"^\s*(?:\d+[.)]|[-*+])\s+", "", title).strip(" \t<>-–—:")
    title = " ".join(title.split())
    return {"n": n, "url": url, "title": title if title and title != url else None}


def _tidy(text: str) -> str:
    lines = [line.rstrip() for line in text.strip("\n").split("\n")]
    return _MANY_BLANK.sub("\n\n", "\n".join(lines)).strip()


def _find_markers(text: str) -> list[list[int]]:
    """``[offset, N]`` of every ``[N]`` outside fenced and inline code."""
    lines = text.split("\n")
    fenced = fenced_lines(lines)
    cites: list[list[int]] = []
    offset = 0
    for line, code in zip(lines, fenced, strict=True):
        if not code:
            masked = _INLINE_CODE.sub(lambda m: " " * len(m.group(0)), line)
            cites.extend([offset + m.start(), int(m.group(1))] for m in MARKER.finditer(masked))
        offset += len(line) + 1
    return cites


def _sections(text: str, query: str, query_lines: int) -> list[list[Any]]:
    """``[offset, "question > heading > subheading"]`` of each heading in the answer."""
    stack: list[tuple[int, str]] = []
    out: list[list[Any]] = []
    for offset, level, title in heading_starts(text, skip_lines=query_lines):
        title = shorten(_ESCAPED.sub(r"\1", MARKER.sub("", title)).strip("*_ "))
        if not title:
            continue
        stack = [(lv, t) for lv, t in stack if lv < level] + [(level, title)]
        path = PATH_SEPARATOR.join([shorten(query), *(t for _, t in stack)])
        if out and "\n" not in text[out[-1][0] : offset].strip():
            out[-1][1] = path  # a heading with no text of its own opens its first subsection
        else:
            out.append([offset, path])
    return out


def with_structure(page: Page) -> Page:
    """The turn with its pipe tables read as rows (``tables_as_rows``), and its sections and
    footnote markers found in its text as it now stands (extract_file calls it again after
    cleaning, which moves offsets). Perplexity, ChatGPT and Claude turns all come here."""
    page = replace(page, text=tables_as_rows(page.text))
    query = str(page.meta.get("query", ""))
    meta = {**page.meta, "cites": _find_markers(page.text)}
    meta.pop("headings", None)
    sections = _sections(page.text, query, len(query.split("\n")))
    if sections:
        meta["headings"] = sections
    return replace(page, meta=meta)


def _turn_page(number: int, query: str, text: str, meta: dict[str, Any]) -> Page:
    page = Page(number, text, shorten(query), "markdown", {"query": query, **meta})
    return with_structure(page)


def _builtin_turn(number: int, block: list[str]) -> Page:
    query_lines = [block[0][2:].strip()]
    i = 1
    while i < len(block) and block[i].strip():
        query_lines.append(block[i].strip())
        i += 1
    query = "\n".join(query_lines)
    fenced = fenced_lines(block)
    definitions: dict[int, str] = {}
    body: list[str] = []
    for k in range(i, len(block)):
        line = block[k]
        m = None if fenced[k] else _FOOTNOTE_DEF.match(line)
        if m:
            definitions.setdefault(int(m.group(1)), m.group(2))
        elif fenced[k] or not _DIVIDER.match(line):
            body.append(line)
    answer = _HIDDEN_SPAN.sub("", "\n".join(body))
    cited: list[int] = []
    for m in _FOOTNOTE_REF.finditer(answer):
        if int(m.group(1)) not in cited:
            cited.append(int(m.group(1)))
    answer = _FOOTNOTE_REF.sub(r"[\1]", answer)
    text = _tidy(f"{query}\n\n{answer}")
    numbers = sorted(definitions)
    sources = [s for n in numbers if (s := _source(n, definitions[n])) is not None]
    urls = [_url_of(definitions[n]) for n in numbers]
    return _turn_page(number, query, text, {"urls": urls, "cited": cited, "sources": sources})


def _exporter_turn(number: int, block: list[str]) -> Page:
    query = block[0][3:].strip()
    fenced = fenced_lines(block)
    sources_at = None
    for k in range(len(block) - 1, 0, -1):
        if not fenced[k] and _SOURCES.match(block[k]):
            sources_at = k
            break
    urls: list[str] = []
    sources: list[dict[str, Any]] = []
    if sources_at is not None:
        for line in block[sources_at + 1 :]:
            for m in _URL.finditer(line):
                url = m.group(0).rstrip(".,;")
                if url not in urls:
                    urls.append(url)
            numbered = _ITEM_NUMBER.match(line)
            item = _source(int(numbered.group(1)) if numbered else len(sources) + 1, line)
            if item is not None and all(s["n"] != item["n"] for s in sources):
                sources.append(item)
        block = block[:sources_at]
    text = _tidy(f"{query}\n\n" + "\n".join(block[1:]))
    meta = {"urls": urls, "sources": sources}
    return _turn_page(number, query, text, meta)


def _parse_date(value: str | None) -> str | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value).isoformat()
    except ValueError:
        return value


def _parse_builtin(lines: list[str]) -> Extracted:
    lines = [line for line in lines if not _LOGO.match(line)]
    starts = _turn_starts(lines, "# ", use_sources=False)
    pages = [_builtin_turn(n, b) for n, b in enumerate(_blocks(lines, starts), start=1)]
    title = shorten(pages[0].meta["query"], 200) if pages else None
    metadata: dict[str, Any] = {
        "title": title, "space": None, "slug": None, "date": None, "url": None,
        "layout": "builtin",
    }  # fmt: skip
    return Extracted(kind="perplexity", title=title, author=None, pages=pages, metadata=metadata)


def _parse_exporter(lines: list[str]) -> Extracted:
    fields: dict[str, str] = {}
    title: str | None = None
    fenced = fenced_lines(lines)
    first_turn = len(lines)
    for i, line in enumerate(lines):
        if title is None and line.startswith("# "):
            title = line[2:].strip()
        elif line.startswith("## ") and not fenced[i]:
            first_turn = i
            break
        elif m := _FIELD.match(line):
            fields[m.group(1).strip().lower()] = m.group(2)
    body = lines[first_turn:]
    use_sources = any(_SOURCES.match(line) for line in body)
    starts = _turn_starts(body, "## ", use_sources=use_sources)
    pages = [_exporter_turn(n, b) for n, b in enumerate(_blocks(body, starts), start=1)]
    slug = fields.get("id") or None
    # Quire's exporter writes the thread's URL (its Perplexity base URL is configurable).
    url = _URL.match(fields.get("url") or "")
    metadata: dict[str, Any] = {
        "title": title,
        "space": fields.get("space") or None,
        "slug": slug,
        "date": _parse_date(fields.get("date")),
        "url": url.group(0) if url else SEARCH_URL.format(slug=slug) if slug else None,
        "layout": "exporter",
    }
    return Extracted(kind="perplexity", title=title, author=None, pages=pages, metadata=metadata)


def parse_perplexity_markdown(text: str) -> Extracted:
    """Parse a Perplexity thread export (either layout) into one Page per turn."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if is_perplexity_exporter(text):
        return _parse_exporter(lines)
    return _parse_builtin(lines)
