"""The web sources a Perplexity passage cites: its ``[N]`` markers resolved against its turn.

Ingest (formats/perplexity_md.py) leaves two lists in a turn's page metadata: ``sources``, the
turn's numbered web sources (``{"n", "url", "title"}``), and ``cites``, ``[offset, n]`` for
every footnote marker in the page text (found at ingest, so a ``[1]`` inside code is not one).
A chunk is a window of its page's text, so the markers inside it are the ones between its
start and end. Pages stored before ``cites`` existed fall back to the ``[N]`` in the chunk
text, resolved against ``urls`` (``[N]`` is ``urls[N-1]``). A marker with no source is
ignored.

    web_sources(page_meta, page_text, chunk_text)  # [WebSource(n=2, url=..., title=None)]
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

#: A footnote marker as the page text shows it: ``[3]`` (not a link ``[3](url)`` or a
#: definition ``[3]:``).
MARKER = re.compile(r"\[(\d{1,4})\](?![(:])")


@dataclass(frozen=True)
class WebSource:
    """A web page a passage cites: its footnote number in the turn, address and title."""

    n: int
    url: str
    title: str | None


def turn_sources(meta: dict[str, Any]) -> dict[int, WebSource]:
    """A turn's web sources by number (from ``meta["sources"]``, else ``meta["urls"]``)."""
    out: dict[int, WebSource] = {}
    listed = meta.get("sources")
    if isinstance(listed, list):
        for s in listed:
            if isinstance(s, dict) and isinstance(s.get("n"), int) and s.get("url"):
                title = s.get("title")
                out.setdefault(s["n"], WebSource(s["n"], str(s["url"]), title and str(title)))
        return out
    urls = meta.get("urls")
    for n, url in enumerate(urls if isinstance(urls, list) else [], start=1):
        if isinstance(url, str) and url.startswith(("http://", "https://")):
            out[n] = WebSource(n, url, None)
    return out


def cited_numbers(meta: dict[str, Any], page_text: str, chunk_text: str) -> list[int]:
    """The marker numbers inside the chunk, each once, in order of appearance."""
    cites = meta.get("cites")
    start = page_text.find(chunk_text) if chunk_text else -1
    if isinstance(cites, list) and start >= 0:
        end = start + len(chunk_text)
        found = [
            int(c[1])
            for c in cites
            if isinstance(c, list) and len(c) == 2 and start <= int(c[0]) < end
        ]
    else:
        found = [int(m.group(1)) for m in MARKER.finditer(chunk_text)]
    return list(dict.fromkeys(found))


def web_sources(meta: dict[str, Any], page_text: str, chunk_text: str) -> list[WebSource]:
    """The web sources the chunk's markers cite, by number; markers beyond the list are
    dropped."""
    sources = turn_sources(meta)
    if not sources:
        return []
    return [sources[n] for n in sorted(cited_numbers(meta, page_text, chunk_text)) if n in sources]


def describe(source: WebSource) -> str:
    """How the CLI and ``/v1`` list a web source: "[2] Title — https://…" (no title: the URL)."""
    return (
        f"[{source.n}] {source.title} — {source.url}"
        if source.title
        else f"[{source.n}] {source.url}"
    )
