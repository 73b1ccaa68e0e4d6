"""The BM25 leg over ``page_chunks_fts`` (FTS5, porter unicode61).

User text never reaches FTS5's query syntax: the query is cut into word tokens, stopwords
dropped, and every term quoted, so quotes, hyphens, ``AND/OR/NOT``, ``*``, parentheses or any
script cannot raise an FTS5 syntax error. Terms are OR-ed: BM25 ranks chunks with more of them
higher.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sqlalchemy import Connection, text

from quire.retrieval.filters import Filter
from quire.retrieval.term_scores import TermScores
from quire.storage import pg_lexical
from quire.storage.db import is_postgres
from quire.storage.segment import is_stopword, segment, split_query
from quire.storage.term_postings import EntryCache

#: Terms per query (a question in Japanese or Chinese is cut into ~one bigram a character).
MAX_TERMS = 48
#: The BM25 weight of the heading column (the text column's is 1).
HEADING_WEIGHT = 0.5
_TOKEN = re.compile(r"\w+", re.UNICODE)


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


def phrases(query_terms: Sequence[str]) -> list[str]:
    """Each term quoted as an FTS5 phrase: no user text is read as query syntax. A word of an
    unspaced script becomes the phrase of its bigrams, as the index holds it."""
    return ['"' + (segment(t) or t).strip().replace('"', '""') + '"' for t in query_terms if t]


def match_expression(query_terms: Sequence[str]) -> str | None:
    """An FTS5 MATCH string that ORs the quoted terms, or None when there is nothing to match."""
    quoted = phrases(query_terms)
    return " OR ".join(quoted) if quoted else None


def drop_frequent(conn: Connection, query_terms: list[str], max_df: float) -> list[str]:
    """The terms without those in more than ``max_df`` of all chunks, unless none would remain.

    A term in a large share of chunks adds little to BM25 (low IDF) but makes FTS5 walk a long
    posting list: at 100k chunks two such terms cost the leg ~6x (bench/retrieval.py). Each
    probe is a count bounded by the threshold, so it stays cheap however common the term is.
    """
    if max_df <= 0 or len(query_terms) < 2:
        return query_terms
    total = conn.exec_driver_sql("SELECT coalesce(max(id), 0) FROM page_chunks").scalar_one()
    cap = max(int(total * max_df), 50)
    if total < 1000:  # small libraries: nothing to gain, keep every term
        return query_terms
    df = document_frequencies(conn, query_terms, cap + 1)
    kept = [t for t in query_terms if df[t] <= cap]
    return kept or query_terms


def chunk_count(conn: Connection) -> int:
    """How many chunks there are: on PostgreSQL from the BM25 totals (counting 1M rows takes
    tens of milliseconds there; SQLite counts from its smallest index)."""
    if is_postgres(conn):
        return pg_lexical.totals(conn).rows
    return int(conn.exec_driver_sql("SELECT count(*) FROM page_chunks").scalar_one())


def document_frequencies(conn: Connection, query_terms: Sequence[str], cap: int) -> dict[str, int]:
    """The chunks holding each term, counted up to ``cap`` (the count stays cheap however
    common the term is)."""
    if is_postgres(conn):
        found = pg_lexical.document_frequencies(conn, phrases(query_terms), cap)
        return dict(zip(query_terms, found, strict=True))
    return {
        t: int(
            conn.execute(
                text(
                    "SELECT count(*) FROM (SELECT rowid FROM page_chunks_fts "
                    "WHERE page_chunks_fts MATCH :q LIMIT :cap)"
                ),
                {"q": match_expression([t]), "cap": cap},
            ).scalar_one()
        )
        for t in query_terms
    }


def bm25(
    conn: Connection,
    query: str,
    *,
    limit: int,
    flt: Filter,
    heading_weight: float = HEADING_WEIGHT,
    max_df: float = 0.0,
    cache: TermScores | None = None,
    entries: EntryCache | None = None,
) -> list[tuple[int, float]]:
    """Chunk ids with BM25 scores (higher is better), best first; from ``cache`` when given
    (the same ranking and scores, see term_scores.py), else from FTS5 directly; on PostgreSQL
    the same formula over its postings (storage/pg_lexical.py), the frequent terms' stored
    entries kept in ``entries`` when given."""
    if cache is not None:
        view = cache.sync(conn)  # before any other statement on conn (see watch.py)
        allowed = flt.allowed_documents(conn) if flt.narrows else None
        return cache.search(
            conn,
            view,
            phrases(drop_frequent(conn, terms(query), max_df)),
            limit=limit,
            heading_weight=heading_weight,
            allowed_docs=allowed,
        )
    if is_postgres(conn):
        where, params = flt.sql(conn, "c", "d")
        return pg_lexical.bm25(
            conn,
            phrases(drop_frequent(conn, terms(query), max_df)),
            limit=limit,
            where=where,
            params=params,
            heading_weight=heading_weight,
            entries=entries,
        )
    expr = match_expression(drop_frequent(conn, terms(query), max_df))
    if expr is None:
        return []
    where, params = flt.sql(conn, "c", "d")
    args = {"q": expr, "n": limit, "hw": heading_weight, **params}
    if flt.narrows:
        # A selective filter: let SQLite join first, or the top of the whole index could all
        # fall outside the filter.
        rows = conn.execute(
            text(
                "SELECT f.rowid, bm25(page_chunks_fts, 1.0, :hw) AS s FROM page_chunks_fts f "
                "JOIN page_chunks c ON c.id = f.rowid JOIN documents d ON d.id = c.document_id "
                f"WHERE page_chunks_fts MATCH :q AND {where} ORDER BY s LIMIT :n"
            ),
            args,
        ).all()
        return [(int(r[0]), -float(r[1])) for r in rows]
    # Unfiltered: FTS5 ranks inside its own ORDER BY ... LIMIT (its sorter keeps only the top),
    # and only that top is joined to skip documents that are not ready. Joining every matching
    # chunk first cost 3x at 100k chunks (bench/retrieval.py). Widen in the rare case that
    # non-ready documents took too many places.
    fetch = limit * 2
    while True:
        rows = conn.execute(
            text(
                "SELECT f.rowid, f.s FROM (SELECT rowid, bm25(page_chunks_fts, 1.0, :hw) AS s "
                "FROM page_chunks_fts WHERE page_chunks_fts MATCH :q ORDER BY s LIMIT :m) f "
                "JOIN page_chunks c ON c.id = f.rowid JOIN documents d ON d.id = c.document_id "
                f"WHERE {where} ORDER BY f.s LIMIT :n"
            ),
            {**args, "m": fetch},
        ).all()
        if len(rows) >= limit:
            break
        matched = conn.execute(
            text(
                "SELECT count(*) FROM (SELECT rowid FROM page_chunks_fts "
                "WHERE page_chunks_fts MATCH :q LIMIT :m)"
            ),
            {"q": expr, "m": fetch},
        ).scalar_one()
        if matched < fetch:
            break
        fetch *= 8
    # FTS5's bm25() is negative (more negative = better); flip it so that higher is better.
    return [(int(r[0]), -float(r[1])) for r in rows]
