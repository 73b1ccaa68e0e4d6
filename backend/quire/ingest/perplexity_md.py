"""Perplexity threads exported as markdown, in both layouts of DESIGN §7; one Page per turn.

Built-in "Export → Markdown": a logo ``<img>``, then turns ``# question`` / answer with
``[^T_N]`` footnotes / hidden ``<span style="display:none">`` / ``⁂`` divider / footnote
definitions, separated by ``---``. The question is the ``#`` line and the lines directly under
it (a pasted multi-line prompt after a blank line cannot be told from the answer and stays in
the page text). Inline ``[^T_N]`` become ``[N]`` and ``meta["urls"]`` lists the definitions
in footnote order, so ``[N]`` is ``urls[N-1]``; ``meta["cited"]`` lists the N used inline.

Exporter layout: ``# title``, ``**Space:**`` / ``**ID:**`` / ``**Date:**`` lines (Quire's own
exporter adds ``**URL:**``), then turns ``## query`` / answer separated by ``---``, each
optionally ending in a ``### Sources`` list.

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
from datetime import datetime
from typing import Any

from quire.ingest.detect import is_perplexity_exporter
from quire.ingest.markdown import fenced_lines
from quire.ingest.types import Extracted
from quire.storage.records import Page

HEADING_CHARS = 120
SEARCH_URL = "https://www.perplexity.ai/search/{slug}"

_FOOTNOTE_DEF = re.compile(r"^\[\^(\d+)_(\d+)\]:[ \t]*(.*)$")
_FOOTNOTE_REF = re.compile(r"\[\^\d+_(\d+)\]")
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


def _tidy(text: str) -> str:
    lines = [line.rstrip() for line in text.strip("\n").split("\n")]
    return _MANY_BLANK.sub("\n\n", "\n".join(lines)).strip()


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
            definitions.setdefault(int(m.group(2)), _url_of(m.group(3)))
        elif fenced[k] or not _DIVIDER.match(line):
            body.append(line)
    answer = _HIDDEN_SPAN.sub("", "\n".join(body))
    cited: list[int] = []
    for m in _FOOTNOTE_REF.finditer(answer):
        if int(m.group(1)) not in cited:
            cited.append(int(m.group(1)))
    answer = _FOOTNOTE_REF.sub(r"[\1]", answer)
    urls = [definitions[n] for n in sorted(definitions)]
    return Page(
        number=number,
        text=_tidy(f"{query}\n\n{answer}"),
        heading_path=shorten(query),
        source="markdown",
        meta={"query": query, "urls": urls, "cited": cited},
    )


def _exporter_turn(number: int, block: list[str]) -> Page:
    query = block[0][3:].strip()
    fenced = fenced_lines(block)
    sources_at = None
    for k in range(len(block) - 1, 0, -1):
        if not fenced[k] and _SOURCES.match(block[k]):
            sources_at = k
            break
    urls: list[str] = []
    if sources_at is not None:
        for line in block[sources_at + 1 :]:
            for m in _URL.finditer(line):
                url = m.group(0).rstrip(".,;")
                if url not in urls:
                    urls.append(url)
        block = block[:sources_at]
    answer = "\n".join(block[1:])
    return Page(
        number=number,
        text=_tidy(f"{query}\n\n{answer}"),
        heading_path=shorten(query),
        source="markdown",
        meta={"query": query, "urls": urls},
    )


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
