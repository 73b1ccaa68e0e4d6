"""The dense leg: nearest chunks to a query vector, one implementation per vector store
(chosen once at start, retrieval/legs.py): sqlite-vec's vec0 table scanned by SQLite, the
in-memory mirror of it (mirror.py, the default on SQLite), or pgvector's HNSW index."""

from __future__ import annotations

import logging
from typing import Protocol

import numpy as np
from sqlalchemy import Connection, text

from quire.retrieval.dense.mirror import DenseMirror, Vector
from quire.retrieval.filters import Filter
from quire.storage import documents
from quire.storage.backends.postgres import pgvector_literal

log = logging.getLogger(__name__)


class DenseLeg(Protocol):
    def knn(
        self, conn: Connection, query: Vector, *, k: int, flt: Filter
    ) -> list[tuple[int, float]]:
        """(chunk id, cosine similarity) of the ``k`` nearest chunks ``flt`` lets through,
        best first."""

    def close(self) -> None:
        """Let go of what the leg keeps between searches."""


def knn_sqlite(conn: Connection, query: Vector, *, k: int, flt: Filter) -> list[tuple[int, float]]:
    """KNN in sqlite-vec; returns (chunk id, cosine similarity), best first."""
    where, params = flt.sql(conn, "c", "d")
    allowed = conn.execute(
        text(
            "SELECT json_group_array(c.id) FROM page_chunks c "
            f"JOIN documents d ON d.id = c.document_id WHERE {where}"
        ),
        params,
    ).scalar_one()
    rows = conn.execute(
        text(
            "SELECT rowid, distance FROM vec.page_vecs WHERE embedding MATCH :q AND k = :k "
            "AND rowid IN (SELECT value FROM json_each(:allowed))"
        ),
        {"q": np.ascontiguousarray(query, dtype=np.float32).tobytes(), "k": k, "allowed": allowed},
    ).all()
    # vec0's default metric is L2; for unit vectors cosine = 1 - d²/2.
    return [(int(r[0]), 1.0 - float(r[1]) ** 2 / 2.0) for r in rows]


#: HNSW candidates per neighbour asked for: pgvector's ef_search (its default, 40, missed
#: neighbours at k = 100). Filters run inside the scan (iterative scans, pgvector 0.8).
EF_FACTOR = 4
MAX_EF = 1_000


def knn_postgres(
    conn: Connection, query: Vector, *, k: int, flt: Filter
) -> list[tuple[int, float]]:
    """KNN in pgvector's HNSW index with the filter inside the query; (chunk id, cosine
    similarity), best first. The distances are computed on the stored float32 vectors: the
    index picks the candidates, their cosines are exact."""
    where, params = flt.sql(conn, "c", "d")
    ef = min(max(k * EF_FACTOR, 100), MAX_EF)
    conn.exec_driver_sql(f"SET LOCAL hnsw.ef_search = {int(ef)}")
    conn.exec_driver_sql("SET LOCAL hnsw.iterative_scan = strict_order")
    rows = conn.execute(
        text(
            "SELECT v.chunk_id, v.embedding <=> CAST(:q AS vector) AS dist FROM vec.page_vecs v "
            "JOIN page_chunks c ON c.id = v.chunk_id JOIN documents d ON d.id = c.document_id "
            f"WHERE {where} ORDER BY dist LIMIT :k"
        ),
        {"q": pgvector_literal(query), "k": k, **params},
    ).all()
    return [(int(r[0]), 1.0 - float(r[1])) for r in rows]


class Vec0Dense:
    """sqlite-vec's brute-force KNN."""

    def knn(
        self, conn: Connection, query: Vector, *, k: int, flt: Filter
    ) -> list[tuple[int, float]]:
        return knn_sqlite(conn, query, k=k, flt=flt)

    def close(self) -> None:
        return None


class PgvectorDense:
    """pgvector's HNSW index."""

    def knn(
        self, conn: Connection, query: Vector, *, k: int, flt: Filter
    ) -> list[tuple[int, float]]:
        return knn_postgres(conn, query, k=k, flt=flt)

    def close(self) -> None:
        return None


class MirrorDense:
    """The in-memory mirror of vec0, sqlite-vec itself while the mirror cannot load."""

    def __init__(self, mirror: DenseMirror) -> None:
        self.mirror = mirror

    def knn(
        self, conn: Connection, query: Vector, *, k: int, flt: Filter
    ) -> list[tuple[int, float]]:
        try:
            self.mirror.refresh(conn)
            allowed = flt.allowed_documents(conn) if flt.narrows else None
            return self.mirror.knn(
                query, k=k, allowed_docs=allowed, excluded_docs=documents.not_ready(conn)
            )
        except OSError:
            # The mirror's spill file could not be written or read (a full disk): sqlite-vec
            # answers the same, slower, until the mirror loads again on a later search.
            log.warning("dense mirror unavailable; searching sqlite-vec", exc_info=True)
            return knn_sqlite(conn, query, k=k, flt=flt)

    def close(self) -> None:
        self.mirror.close()
