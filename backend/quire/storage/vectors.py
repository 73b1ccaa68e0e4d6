"""The vector store: ``vec.page_vecs`` (vec0, rowid = chunk id) and ``vec.page_vecs_meta``.

On PostgreSQL (migration 0013) ``vec`` is a schema, ``vec.page_vecs`` a pgvector table keyed
by ``chunk_id`` (deleted with its chunk) with an HNSW index for cosine distance. What differs
is the backends' (``Dialect.vector_key``, ``create_vectors``, ``put_vectors``).

Vectors are derived data. When the configured embedder differs from the one recorded in
``page_vecs_meta`` (name or dimension), the table is dropped and recreated, the state becomes
``rebuilding`` and a re-embed job is queued; retrieval uses BM25 alone until the state is
``ready`` again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, text

from quire.errors import ServiceUnavailable
from quire.storage.db import dialect, id_list, in_ids
from quire.storage.schema import utcnow

log = logging.getLogger(__name__)

State = Literal["ready", "rebuilding"]


@dataclass(frozen=True)
class VecMeta:
    model: str
    dim: int
    state: State


def chunk_key(conn: Connection) -> str:
    """The chunk id column of vec.page_vecs (vec0's rowid; a column on PostgreSQL)."""
    return dialect(conn).vector_key


def read_meta(conn: Connection) -> VecMeta | None:
    """The recorded model, dimension and state, or None when the vector file is blank."""
    if dialect(conn).vector_tables(conn) < 2:
        return None
    row = conn.exec_driver_sql("SELECT model, dim, state FROM vec.page_vecs_meta").first()
    return VecMeta(row[0], int(row[1]), row[2]) if row else None


def _set_meta(conn: Connection, model: str, dim: int, state: State) -> None:
    conn.execute(
        text(
            "INSERT INTO vec.page_vecs_meta (id, model, dim, state, created_at) "
            "VALUES (1, :m, :d, :s, :t) ON CONFLICT(id) DO UPDATE SET "
            "model = excluded.model, dim = excluded.dim, state = excluded.state, "
            "created_at = excluded.created_at"
        ),
        {"m": model, "d": dim, "s": state, "t": utcnow()},
    )


def ensure(conn: Connection, model: str, dim: int) -> bool:
    """Match the store to ``model``/``dim``; True when existing chunks need (re)embedding."""
    meta = read_meta(conn)
    chunks = conn.exec_driver_sql("SELECT count(*) FROM page_chunks").scalar_one()
    if meta is not None and meta.model == model and meta.dim == dim:
        if meta.state == "ready" and chunks and missing_count(conn) == chunks:
            # The vector file was lost or emptied while chunks remain: rebuild from the main DB.
            _set_meta(conn, model, dim, "rebuilding")
            return True
        return meta.state == "rebuilding"
    if meta is not None:
        log.warning(
            "embedding model changed (%s/%d -> %s/%d): rebuilding the vector store",
            meta.model,
            meta.dim,
            model,
            dim,
        )
    conn.exec_driver_sql("DROP TABLE IF EXISTS vec.page_vecs")
    dialect(conn).create_vectors(conn, dim)
    state: State = "rebuilding" if chunks else "ready"
    _set_meta(conn, model, dim, state)
    return state == "rebuilding"


def mark_ready(conn: Connection, model: str) -> None:
    """Record that every chunk has a vector of ``model``."""
    conn.execute(
        text("UPDATE vec.page_vecs_meta SET state = 'ready' WHERE model = :m"), {"m": model}
    )


def missing_count(conn: Connection, document_id: int | None = None) -> int:
    """Chunks without a vector (of one document, or all)."""
    sql = (
        "SELECT count(*) FROM page_chunks c "
        f"WHERE NOT EXISTS (SELECT 1 FROM vec.page_vecs v WHERE v.{chunk_key(conn)} = c.id)"
    )
    if document_id is not None:
        sql += " AND c.document_id = :d"
    return int(conn.execute(text(sql), {"d": document_id}).scalar_one())


def missing_chunks(conn: Connection, document_id: int | None, limit: int) -> list[tuple[int, str]]:
    """Up to ``limit`` (chunk id, text) pairs that still need a vector."""
    sql = (
        "SELECT c.id, c.text FROM page_chunks c "
        f"WHERE NOT EXISTS (SELECT 1 FROM vec.page_vecs v WHERE v.{chunk_key(conn)} = c.id)"
    )
    if document_id is not None:
        sql += " AND c.document_id = :d"
    sql += " ORDER BY c.id LIMIT :n"
    return [(r[0], r[1]) for r in conn.execute(text(sql), {"d": document_id, "n": limit})]


def add(conn: Connection, model: str, ids: list[int], vectors: npt.NDArray[np.float32]) -> int:
    """Store vectors for chunk ids that still exist; returns how many were written.

    The model is checked inside the write transaction so that a worker still running an old
    embedder cannot write into a store that was switched to a new one.
    """
    meta = read_meta(conn)
    if meta is None or meta.model != model or meta.dim != vectors.shape[1]:
        raise ServiceUnavailable(
            f"the vector store now holds {meta.model if meta else 'nothing'}, not {model}: "
            "the worker will retry with the configured model"
        )
    live = {
        r[0]
        for r in conn.execute(
            text(f"SELECT id FROM page_chunks WHERE {in_ids(conn, 'id', 'ids')}"),
            {"ids": id_list(conn, ids)},
        )
    }
    rows = [(cid, vec) for cid, vec in zip(ids, vectors, strict=True) if cid in live]
    dialect(conn).put_vectors(conn, rows)
    return len(rows)


def delete(conn: Connection, chunk_ids: list[int]) -> None:
    """Remove the vectors of these chunks."""
    if chunk_ids:
        conn.execute(
            text(f"DELETE FROM vec.page_vecs WHERE {in_ids(conn, chunk_key(conn), 'ids')}"),
            {"ids": id_list(conn, chunk_ids)},
        )


def delete_orphans(conn: Connection) -> int:
    """Drop vectors whose chunk no longer exists (left by a crash between the two files)."""
    key = chunk_key(conn)
    orphans = [
        r[0]
        for r in conn.exec_driver_sql(
            f"SELECT v.{key} FROM vec.page_vecs v "
            f"WHERE NOT EXISTS (SELECT 1 FROM page_chunks c WHERE c.id = v.{key})"
        )
    ]
    delete(conn, orphans)
    return len(orphans)


def count(conn: Connection) -> int:
    """Vectors stored."""
    return int(conn.exec_driver_sql("SELECT count(*) FROM vec.page_vecs").scalar_one())
