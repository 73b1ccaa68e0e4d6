"""Split pages into chunks: a chunk never spans two pages, and is cut where a section starts
part-way down a page (the windows themselves: text/split.py)."""

from __future__ import annotations

import hashlib

from quire.storage.records import Chunk, Page
from quire.text.split import split_spans


def heading_at(page: Page, offset: int) -> str:
    """The heading path in effect at ``offset`` of a page's text: the page's own, unless the
    page says where sections start on it (``meta["headings"]``: ``[offset, path]`` pairs, and
    ``meta["heading_before"]`` for the text above the first; see formats/pdf/structure.py)."""
    starts = page.meta.get("headings")
    if not starts:
        return page.heading_path
    path = str(page.meta.get("heading_before", page.heading_path))
    for start, heading in starts:
        if start <= offset:
            path = str(heading)
    return path


def chunk_pages(pages: list[Page], size: int = 1500, overlap: int = 100) -> list[Chunk]:
    """Chunk every page on its own; empty pages yield nothing; ordinals restart at 0 per page.

    Where the page says a section starts part-way down (``meta["headings"]``), the text is
    cut there first, so that a chunk holds one section and carries its heading path."""
    chunks: list[Chunk] = []
    for page in pages:
        cuts = sorted({int(start) for start, _ in page.meta.get("headings") or () if start > 0})
        bounds = [0, *(c for c in cuts if c < len(page.text)), len(page.text)]
        spans = [
            (lo + offset, piece)
            for lo, hi in zip(bounds, bounds[1:], strict=False)
            for offset, piece in split_spans(page.text[lo:hi], size, overlap)
        ]
        for ordinal, (offset, piece) in enumerate(spans):
            chunks.append(
                Chunk(
                    page=page.number,
                    ordinal=ordinal,
                    heading_path=heading_at(page, offset),
                    text=piece,
                    content_hash=hashlib.sha256(piece.encode("utf-8")).hexdigest(),
                    source=page.source,
                )
            )
    return chunks
