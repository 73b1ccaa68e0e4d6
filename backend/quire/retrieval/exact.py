"""The exact leg: hard keywords (IDs, error codes, identifiers) as substrings, through the
trigram FTS5 index. It plays the role ripgrep plays in the seed design."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, text

from quire.retrieval.filters import Filter

MIN_CHARS = 3  # the trigram tokenizer cannot match shorter strings


def exact(
    conn: Connection, keywords: Sequence[str], *, limit: int, flt: Filter
) -> list[tuple[int, float]]:
    """Chunks containing hard keywords, ranked by how many keywords they contain, then BM25."""
    usable = [k for k in dict.fromkeys(k.strip() for k in keywords) if len(k) >= MIN_CHARS]
    if not usable:
        return []
    where, params = flt.sql("c", "d")
    hits: dict[int, list[float]] = {}
    for kw in usable[:8]:
        quoted = '"' + kw.replace('"', '""') + '"'
        rows = conn.execute(
            text(
                "SELECT t.rowid, bm25(page_chunks_tri) AS s FROM page_chunks_tri t "
                "JOIN page_chunks c ON c.id = t.rowid JOIN documents d ON d.id = c.document_id "
                f"WHERE page_chunks_tri MATCH :q AND {where} ORDER BY s LIMIT :n"
            ),
            {"q": quoted, "n": limit, **params},
        ).all()
        for cid, score in rows:
            hits.setdefault(int(cid), []).append(-float(score))
    ranked = sorted(hits.items(), key=lambda kv: (-len(kv[1]), -sum(kv[1])))
    return [(cid, float(len(s)) + sum(s) / 1000) for cid, s in ranked[:limit]]
