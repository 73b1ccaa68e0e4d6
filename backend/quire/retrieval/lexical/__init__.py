"""The BM25 leg: a query's terms, and the leg itself, one implementation per lexical index
(chosen once at start, retrieval/legs.py): FTS5's ``bm25()`` on SQLite, answered from cached
per-term scores (fts5.py, term_scores.py); FTS5's formula over the postings table on
PostgreSQL (postgres.py). Both give FTS5's ranking and scores.

User text never reaches FTS5's query syntax: the query is cut into word tokens, stopwords
dropped, and every term quoted, so quotes, hyphens, ``AND/OR/NOT``, ``*``, parentheses or any
script cannot raise an FTS5 syntax error. Terms are OR-ed: BM25 ranks chunks with more of them
higher.
"""

from __future__ import annotations

import math
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence

from sqlalchemy import Connection

from quire.retrieval.filters import Filter
from quire.text.segment import segment, split_query
from quire.text.spelling import spellings
from quire.text.stopwords import is_stopword

#: Terms per query (a question in Japanese or Chinese is cut into ~one bigram a character).
MAX_TERMS = 48
#: The BM25 weight of the heading column (the text column's is 1).
HEADING_WEIGHT = 0.5
_TOKEN = re.compile(r"\w+", re.UNICODE)
#: Ranking = chunk ids with scores, best first.
Ranking = list[tuple[int, float]]


def terms(query: str) -> list[str]:
    """The searchable terms of a query: word tokens, lower-cased, stopwords out, deduplicated;
    a run of an unspaced script (CJK, Thai) gives its bigrams, as the index holds them."""
    spaced, words = split_query(query)
    tokens = _TOKEN.findall(spaced.lower()) + words
    seen: dict[str, None] = {}
    for tok in tokens:
        tok = tok.strip("_")
        if not tok or is_stopword(tok):
            continue
        seen.setdefault(tok, None)
    out = list(seen)
    if not out:
        # A query of stopwords only ("to be or not to be") still searches for its words.
        out = list(dict.fromkeys(t for t in tokens if t.strip("_")))
    return out[:MAX_TERMS]


def spelled(query_terms: Sequence[str]) -> list[str]:
    """The terms with their other spellings (``favourite``, ``favorite``), which BM25 ORs
    with them: a page in British spelling answers a question in American, and back."""
    return list(dict.fromkeys(w for t in query_terms for w in spellings(t)))


def phrases(query_terms: Sequence[str]) -> list[str]:
    """Each term quoted as an FTS5 phrase: no user text is read as query syntax. A word of an
    unspaced script becomes the phrase of its bigrams, as the index holds it."""
    return ['"' + (segment(t) or t).strip().replace('"', '""') + '"' for t in query_terms if t]


def match_expression(query_terms: Sequence[str]) -> str | None:
    """An FTS5 MATCH string that ORs the quoted terms, or None when there is nothing to match."""
    quoted = phrases(query_terms)
    return " OR ".join(quoted) if quoted else None


class LexicalLeg(ABC):
    """What both BM25 legs answer; ``bm25``, ``document_frequencies`` and ``chunk_count`` are
    each index's own."""

    @abstractmethod
    def bm25(
        self,
        conn: Connection,
        query: str,
        *,
        limit: int,
        flt: Filter,
        heading_weight: float = HEADING_WEIGHT,
        max_df: float = 0.0,
    ) -> Ranking:
        """Chunk ids with BM25 scores (higher is better), best first."""

    @abstractmethod
    def document_frequencies(
        self, conn: Connection, query_terms: Sequence[str], cap: int
    ) -> dict[str, int]:
        """The chunks holding each term, counted up to ``cap`` (the count stays cheap however
        common the term is)."""

    @abstractmethod
    def chunk_count(self, conn: Connection) -> int:
        """How many chunks there are."""

    def idf_weights(
        self, conn: Connection, query_terms: Sequence[str], heading_weight: float, cap_share: float
    ) -> dict[str, float]:
        """``log(1 + N / (1 + df))`` of each term over the whole index (the window stage's
        weights, retrieval/windows.py)."""
        total, df = self.frequencies(conn, query_terms, heading_weight, cap_share)
        return {t: math.log1p(total / (1 + df[t])) for t in query_terms}

    def frequencies(
        self, conn: Connection, query_terms: Sequence[str], heading_weight: float, cap_share: float
    ) -> tuple[int, dict[str, int]]:
        """The chunk count and each term's document frequency, a term in more than
        ``cap_share`` of the chunks counted only that far (it weighs ~nothing)."""
        total = self.chunk_count(conn)
        return total, self.document_frequencies(conn, query_terms, max(int(total * cap_share), 1))

    def drop_frequent(self, conn: Connection, query_terms: list[str], max_df: float) -> list[str]:
        """The terms without those in more than ``max_df`` of all chunks, unless none would
        remain.

        A term in a large share of chunks adds little to BM25 (low IDF) but makes FTS5 walk a
        long posting list: at 100k chunks two such terms cost the leg ~6x
        (bench/retrieval.py). Each probe is a count bounded by the threshold, so it stays cheap
        however common the term is.
        """
        if max_df <= 0 or len(query_terms) < 2:
            return query_terms
        total = conn.exec_driver_sql("SELECT coalesce(max(id), 0) FROM page_chunks").scalar_one()
        cap = max(int(total * max_df), 50)
        if total < 1000:  # small libraries: nothing to gain, keep every term
            return query_terms
        df = self.document_frequencies(conn, query_terms, cap + 1)
        kept = [t for t in query_terms if df[t] <= cap]
        return kept or query_terms

    def close(self) -> None:  # noqa: B027 - a leg without caches has nothing to close
        """Let go of what the leg keeps between searches."""
