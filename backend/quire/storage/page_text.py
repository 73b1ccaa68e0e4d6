"""A page's text stored once: its chunks hold most of it, the page row keeps the rest.

Chunks are exact windows over their page's text (ingest/chunking.py), so storing the page's
text beside them kept every character twice (at 1M chunks, 1.5 GB of a 6.2 GB library). A
page row instead keeps ``rest``: its characters that no chunk covers (the whitespace between
chunks, a page too short to chunk), in order; ``page_chunks.start`` says where each chunk
begins in the page. ``split`` finds both, ``stitch`` puts the page back together, character
for character.

A chunk whose text is not found in its page (none is, today) gets no start; its characters
then stay in ``rest`` and the page is still whole. Migration 0011 splits existing pages with
these functions, so their format must not change without a migration.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

#: A chunk's place in its page: (start offset in characters, the chunk's text).
Span = tuple[int, str]


def split(text: str, pieces: Sequence[str]) -> tuple[list[int | None], str]:
    """Where each piece (a page's chunks in order) starts in ``text`` (None if it is not
    there), and the characters no found piece covers (what the page row keeps). Each piece is
    looked for after the previous one's start: chunks overlap, never go back."""
    starts: list[int | None] = []
    spans: list[Span] = []
    after = 0
    for piece in pieces:
        at = text.find(piece, after) if piece else -1
        if at < 0:
            starts.append(None)
            continue
        starts.append(at)
        spans.append((at, piece))
        after = at + 1
    return starts, "".join(text[a:b] for a, b in _walk(len(text), spans))


def _walk(length: int, spans: Iterable[Span]) -> list[tuple[int, int]]:
    """The [start, end) runs of a text of ``length`` characters that no span covers."""
    gaps: list[tuple[int, int]] = []
    pos = 0
    for start, piece in sorted(spans):
        if start > pos:
            gaps.append((pos, start))
        pos = max(pos, start + len(piece))
    if pos < length:
        gaps.append((pos, length))
    return gaps


def stitch(rest_text: str, spans: Iterable[Span]) -> str:
    """The page's text from what its row kept and its chunks' spans (``split``'s inverse)."""
    out: list[str] = []
    pos = 0
    used = 0
    for start, piece in sorted(spans):
        if start > pos:
            out.append(rest_text[used : used + start - pos])
            used += start - pos
            pos = start
        end = start + len(piece)
        if end > pos:
            out.append(piece[pos - start :])
            pos = end
    out.append(rest_text[used:])
    return "".join(out)
