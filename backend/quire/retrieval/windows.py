"""The window stage: each fused candidate scored by its best window of a few consecutive
sentences, as the share of the query's (idf-weighted) terms found there. A page that holds
the question's words close together, in one or two sentences, beats a long passage that has
them scattered — what BM25 over 1,500-character chunks cannot see. The ranking joins the legs'
in the fusion (weight ``QUIRE_WEIGHT_WINDOW``).

Measured on the page-QA sets (bench/pageqa.py): windows of three sentences at weight 0.5 raised
page hit@1 on the development set and on the held-out set; see the README's retrieval section.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Mapping, Sequence

from sqlalchemy import Connection, text

from quire.retrieval import lexical
from quire.retrieval.sentences import split_sentences
from quire.retrieval.term_scores import TermScores

#: A term in more chunks than this share is counted by a bounded query (it weighs ~nothing).
_COUNT_CAP = 0.5


def idf_weights(
    conn: Connection, terms: Sequence[str], cache: TermScores | None, heading_weight: float
) -> dict[str, float]:
    """``log(1 + N / (1 + df))`` of each term over the whole index: from the BM25 leg's term
    cache when there is one (free: the leg has just scored these terms), else counted."""
    if cache is not None:
        view = cache.sync(conn)
        total = len(view.index.ids)
        df = {
            t: cache.matches(conn, view, p, heading_weight)
            for t, p in zip(terms, lexical.phrases(terms), strict=True)
        }
    else:
        total = int(conn.exec_driver_sql("SELECT count(*) FROM page_chunks").scalar_one())
        cap = max(int(total * _COUNT_CAP), 1)
        df = {
            t: int(
                conn.execute(
                    text(
                        "SELECT count(*) FROM (SELECT rowid FROM page_chunks_fts "
                        "WHERE page_chunks_fts MATCH :q LIMIT :cap)"
                    ),
                    {"q": lexical.match_expression([t]), "cap": cap},
                ).scalar_one()
            )
            for t in terms
        }
    return {t: math.log1p(total / (1 + df[t])) for t in terms}


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
    if not terms:
        return []
    # One scan of each passage: an alternation of the terms' stems (as the highlighter cuts
    # them; longest first), and each matched word credited to every term it starts with.
    stems = [_stem(t) for t in terms]
    short = [len(t) < 3 for t in terms]  # matched anywhere, as the highlighter leaves them
    pattern = re.compile(
        "|".join(
            (re.escape(stem) if short[i] else rf"(?<!\w){re.escape(stem)}\w*")
            for i, stem in sorted(enumerate(stems), key=lambda x: -len(x[1]))
        ),
        re.IGNORECASE,
    )
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
                if ((stem in low) if short[t] else low.startswith(stem))
            )
        return bits[word]

    scored = []
    for rank, cid in enumerate(order):
        passage = texts.get(cid, "")
        starts = [start for start, _ in split_sentences(passage)] or [0]
        found = [0] * len(starts)  # the terms in each sentence, as bits
        for m in pattern.finditer(passage):
            found[max(bisect.bisect_right(starts, m.start()) - 1, 0)] |= terms_of(m.group(0))
        best = 0.0
        for i in range(len(found)):
            mask = 0
            for f in found[i : i + size]:
                mask |= f
            if mask:
                best = max(best, share(mask))
        if best > 0:
            scored.append((cid, best, rank))
    scored.sort(key=lambda x: (-x[1], x[2]))
    return [(cid, score) for cid, score, _ in scored]


def _stem(term: str) -> str:
    """A term cut as the highlighter cuts it (a crude stand-in for the porter stemmer)."""
    return term[: max(4, len(term) - 3)] if len(term) > 5 else term
