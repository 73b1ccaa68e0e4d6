"""A thread's entries → its content hash and its markdown export (DESIGN §7 exporter layout).

    # {title}

    **Space:** {space}··
    **ID:** {slug}··
    **Date:** {ISO date}··
    **URL:** {thread URL}··

    ## {query}

    {answer}

    ### Sources

    1. [{name}]({url})

    ---

    ## {follow-up query}

Every turn gets a ``### Sources`` list, even an empty one: the parser
(quire/ingest/perplexity_md.py) then reads a ``---`` inside an answer as part of the answer. The
``**URL:**`` line is Quire's addition (the seed tool has none); the parser falls back to the
perplexity.ai URL of the ID without it. The same answer often comes twice, under ``ask_text``
and ``ask_text_0_markdown``; it is written once.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NO_SPACE = "Library"  # Perplexity's name for threads outside any Space
NAME_BYTES = 120
_FORBIDDEN = re.compile(r'[\x00-\x1f\x7f<>:"/\\|?*]')
_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10))}
_RESERVED |= {f"lpt{i}" for i in range(10)}


@dataclass(frozen=True)
class Source:
    number: int
    name: str
    url: str


@dataclass(frozen=True)
class Turn:
    query: str
    answer: str
    sources: list[Source]


@dataclass(frozen=True)
class ThreadInfo:
    """What the export header says about a thread (from its list item and its entries)."""

    uuid: str
    slug: str
    title: str
    space: str | None
    date: str | None


def stable_json(value: Any) -> str:
    """JSON with sorted keys and no insignificant whitespace: equal data, equal text."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def entries_hash(entries: list[dict[str, Any]]) -> str:
    """SHA-256 (hex) of the entries' stable JSON."""
    return hashlib.sha256(stable_json(entries).encode()).hexdigest()


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _one_line(value: str) -> str:
    return " ".join(value.split())


def thread_info(item: dict[str, Any], entries: list[dict[str, Any]]) -> ThreadInfo:
    """Header fields: the list item first, the entries where the item is silent."""
    first = entries[0] if entries else {}
    last = entries[-1] if entries else {}
    collection = item.get("collection") or {}
    info = first.get("collection_info") or {}
    title = (
        _text(item.get("title"))
        or _text(first.get("thread_title"))
        or _text(item.get("query_str"))
        or _text(first.get("query_str"))
        or "Untitled"
    )
    space = _text(collection.get("title") if isinstance(collection, dict) else None) or _text(
        info.get("title") if isinstance(info, dict) else None
    )
    date = _text(item.get("last_query_datetime")) or _text(last.get("updated_datetime"))
    slug = _text(item.get("slug")) or _text(first.get("thread_url_slug"))
    return ThreadInfo(_text(item.get("uuid")), slug, _one_line(title), space or None, date or None)


def answer_of(entry: dict[str, Any]) -> str:
    """The entry's answer: its ``ask_text*`` markdown blocks, each distinct text once (a block
    that is the start of another, a partial stream, gives way to the longer one)."""
    answers: list[str] = []
    for block in entry.get("blocks") or []:
        if not isinstance(block, dict):
            continue
        usage = str(block.get("intended_usage") or "")
        md = block.get("markdown_block")
        if not usage.startswith("ask_text") or not isinstance(md, dict):
            continue
        text = _text(md.get("answer"))
        if not text and isinstance(md.get("chunks"), list):
            text = "".join(c for c in md["chunks"] if isinstance(c, str)).strip()
        if not text:
            continue
        if any(a.startswith(text) for a in answers):
            continue
        answers = [a for a in answers if not text.startswith(a)]
        answers.append(text)
    return "\n\n".join(answers)


def sources_of(entry: dict[str, Any]) -> list[Source]:
    """Cited web results of the entry's ``sources_answer_mode`` blocks, in citation order."""
    out: list[Source] = []
    seen: set[str] = set()
    for block in entry.get("blocks") or []:
        if not isinstance(block, dict) or block.get("intended_usage") != "sources_answer_mode":
            continue
        mode = block.get("sources_mode_block")
        rows = mode.get("rows") if isinstance(mode, dict) else None
        for row in rows if isinstance(rows, list) else []:
            if not isinstance(row, dict):
                continue
            web: dict[str, Any] = (
                row["web_result"] if isinstance(row.get("web_result"), dict) else row
            )
            url = _text(web.get("url"))
            if not url.startswith(("http://", "https://")) or url in seen:
                continue
            seen.add(url)
            citation = row.get("citation")
            number = citation if isinstance(citation, int) and citation > 0 else len(out) + 1
            out.append(Source(number, _one_line(_text(web.get("name"))) or url, url))
    return sorted(out, key=lambda s: s.number)


def turns_of(entries: list[dict[str, Any]], title: str) -> list[Turn]:
    """One turn per entry; a missing first query falls back to the title, later ones to
    "Follow-up" (the seed tool's rule)."""
    out = []
    for n, entry in enumerate(entries):
        query = _one_line(_text(entry.get("query_str"))) or (title if n == 0 else "Follow-up")
        out.append(Turn(query, answer_of(entry), sources_of(entry)))
    return out


def _link(source: Source) -> str:
    name = source.name.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    url = source.url.replace(" ", "%20").replace("<", "%3C").replace(">", "%3E")
    return f"{source.number}. [{name}]({url})"


def render_markdown(info: ThreadInfo, entries: list[dict[str, Any]], url: str) -> str:
    """The export of one thread (see the module docstring)."""
    header = [
        f"# {info.title}",
        "",
        f"**Space:** {info.space or ''}  ",
        f"**ID:** {info.slug}  ",
        f"**Date:** {info.date or ''}  ",
        f"**URL:** {url}  ",
    ]
    turns = turns_of(entries, info.title) or [Turn(info.title, "", [])]
    parts = []
    for turn in turns:
        sources = "\n".join(_link(s) for s in turn.sources) or "_None._"
        answer = turn.answer or "_No answer._"
        parts.append(f"## {turn.query}\n\n{answer}\n\n### Sources\n\n{sources}")
    return "\n".join(header) + "\n\n" + "\n\n---\n\n".join(parts) + "\n"


def safe_name(name: str, max_bytes: int = NAME_BYTES) -> str:
    """A file or folder name: no path separators, reserved or control characters, at most
    ``max_bytes`` of UTF-8, never empty, never hidden."""
    name = unicodedata.normalize("NFC", name)
    name = _FORBIDDEN.sub(" ", name)
    name = " ".join(name.split()).strip(" .")
    data = name.encode()
    if len(data) > max_bytes:
        name = data[:max_bytes].decode(errors="ignore").rstrip(" .")
    if name.split(".")[0].lower() in _RESERVED:
        name = f"_{name}"
    return name or "Untitled"


def export_relpath(info: ThreadInfo) -> Path:
    """``exports/<space>/<title> (<slug>).md``, relative to the Perplexity folder."""
    stem = f"{safe_name(info.title)} ({safe_name(info.slug, 100)})"
    return Path("exports") / safe_name(info.space or NO_SPACE) / f"{stem}.md"


def raw_relpath(info: ThreadInfo) -> Path:
    """``raw/<slug>.json``: stable across renames, so a renamed thread overwrites its JSON."""
    return Path("raw") / f"{safe_name(info.slug, 200)}.json"
