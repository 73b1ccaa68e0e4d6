"""The window stage: each fused candidate scored by its best window of a few consecutive
sentences, as the share of the query's (idf-weighted) terms found there. A page that holds
the question's words close together, in one or two sentences, beats a long passage that has
them scattered — what BM25 over 1,500-character chunks cannot see. The ranking joins the legs'
in the fusion (weight ``QUIRE_WEIGHT_WINDOW``).

Measured on the page-QA sets (bench/pageqa.py): windows of three sentences at weight 0.5 raised
page hit@1 on the development set and on the held-out set; see docs/design/retrieval.md.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sqlalchemy import Connection

from quire.retrieval import lexical
from quire.retrieval.highlight import lowered, stem
from quire.retrieval.lexical import LexicalLeg
from quire.retrieval.sentences import split_sentences
from quire.text.segment import has_unspaced

#: A term in more chunks than this share is counted by a bounded query (it weighs ~nothing).
_COUNT_CAP = 0.5


def idf_weights(conn: Connection, terms: Sequence[str], leg: LexicalLeg) -> dict[str, float]:
    """``log(1 + N / (1 + df))`` of each term over the whole index: from the BM25 leg's term
    cache when it keeps one (free: the leg has just scored these terms), else counted."""
    return leg.idf_weights(conn, terms, lexical.HEADING_WEIGHT, _COUNT_CAP)


@dataclass(frozen=True)
class Window:
    """A passage's best window: its share of the query's weight, and where in the text its
    first query-term match starts and its last ends (the passage's focus)."""

    score: float
    start: int
    end: int


def best_windows(
    terms: Sequence[str],
    idf: Mapping[str, float],
    texts: Mapping[int, str],
    order: Sequence[int],
    *,
    size: int = 3,
) -> dict[int, Window]:
    """The best window of ``size`` consecutive sentences of each chunk in ``order``, trimmed
    to the sentences holding its matches; chunks with no query term anywhere are left out."""
    if not terms:
        return {}
    # One scan of each passage: an alternation of the terms' stems (as the highlighter cuts
    # them; longest first), and each matched word credited to every term it starts with.
    # Short terms and words of unspaced scripts are matched anywhere, as the highlighter does.
    # The word stems share one lookbehind (a lookbehind per alternative made the scan ~6x
    # slower); they are all longer than the short Latin terms, so longest first still holds.
    # A short Latin term ("g" and "5" of "1201(g)(5)") is a word of its own: matched inside
    # words, it found "g" and "5" on every page that mentions section 1201.
    unspaced = [has_unspaced(t) for t in terms]
    short = [len(t) < 3 or unspaced[i] for i, t in enumerate(terms)]
    stems = [t.lower() if short[i] else stem(t.lower()) for i, t in enumerate(terms)]
    words = sorted((s for i, s in enumerate(stems) if not short[i]), key=len, reverse=True)
    whole = sorted((s for i, s in enumerate(stems) if short[i] and not unspaced[i]), key=len)
    anywhere = sorted((s for i, s in enumerate(stems) if unspaced[i]), key=len, reverse=True)
    branches = [r"(?<!\w)(?:" + "|".join(map(re.escape, words)) + r")\w*"] if words else []
    branches += [r"(?<!\w)" + re.escape(s) + r"(?!\w)" for s in reversed(whole)]
    # Case-sensitive over the lower-cased passage, as the highlighter does (faster).
    pattern = re.compile("|".join(branches + [re.escape(s) for s in anywhere]))
    weights = [idf[t] for t in terms]
    total = sum(weights) or 1.0
    value: dict[int, float] = {}  # a set of terms (as bits) -> its share of the query's weight
    bits: dict[str, int] = {}  # a matched word -> the terms it stands for

    def share(mask: int) -> float:
        if mask not in value:
            value[mask] = sum(w for t, w in enumerate(weights) if mask >> t & 1) / total
        return value[mask]

    def terms_of(word: str) -> int:
        if word not in bits:
            low = word.lower()
            bits[word] = sum(
                1 << t
                for t, stem in enumerate(stems)
                if (
                    (stem in low)
                    if unspaced[t]
                    else (low == stem)
                    if short[t]
                    else low.startswith(stem)
                )
            )
        return bits[word]

    out: dict[int, Window] = {}
    for cid in order:
        passage = texts.get(cid, "")
        units = split_sentences(passage) or [(0, passage)]
        starts = [start for start, _ in units]
        found = [0] * len(starts)  # the terms in each sentence, as bits
        spans: list[tuple[int, int] | None] = [None] * len(starts)  # first, last match
        for m in pattern.finditer(lowered(passage)):
            i = max(bisect.bisect_right(starts, m.start()) - 1, 0)
            found[i] |= terms_of(m.group(0))
            spans[i] = (spans[i] or m.span())[0], m.end()
        # The best window, as the sentences from its first match to its last: of equal
        # shares the one spanning the fewest sentences, then the earliest.
        best, first, last = 0.0, 0, 0
        for i in range(len(found)):
            if not found[i]:
                continue  # a window starting on a sentence without terms is no tighter
            mask, end = 0, i
            for j in range(i, min(i + size, len(found))):
                if found[j]:
                    mask, end = mask | found[j], j
            score = share(mask)
            if score > best or (score == best and end - i < last - first):
                best, first, last = score, i, end
        if best > 0:
            opening, closing = spans[first], spans[last]
            assert opening is not None and closing is not None  # both sentences have terms
            out[cid] = Window(best, opening[0], closing[1])
    return out


def window_ranking(
    terms: Sequence[str],
    idf: Mapping[str, float],
    texts: Mapping[int, str],
    order: Sequence[int],
    *,
    size: int = 3,
) -> list[tuple[int, float]]:
    """(chunk id, best window score) of the chunks in ``order``, best first (ties keep
    ``order``); chunks with no query term anywhere are left out."""
    return ranking(best_windows(terms, idf, texts, order, size=size), order)


def ranking(found: Mapping[int, Window], order: Sequence[int]) -> list[tuple[int, float]]:
    """(chunk id, window score) best first; ties keep ``order``."""
    rank = {cid: r for r, cid in enumerate(order)}
    ordered = sorted(found.items(), key=lambda x: (-x[1].score, rank.get(x[0], len(rank))))
    return [(cid, w.score) for cid, w in ordered]


def passage_span(text: str, focus: tuple[int, int] | None, max_chars: int) -> tuple[int, int]:
    """The part of a chunk worth reading (by a cross-encoder, or the LLM's map step): the
    sentences holding ``focus`` (a best window's matches), widened by whole neighbouring
    sentences (after, then before, in turn) up to ``max_chars``; without a focus, the chunk's
    opening sentences. Sentences too long to read whole are cut around the focus at spaces."""
    if max_chars <= 0 or len(text) <= max_chars:
        return 0, len(text)
    units = [(start, start + len(unit)) for start, unit in split_sentences(text)]
    if not units:
        return 0, min(len(text), max_chars)
    lo_at, hi_at = focus if focus else units[0]
    first = next((i for i, (_, b) in enumerate(units) if b > lo_at), 0)
    last = max((i for i, (a, _) in enumerate(units) if a < hi_at), default=first)
    lo, hi = units[first][0], units[last][1]
    if hi - lo > max_chars:
        middle = (lo_at + hi_at) // 2 if focus else lo
        lo = max(lo, min(middle - max_chars // 2, hi - max_chars))
        space = text.rfind(" ", units[first][0], lo + 1)
        lo = space + 1 if space >= 0 and lo - space < 40 else lo
        end = min(hi, lo + max_chars)
        space = text.rfind(" ", lo, end + 1)
        return lo, (space if end < hi and space > lo + max_chars // 2 else end)
    before, after = first - 1, last + 1
    while before >= 0 or after < len(units):
        grew = False
        if after < len(units) and units[after][1] - lo <= max_chars:
            hi, after, grew = units[after][1], after + 1, True
        else:
            after = len(units)
        if before >= 0 and hi - units[before][0] <= max_chars:
            lo, before, grew = units[before][0], before - 1, True
        else:
            before = -1
        if not grew:
            break
    return lo, hi
