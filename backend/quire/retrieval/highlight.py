"""Highlights: the spans of a passage that match the query, for people to see why it was found.

patterns = highlight_patterns(["safe harbor rules"], ["§ 512"])
spans = highlight(passage, patterns)          # [(start, end), ...], merged, in order
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from quire.retrieval import lexical
from quire.text.segment import has_unspaced
from quire.text.spelling import spellings


def stem(term: str) -> str:
    """A word cut to the prefix that highlights match (a crude stand-in for the porter
    stemmer): "retrieval" -> "retri", "models" -> "model"; a name with an underscore is not
    cut ("r_riscv_call_plt" is not "r_riscv_call")."""
    if "_" in term:
        return term
    if len(term) > 5:
        return term[: max(4, len(term) - 3)]
    return term[:-1] if len(term) == 5 and term.endswith("s") and term[-2] not in "su" else term


def lowered(passage: str) -> str:
    """The passage in lower case, offset for offset (the few characters that lower-case to two
    are kept as they are)."""
    low = passage.lower()
    if len(low) != len(passage):
        low = "".join(c.lower() if len(c.lower()) == 1 else c for c in passage)
    return low


#: Where a word starts: after a non-word character, or inside a word written in camel case
#: ("addTextToElement"), or after a capital glued to it (a PDF's subscript: "FShanghai").
_WORD_START = r"(?<!\w)"
_INNER_START = r"(?:(?<!\w)|(?<=(?-i:[A-Z]))(?=(?-i:[A-Z][a-z]))|(?<=(?-i:[a-z]))(?=(?-i:[A-Z])))"


def highlight_patterns(
    queries: Sequence[str], keywords: Sequence[str], *, inner: bool = False
) -> list[re.Pattern[str]]:
    """Case-insensitive word-prefix patterns for the query terms (a crude stand-in for the
    porter stemmer) and literal patterns for hard keywords, written in lower case. With
    ``inner``, a term also matches where a word written in camel case has it (on text not
    lower-cased)."""
    pats: list[re.Pattern[str]] = []
    seen: set[str] = set()
    stems: list[str] = []
    grams: list[str] = []  # bigrams of unspaced scripts: matched wherever they are
    for q in queries:
        for term in lexical.terms(q):
            if has_unspaced(term):
                if len(term) > 1 and term not in seen:  # a lone "は" would light up every one
                    seen.add(term)
                    grams.append(term)
                continue
            if len(term) < 3:
                continue
            for spelled in spellings(term):
                cut = stem(spelled)
                if cut not in seen:
                    seen.add(cut)
                    stems.append(cut)
    if stems:
        # One alternation (longest first) scans each passage once: ~8x faster than a pattern
        # per term over 50 hits.
        alternation = "|".join(map(re.escape, sorted(stems, key=len, reverse=True)))
        start = _INNER_START if inner else _WORD_START
        pats.append(re.compile(start + r"(?:" + alternation + r")\w*", re.IGNORECASE))
    if grams:
        pats.append(re.compile("|".join(map(re.escape, grams)), re.IGNORECASE))
    for kw in keywords:
        if kw and kw.lower() not in seen:
            seen.add(kw.lower())
            pats.append(re.compile(re.escape(kw.lower()), re.IGNORECASE))
    return pats


def highlight(passage: str, patterns: Sequence[re.Pattern[str]]) -> list[tuple[int, int]]:
    """Merged [start, end) spans of the passage that match ``highlight_patterns``' patterns.

    Those are written in lower case, so they run case-sensitively over the lower-cased passage:
    1.4x faster than ``re.IGNORECASE`` over 50 hits of 1,300 characters.
    """
    low = lowered(passage)
    spans = sorted((m.start(), m.end()) for p in patterns for m in _cased(p).finditer(low))
    merged: list[tuple[int, int]] = []
    for s, e in spans:
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(e, merged[-1][1]))
        else:
            merged.append((s, e))
    return merged


@functools.lru_cache(maxsize=256)
def _cased(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """The pattern without ``re.IGNORECASE`` (for lower-case patterns over lower-case text)."""
    return re.compile(pattern.pattern, pattern.flags & ~re.IGNORECASE)
