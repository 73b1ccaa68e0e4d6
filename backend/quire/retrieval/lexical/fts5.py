"""The BM25 leg on SQLite: ``page_chunks_fts`` (FTS5, porter unicode61) ranked by its own
``bm25()``, answered from cached per-term scores when the cache is on (term_scores.py: the
same ranking and scores)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, text

from quire.retrieval.filters import Filter
from quire.retrieval.lexical import (
    HEADING_WEIGHT,
    LexicalLeg,
    Ranking,
    match_expression,
    phrases,
    spelled,
    terms,
)
from quire.retrieval.lexical.term_scores import TermScores


class Fts5Lexical(LexicalLeg):
    """BM25 from FTS5; ``cache`` (None: off) keeps per-term scores between searches."""

    def __init__(self, cache: TermScores | None = None) -> None:
        self.cache = cache

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
        if self.cache is not None:
            view = self.cache.sync(conn)  # before any other statement on conn (term_scores.py)
            allowed = flt.allowed_documents(conn) if flt.narrows else None
            return self.cache.search(
                conn,
                view,
                phrases(spelled(self.drop_frequent(conn, terms(query), max_df))),
                limit=limit,
                heading_weight=heading_weight,
                allowed_docs=allowed,
            )
        expr = match_expression(spelled(self.drop_frequent(conn, terms(query), max_df)))
        if expr is None:
            return []
        where, params = flt.sql(conn, "c", "d")
        args = {"q": expr, "n": limit, "hw": heading_weight, **params}
        if flt.narrows:
            # A selective filter: let SQLite join first, or the top of the whole index could
            # all fall outside the filter.
            rows = conn.execute(
                text(
                    "SELECT f.rowid, bm25(page_chunks_fts, 1.0, :hw) AS s FROM page_chunks_fts f "
                    "JOIN page_chunks c ON c.id = f.rowid JOIN documents d ON d.id = c.document_id "
                    f"WHERE page_chunks_fts MATCH :q AND {where} ORDER BY s LIMIT :n"
                ),
                args,
            ).all()
            return [(int(r[0]), -float(r[1])) for r in rows]
        # Unfiltered: FTS5 ranks inside its own ORDER BY ... LIMIT (its sorter keeps only the
        # top), and only that top is joined to skip documents that are not ready. Joining every
        # matching chunk first cost 3x at 100k chunks (bench/retrieval.py). Widen in the rare
        # case that non-ready documents took too many places.
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

    def document_frequencies(
        self, conn: Connection, query_terms: Sequence[str], cap: int
    ) -> dict[str, int]:
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

    def chunk_count(self, conn: Connection) -> int:
        return int(conn.exec_driver_sql("SELECT count(*) FROM page_chunks").scalar_one())

    def frequencies(
        self, conn: Connection, query_terms: Sequence[str], heading_weight: float, cap_share: float
    ) -> tuple[int, dict[str, int]]:
        if self.cache is None:
            return super().frequencies(conn, query_terms, heading_weight, cap_share)
        # Free from the term cache: the leg has just scored these terms.
        view = self.cache.sync(conn)
        return len(view.index.ids), {
            t: self.cache.matches(conn, view, p, heading_weight)
            for t, p in zip(query_terms, phrases(query_terms), strict=True)
        }

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()
