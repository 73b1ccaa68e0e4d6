"""Pages and chunks of a document, replaced idempotently by content hash."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, delete, func, insert, select, update

from quire.ingest.types import Chunk, Page
from quire.storage import vectors
from quire.storage.schema import page_chunks, pages


@dataclass
class ReplaceStats:
    """What ``replace`` did: chunks kept (their vectors too), inserted and deleted."""

    kept: int = 0
    inserted: int = 0
    deleted: int = 0
    inserted_ids: list[int] = field(default_factory=list)


def replace(
    conn: Connection, document_id: int, new_pages: list[Page], new_chunks: list[Chunk]
) -> ReplaceStats:
    """Make the stored pages and chunks of a document equal to the new ones.

    A chunk whose content hash is already stored for this document keeps its row (and so its
    vector: it is not embedded again); the others are inserted, and the rest deleted with their
    vectors. Call inside one write transaction.
    """
    conn.execute(delete(pages).where(pages.c.document_id == document_id))
    if new_pages:
        conn.execute(
            insert(pages),
            [
                {
                    "document_id": document_id,
                    "page": p.number,
                    "heading_path": p.heading_path,
                    "text": p.text,
                    "source": p.source,
                    "meta": p.meta,
                }
                for p in new_pages
            ],
        )

    existing: dict[str, list[Any]] = defaultdict(list)
    for row in conn.execute(
        select(
            page_chunks.c.id,
            page_chunks.c.content_hash,
            page_chunks.c.page,
            page_chunks.c.ordinal,
            page_chunks.c.heading_path,
            page_chunks.c.source,
        )
        .where(page_chunks.c.document_id == document_id)
        .order_by(page_chunks.c.id)
    ):
        existing[row.content_hash].append(row)

    stats = ReplaceStats()
    to_insert: list[dict[str, Any]] = []
    for chunk in new_chunks:
        same = existing.get(chunk.content_hash)
        if same:
            row = same.pop(0)
            stats.kept += 1
            if (row.page, row.ordinal, row.heading_path, row.source) != (
                chunk.page,
                chunk.ordinal,
                chunk.heading_path,
                chunk.source,
            ):
                conn.execute(
                    update(page_chunks)
                    .where(page_chunks.c.id == row.id)
                    .values(
                        page=chunk.page,
                        ordinal=chunk.ordinal,
                        heading_path=chunk.heading_path,
                        source=chunk.source,
                    )
                )
            continue
        to_insert.append(
            {
                "document_id": document_id,
                "page": chunk.page,
                "ordinal": chunk.ordinal,
                "heading_path": chunk.heading_path,
                "text": chunk.text,
                "content_hash": chunk.content_hash,
                "char_count": len(chunk.text),
                "source": chunk.source,
            }
        )

    stale = [row.id for rows in existing.values() for row in rows]
    if stale:
        # Vectors first: a crash between the two files then leaves a chunk without a vector
        # (embedded again on resume), never a vector without a chunk.
        vectors.delete(conn, stale)
        conn.execute(delete(page_chunks).where(page_chunks.c.id.in_(stale)))
        stats.deleted = len(stale)
    for values in to_insert:
        result = conn.execute(insert(page_chunks).values(**values))
        stats.inserted_ids.append(int(result.inserted_primary_key[0]))  # type: ignore[index]
    stats.inserted = len(to_insert)
    return stats


def delete_document_chunks(conn: Connection, document_id: int) -> int:
    """Delete a document's vectors, chunks and pages; returns the number of chunks."""
    ids = [
        r[0]
        for r in conn.execute(
            select(page_chunks.c.id).where(page_chunks.c.document_id == document_id)
        )
    ]
    vectors.delete(conn, ids)
    conn.execute(delete(page_chunks).where(page_chunks.c.document_id == document_id))
    conn.execute(delete(pages).where(pages.c.document_id == document_id))
    return len(ids)


def get_page(conn: Connection, document_id: int, number: int) -> dict[str, Any] | None:
    """One page with its chunks (id, ordinal, text) for the source viewer."""
    row = conn.execute(
        select(pages).where(pages.c.document_id == document_id, pages.c.page == number)
    ).first()
    if row is None:
        return None
    chunk_rows = conn.execute(
        select(page_chunks.c.id, page_chunks.c.ordinal, page_chunks.c.text)
        .where(page_chunks.c.document_id == document_id, page_chunks.c.page == number)
        .order_by(page_chunks.c.ordinal)
    ).all()
    return {
        "page": row.page,
        "heading_path": row.heading_path,
        "text": row.text,
        "source": row.source,
        "metadata": row.meta,
        "chunks": [{"id": c.id, "ordinal": c.ordinal, "text": c.text} for c in chunk_rows],
    }


def list_pages(conn: Connection, document_id: int) -> list[dict[str, Any]]:
    """Page numbers with heading paths, sizes and sources, in order."""
    rows = conn.execute(
        select(
            pages.c.page,
            pages.c.heading_path,
            pages.c.source,
            func.length(pages.c.text).label("chars"),
        )
        .where(pages.c.document_id == document_id)
        .order_by(pages.c.page)
    )
    return [
        {"page": r.page, "heading_path": r.heading_path, "chars": r.chars, "source": r.source}
        for r in rows
    ]
