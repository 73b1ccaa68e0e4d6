"""The exact leg: hard keywords (IDs, error codes, identifiers) as substrings, through the
trigram FTS5 index. It plays the role ripgrep plays in the seed design.

The trigram index keeps no positions (``detail=none``, migration 0010: a fifth of the size
with them), so FTS5 can neither match a keyword as a phrase nor rank it. It finds the rows
holding every trigram of the keyword; their text is then searched for the keyword itself
(case-folded, overlapping occurrences counted, as FTS5 counts a phrase's instances) and the
rows that hold it are scored with FTS5's bm25() formula on those counts, the row lengths FTS5
keeps (``_docsize``) and its row count: the scores, and the ranking, that bm25() gave over the
positional index (tests/retrieval/test_exact.py compares them).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, text

from quire.retrieval.filters import Filter
from quire.storage import pg_lexical, term_postings
from quire.storage.db import is_postgres

MIN_CHARS = 3  # the trigram tokenizer cannot match shorter strings
MAX_KEYWORDS = 8
#: Trigrams of one keyword ANDed to find its candidate rows (a long keyword's, spread over it:
#: the text check makes any subset exact).
MAX_TRIGRAMS = 24
#: Candidate rows read per keyword. A keyword in more rows than this is no identifier (at 1M
#: chunks, one in 2%); its document frequency is then FTS5's count of the candidates (every
#: trigram present), and only the first rows found are ranked.
MAX_CANDIDATES = 20_000
_TABLE = "page_chunks_tri"
# Every candidate, with whether the filter lets it through: the document frequency is the
# whole table's, as bm25() counts it.
_CANDIDATES_SQL = (
    "SELECT c.id, ({where}) AS ok, c.text, s.sz FROM page_chunks_tri t "
    "JOIN page_chunks c ON c.id = t.rowid JOIN documents d ON d.id = c.document_id "
    "JOIN page_chunks_tri_docsize s ON s.id = t.rowid WHERE page_chunks_tri MATCH :q LIMIT :cap"
)
_COUNT_SQL = text("SELECT count(*) FROM page_chunks_tri WHERE page_chunks_tri MATCH :q")
# PostgreSQL: pg_trgm's index on lower(text) finds the rows holding the keyword (a LIKE of its
# escaped text); a row's length is what FTS5's trigram tokenizer counts, one per character
# but two (as bm25_totals sums it).
_PG_CANDIDATES_SQL = (
    "SELECT c.id, ({where}) AS ok, c.text, greatest(char_length(c.text) - 2, 0) "
    "FROM page_chunks c "
    "JOIN documents d ON d.id = c.document_id "
    "WHERE lower(c.text) LIKE :q ESCAPE '\\' AND c.bm25_len IS NOT NULL LIMIT :cap"
)
_PG_COUNT_SQL = text(
    "SELECT count(*) FROM page_chunks WHERE lower(text) LIKE :q ESCAPE '\\' "
    "AND bm25_len IS NOT NULL"
)


def exact(
    conn: Connection, keywords: Sequence[str], *, limit: int, flt: Filter
) -> list[tuple[int, float]]:
    """Chunks containing hard keywords, ranked by how many keywords they contain, then BM25."""
    usable = [k for k in dict.fromkeys(k.strip() for k in keywords) if len(k) >= MIN_CHARS]
    if not usable:
        return []
    stats = (
        pg_lexical.totals(conn).averages(trigrams=True)
        if is_postgres(conn)
        else term_postings.averages(conn, _TABLE)
    )
    if not stats.rows:
        return []
    hits: dict[int, list[float]] = {}
    for kw in usable[:MAX_KEYWORDS]:
        for cid, score in _keyword(conn, kw, stats, flt)[:limit]:
            hits.setdefault(cid, []).append(score)
    ranked = sorted(hits.items(), key=lambda kv: (-len(kv[1]), -sum(kv[1])))
    return [(cid, float(len(s)) + sum(s) / 1000) for cid, s in ranked[:limit]]


def _keyword(
    conn: Connection, keyword: str, stats: term_postings.Averages, flt: Filter
) -> list[tuple[int, float]]:
    """The chunks ``flt`` lets through holding ``keyword``, with bm25() of it as a phrase,
    best first."""
    needle = keyword.lower()
    where, params = flt.sql(conn, "c", "d")
    postgres = is_postgres(conn)
    if postgres:
        query = "%" + needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        candidates, counted = _PG_CANDIDATES_SQL, _PG_COUNT_SQL
    else:
        query = match_expression(needle)
        candidates, counted = _CANDIDATES_SQL, _COUNT_SQL
    rows = conn.execute(
        text(candidates.format(where=where)),
        {"q": query, "cap": MAX_CANDIDATES, **params},
    ).all()
    found = [
        (int(cid), bool(ok), tf, int(sz) if postgres else sum(term_postings.varints(sz)))
        for cid, ok, body, sz in rows
        if (tf := occurrences(body.lower(), needle))
    ]
    # Beyond the cap, FTS5's count of the candidates (never fewer than hold the keyword).
    capped = len(rows) >= MAX_CANDIDATES
    df = int(conn.execute(counted, {"q": query}).scalar_one()) if capped else len(found)
    idf = term_postings.idf(stats.rows, df)
    scored = [
        (cid, float(term_postings.bm25(float(tf), float(length), idf, stats.avgdl)))
        for cid, ok, tf, length in found
        if ok
    ]
    scored.sort(key=lambda h: (-h[1], h[0]))
    return scored


def match_expression(needle: str) -> str:
    """The FTS5 query of the rows holding every trigram of ``needle`` (at most MAX_TRIGRAMS,
    spread over it), each quoted: no user text is read as query syntax."""
    grams = list(dict.fromkeys(needle[i : i + 3] for i in range(len(needle) - 2)))
    if len(grams) > MAX_TRIGRAMS:
        step = (len(grams) - 1) / (MAX_TRIGRAMS - 1)
        grams = [grams[round(i * step)] for i in range(MAX_TRIGRAMS)]
    return " AND ".join('"' + g.replace('"', '""') + '"' for g in grams)


def occurrences(haystack: str, needle: str) -> int:
    """How often ``needle`` occurs in ``haystack``, overlapping occurrences included."""
    n, i = 0, haystack.find(needle)
    while i >= 0:
        n += 1
        i = haystack.find(needle, i + 1)
    return n
