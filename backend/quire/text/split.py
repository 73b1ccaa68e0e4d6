"""Split text into overlapping passages of about ``size`` characters.

Passages are windows over the page text (so a passage is exactly what the text says). A
window of at most ``size`` characters ends at the best break it contains, in this order:
before a markdown heading (if the chunk so far has at least a quarter of ``size``), at a
paragraph break, a line break, a sentence end, a space (each only if at least half of
``size`` is used, so chunks do not shrink to fragments), else a space anywhere, else a hard
cut (a single token longer than ``size``, or CJK text without spaces). The next window starts
``overlap`` characters earlier, moved forward to a word start, except after a heading break:
a new section starts clean. A remainder of up to 10% over ``size`` stays in the last chunk
rather than becoming a sliver.
"""

from __future__ import annotations

import re

_HEADING = re.compile(r"\n(?=#{1,6} \S)")
_PARAGRAPH = re.compile(r"\n[ \t]*\n")
_LINE = re.compile(r"\n")
_SENTENCE = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s|(?<=[。！？])")
_SPACE = re.compile(r"\s")


def _last_break(pattern: re.Pattern[str], text: str, lo: int, hi: int) -> int | None:
    """The end of the last match of ``pattern`` within text[lo:hi], or None."""
    best = None
    for m in pattern.finditer(text, lo, hi):
        if m.end() > lo:
            best = m.end()
    return best


def _find_end(text: str, start: int, size: int) -> tuple[int, bool]:
    """Where the chunk starting at ``start`` ends, and whether it ends before a heading."""
    hi = start + size
    end = _last_break(_HEADING, text, start + size // 4, hi)
    if end is not None:
        return end, True
    half = start + size // 2
    for pattern in (_PARAGRAPH, _LINE, _SENTENCE, _SPACE):
        end = _last_break(pattern, text, half, hi)
        if end is not None:
            return end, False
    end = _last_break(_SPACE, text, start, hi)
    return (end if end is not None else hi), False


def _overlap_start(text: str, end: int, overlap: int, floor: int) -> int:
    """Start of the next window: ``overlap`` chars back from ``end``, at a word start."""
    if overlap <= 0:
        return end
    pos = max(end - overlap, floor + 1)
    m = _SPACE.search(text, pos, end)
    return m.end() if m else end


def split_text(text: str, size: int = 1500, overlap: int = 100) -> list[str]:
    """Split one page's text into passages of about ``size`` characters."""
    return [piece for _, piece in split_spans(text, size, overlap)]


def split_spans(text: str, size: int = 1500, overlap: int = 100) -> list[tuple[int, str]]:
    """``split_text``'s passages with the offset where each starts in ``text``."""
    if size <= 0:
        raise ValueError("size must be positive")
    overlap = min(overlap, size // 2)
    n = len(text)
    out: list[tuple[int, str]] = []
    start = 0
    while start < n:
        if n - start <= size + size // 10:
            end, heading = n, False
        else:
            end, heading = _find_end(text, start, size)
        piece = text[start:end].strip()
        if piece:
            out.append((start + len(text[start:end]) - len(text[start:end].lstrip()), piece))
        if end >= n:
            break
        start = end if heading else _overlap_start(text, end, overlap, start)
    return out
