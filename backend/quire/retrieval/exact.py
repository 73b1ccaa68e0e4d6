"""The exact leg: hard keywords (IDs, error codes, identifiers) as substrings, through a
trigram index: FTS5's ``trigram`` tokenizer on SQLite, pg_trgm on PostgreSQL (chosen once at
start, retrieval/legs.py). It plays the role ripgrep plays in the seed design.

The trigram index keeps no positions (``detail=none``, migration 0010: a fifth of the size
with them), so FTS5 can neither match a keyword as a phrase nor rank it. It finds the rows
holding every trigram of the keyword; their text is then searched for the keyword itself
(case-folded, overlapping occurrences counted, as FTS5 counts a phrase's instances) and the
rows that hold it are scored with FTS5's bm25() formula on those counts, the row lengths FTS5
keeps (``_docsize``) and its row count: the scores, and the ranking, that bm25() gave over the
positional index (tests/retrieval/test_exact.py compares them). On PostgreSQL pg_trgm's
index finds the candidate rows and the same counts and formula rank them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection

from quire.retrieval import bm25
from quire.retrieval.filters import Filter
from quire.storage.backends import fts5, pg_postings
from quire.storage.backends.base import Averages
from quire.text.spelling import namespace_tails

MIN_CHARS = 3  # the trigram tokenizer cannot match shorter strings
MAX_KEYWORDS = 8
#: Trigrams of one keyword ANDed to find its candidate rows (a long keyword's, spread over it:
#: the text check makes any subset exact).
MAX_TRIGRAMS = 24
#: Candidate rows read per keyword. A keyword in more rows than this is no identifier (at 1M
#: chunks, one in 2%); its document frequency is then the index's count of the candidates
#: (every trigram present), and only the first rows found are ranked.
MAX_CANDIDATES = 20_000
#: (chunk id, passes the filter, text, length in trigrams) of a keyword's candidate rows.
Candidate = tuple[int, bool, str, int]


class ExactLeg(ABC):
    """Chunks containing hard keywords; each trigram index finds its candidates."""

    def exact(
        self, conn: Connection, keywords: Sequence[str], *, limit: int, flt: Filter
    ) -> list[tuple[int, float]]:
        """Chunks containing hard keywords, ranked by how many keywords they contain, then
        BM25."""
        usable = [k for k in dict.fromkeys(k.strip() for k in keywords) if len(k) >= MIN_CHARS]
        if not usable:
            return []
        stats = self.averages(conn)
        if not stats.rows:
            return []
        # A constant's name without its namespace (``CALL_PLT`` of ``R_RISCV_CALL_PLT``) is
        # the same name: matched standing alone, not inside the whole one, and counting as
        # one keyword with it (the better score of the two).
        whole = {k.lower(): k.lower() for k in sorted(usable, key=len)}
        whole.update({t: n for n in list(whole) for t in namespace_tails(n) if t in whole})
        hits: dict[int, dict[str, float]] = {}
        for kw in usable[:MAX_KEYWORDS]:
            name = whole[kw.lower()]
            for cid, score in self.keyword(conn, kw, stats, flt, alone=name != kw.lower())[:limit]:
                best = hits.setdefault(cid, {})
                best[name] = max(best.get(name, 0.0), score)
        ranked = sorted(hits.items(), key=lambda kv: (-len(kv[1]), -sum(kv[1].values())))
        return [(cid, len(s) + sum(s.values()) / 1000) for cid, s in ranked[:limit]]

    def keyword(
        self, conn: Connection, keyword: str, stats: Averages, flt: Filter, *, alone: bool = False
    ) -> list[tuple[int, float]]:
        """The chunks ``flt`` lets through holding ``keyword`` (``alone``: not as the end of a
        longer name), with bm25() of it as a phrase, best first."""
        needle = keyword.lower()
        where, params = flt.sql(conn, "c", "d")
        rows = self.candidates(conn, needle, where, params, MAX_CANDIDATES)
        found = [
            (cid, ok, tf, length)
            for cid, ok, body, length in rows
            if (tf := occurrences(body.lower(), needle, alone=alone))
        ]
        # Beyond the cap, the index's count of the candidates (never fewer than hold it).
        df = self.count(conn, needle) if len(rows) >= MAX_CANDIDATES else len(found)
        idf = bm25.idf(stats.rows, df)
        scored = [
            (cid, float(bm25.bm25(float(tf), float(length), idf, stats.avgdl)))
            for cid, ok, tf, length in found
            if ok
        ]
        scored.sort(key=lambda h: (-h[1], h[0]))
        return scored

    @abstractmethod
    def averages(self, conn: Connection) -> Averages:
        """The trigram index's rows and total length."""

    @abstractmethod
    def candidates(
        self, conn: Connection, needle: str, where: str, params: dict[str, Any], cap: int
    ) -> list[Candidate]:
        """Up to ``cap`` rows that may hold ``needle`` (lower-cased)."""

    @abstractmethod
    def count(self, conn: Connection, needle: str) -> int:
        """How many rows may hold ``needle``."""


class TrigramExact(ExactLeg):
    """FTS5's trigram index (``page_chunks_tri``): the rows holding every trigram."""

    def averages(self, conn: Connection) -> Averages:
        return fts5.averages(conn, fts5.TRIGRAMS)

    def candidates(
        self, conn: Connection, needle: str, where: str, params: dict[str, Any], cap: int
    ) -> list[Candidate]:
        return fts5.trigram_candidates(conn, match_expression(needle), where, params, cap)

    def count(self, conn: Connection, needle: str) -> int:
        return fts5.trigram_count(conn, match_expression(needle))


class PgTrgmExact(ExactLeg):
    """pg_trgm's index on ``lower(text)``: the rows whose text is LIKE the keyword."""

    def averages(self, conn: Connection) -> Averages:
        return pg_postings.totals(conn).averages(trigrams=True)

    def candidates(
        self, conn: Connection, needle: str, where: str, params: dict[str, Any], cap: int
    ) -> list[Candidate]:
        return pg_postings.trigram_candidates(conn, like_pattern(needle), where, params, cap)

    def count(self, conn: Connection, needle: str) -> int:
        return pg_postings.trigram_count(conn, like_pattern(needle))


def like_pattern(needle: str) -> str:
    """A LIKE pattern of the rows holding ``needle``, its wildcards escaped."""
    return "%" + needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def match_expression(needle: str) -> str:
    """The FTS5 query of the rows holding every trigram of ``needle`` (at most MAX_TRIGRAMS,
    spread over it), each quoted: no user text is read as query syntax."""
    grams = list(dict.fromkeys(needle[i : i + 3] for i in range(len(needle) - 2)))
    if len(grams) > MAX_TRIGRAMS:
        step = (len(grams) - 1) / (MAX_TRIGRAMS - 1)
        grams = [grams[round(i * step)] for i in range(MAX_TRIGRAMS)]
    return " AND ".join('"' + g.replace('"', '""') + '"' for g in grams)


def occurrences(haystack: str, needle: str, *, alone: bool = False) -> int:
    """How often ``needle`` occurs in ``haystack``, overlapping occurrences included
    (``alone``: only where no letter, digit or ``_`` comes just before it)."""
    n, i = 0, haystack.find(needle)
    while i >= 0:
        n += not (alone and i > 0 and (haystack[i - 1].isalnum() or haystack[i - 1] == "_"))
        i = haystack.find(needle, i + 1)
    return n
