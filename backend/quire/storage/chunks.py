"""Pages and chunks of a document, replaced idempotently by content hash."""

from __future__ import annotations

import dataclasses
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, delete, insert, select, text, update

from quire.storage import page_text, term_postings, vectors
from quire.storage.db import dialect, id_list, in_ids
from quire.storage.records import (
    TURN_KINDS,
    VISIBLE_SQL,
    Chunk,
    Kind,
    Page,
    place,
    printed_label,
)
from quire.storage.schema import page_chunks, pages
from quire.storage.web_sources import WebSource, web_sources
from quire.text.segment import segment

#: What a hit shows of its document's metadata (the rest stays in the library).
HIT_METADATA = ("url", "slug", "space", "date", "language", "author")


@dataclass(frozen=True)
class ChunkView:
    """A chunk of a ready document, with what a search hit shows of that document."""

    chunk_id: int
    document_id: int
    page: int
    heading_path: str
    text: str
    title: str
    kind: Kind
    filename: str
    metadata: dict[str, Any]
    #: The page's printed label when it differs from ``page`` (records.printed_label).
    page_label: str | None = None
    #: The web pages the passage's footnote markers cite (Perplexity; else empty).
    web_sources: list[WebSource] = field(default_factory=list)


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
    # Each chunk's start in its page; the page row keeps only what no chunk covers.
    by_page: dict[int, list[int]] = defaultdict(list)
    for i, chunk in enumerate(new_chunks):
        by_page[chunk.page].append(i)
    starts: list[int | None] = [None] * len(new_chunks)
    page_rows = []
    for p in new_pages:
        mine = by_page.get(p.number, [])
        found, rest = page_text.split(p.text, [new_chunks[i].text for i in mine])
        for i, at in zip(mine, found, strict=True):
            starts[i] = at
        page_rows.append(
            {
                "document_id": document_id,
                "page": p.number,
                "heading_path": p.heading_path,
                "rest": rest,
                "char_count": len(p.text),
                "source": p.source,
                "meta": p.meta,
                "label": p.label,
            }
        )
    if page_rows:
        conn.execute(insert(pages), page_rows)

    existing: dict[str, list[Any]] = defaultdict(list)
    for row in conn.execute(
        select(
            page_chunks.c.id,
            page_chunks.c.content_hash,
            page_chunks.c.page,
            page_chunks.c.ordinal,
            page_chunks.c.heading_path,
            page_chunks.c.source,
            page_chunks.c.start,
        )
        .where(page_chunks.c.document_id == document_id)
        .order_by(page_chunks.c.id)
    ):
        existing[row.content_hash].append(row)

    stats = ReplaceStats()
    to_insert: list[dict[str, Any]] = []
    retitled: list[int] = []  # kept chunks whose heading changed (PostgreSQL's BM25 rows)
    for chunk, start in zip(new_chunks, starts, strict=True):
        same = existing.get(chunk.content_hash)
        if same:
            row = same.pop(0)
            stats.kept += 1
            if (row.page, row.ordinal, row.heading_path, row.source, row.start) != (
                chunk.page,
                chunk.ordinal,
                chunk.heading_path,
                chunk.source,
                start,
            ):
                if row.heading_path != chunk.heading_path:
                    retitled.append(int(row.id))
                conn.execute(
                    update(page_chunks)
                    .where(page_chunks.c.id == row.id)
                    .values(
                        page=chunk.page,
                        ordinal=chunk.ordinal,
                        heading_path=chunk.heading_path,
                        fts_heading=segment(chunk.heading_path),
                        source=chunk.source,
                        start=start,
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
                "fts_text": segment(chunk.text),
                "fts_heading": segment(chunk.heading_path),
                "start": start,
            }
        )

    stale = [row.id for rows in existing.values() for row in rows]
    if stale:
        # Vectors first: a crash between the two files then leaves a chunk without a vector
        # (embedded again on resume), never a vector without a chunk.
        vectors.delete(conn, stale)
        conn.execute(delete(page_chunks).where(page_chunks.c.id.in_(stale)))
        stats.deleted = len(stale)
    if to_insert:
        # One multi-row INSERT … RETURNING per batch, the ids in the order of the rows.
        rows = conn.execute(
            insert(page_chunks).returning(page_chunks.c.id, sort_by_parameter_order=True),
            to_insert,
        )
        stats.inserted_ids = [int(r[0]) for r in rows]
    stats.inserted = len(to_insert)
    # SQLite's FTS5 triggers index a chunk as it is written; PostgreSQL's BM25 rows are made
    # here, from the same text (storage/backends/pg_postings.py).
    if dialect(conn).index_text(conn, stats.inserted_ids + retitled):
        term_postings.forget(conn)  # a chunk indexed again in place
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
        select(page_chunks.c.id, page_chunks.c.ordinal, page_chunks.c.text, page_chunks.c.start)
        .where(page_chunks.c.document_id == document_id, page_chunks.c.page == number)
        .order_by(page_chunks.c.ordinal)
    ).all()
    spans = [(c.start, c.text) for c in chunk_rows if c.start is not None]
    return {
        "page": row.page,
        "heading_path": row.heading_path,
        "text": page_text.stitch(row.rest, spans),
        "source": row.source,
        "metadata": row.meta,
        "page_label": printed_label(row.page, row.label),
        "chunks": [{"id": c.id, "ordinal": c.ordinal, "text": c.text} for c in chunk_rows],
    }


def list_pages(conn: Connection, document_id: int) -> list[dict[str, Any]]:
    """Page numbers with heading paths, sizes and sources, in order."""
    rows = conn.execute(
        select(
            pages.c.page,
            pages.c.heading_path,
            pages.c.source,
            pages.c.label,
            pages.c.char_count.label("chars"),
        )
        .where(pages.c.document_id == document_id)
        .order_by(pages.c.page)
    )
    return [
        {
            "page": r.page,
            "heading_path": r.heading_path,
            "chars": r.chars,
            "source": r.source,
            "page_label": printed_label(r.page, r.label),
        }
        for r in rows
    ]


#: An outline longer than this is cut (a page list, not an index of every paragraph).
MAX_OUTLINE = 2000


def outline(conn: Connection, document_id: int, kind: Kind) -> list[dict[str, Any]]:
    """The document's sections in reading order, each at the page where its first passage is:
    a PDF's outline (or the headings told from its fonts), an EPUB's chapters, an Office file's
    slides, sheets and headings, a web page's headings; empty when it has none.

    Built from the passages' heading paths (each chunk carries the path in effect where it
    starts, and a page is cut where a section starts on it), so an entry's page is the page
    its section starts on, and pages before the first entry belong to none."""
    rows = conn.execute(
        select(page_chunks.c.page, page_chunks.c.heading_path, pages.c.label)
        .join(
            pages,
            (pages.c.document_id == page_chunks.c.document_id)
            & (pages.c.page == page_chunks.c.page),
        )
        .where(page_chunks.c.document_id == document_id)
        .order_by(page_chunks.c.page, page_chunks.c.ordinal)
    )
    entries: list[dict[str, Any]] = []
    current: list[str] = []
    for r in rows:
        parts = [p for p in r.heading_path.split(" > ") if p] if r.heading_path else []
        shared = 0
        while shared < min(len(parts), len(current)) and parts[shared] == current[shared]:
            shared += 1
        for depth in range(shared + 1, len(parts) + 1):
            path = " > ".join(parts[:depth])
            entries.append(
                {
                    "title": parts[depth - 1],
                    "level": depth,
                    "page": r.page,
                    "place": place(kind, r.page, r.label, path),
                }
            )
        current = parts
        if len(entries) >= MAX_OUTLINE:
            return entries[:MAX_OUTLINE]
    return entries


def page_metadata(conn: Connection, document_id: int) -> list[dict[str, Any]]:
    """Each page's metadata, in page order."""
    rows = conn.execute(
        select(pages.c.meta).where(pages.c.document_id == document_id).order_by(pages.c.page)
    )
    return [r.meta if isinstance(r.meta, dict) else _json_object(r.meta) for r in rows]


def texts(conn: Connection, ids: Sequence[int]) -> dict[int, str]:
    """The text of each chunk id that exists."""
    rows = conn.execute(
        text(f"SELECT id, text FROM page_chunks WHERE {in_ids(conn, 'id', 'ids')}"),
        {"ids": id_list(conn, ids)},
    ).all()
    return {int(r[0]): str(r[1]) for r in rows}


def page_texts(conn: Connection, keys: Sequence[tuple[int, int]]) -> dict[tuple[int, int], str]:
    """The whole text of each (document id, page) that exists."""
    return {key: whole for key, (whole, _) in _whole_pages(conn, keys).items()}


def _whole_pages(
    conn: Connection, keys: Iterable[tuple[int, int]]
) -> dict[tuple[int, int], tuple[str, dict[str, Any]]]:
    """Each (document id, page) that exists: its whole text (page_text.stitch) and metadata."""
    ordered = sorted(set(keys))
    if not ordered:
        return {}
    wanted, pairs = dialect(conn).in_pairs(("document_id", "page"), ordered)
    spans: dict[tuple[int, int], list[page_text.Span]] = defaultdict(list)
    for r in conn.execute(
        text(
            f"SELECT document_id, page, start, text FROM page_chunks WHERE {wanted} "
            "AND start IS NOT NULL"
        ),
        pairs,
    ):
        spans[(int(r[0]), int(r[1]))].append((int(r[2]), str(r[3])))
    out = {}
    for r in conn.execute(
        text(f"SELECT document_id, page, rest, metadata FROM pages WHERE {wanted}"),
        pairs,
    ):
        key = (int(r[0]), int(r[1]))
        meta = r[3] if isinstance(r[3], dict) else _json_object(r[3])
        out[key] = (page_text.stitch(str(r[2]), spans.get(key, [])), meta)
    return out


def openings(conn: Connection, keys: Sequence[tuple[int, int]]) -> dict[tuple[int, int], int]:
    """The first chunk of each (document id, page) that has chunks."""
    ordered = sorted(set(keys))
    if not ordered:
        return {}
    wanted, pairs = dialect(conn).in_pairs(("document_id", "page"), ordered)
    rows = conn.execute(
        text(f"SELECT document_id, page, id FROM page_chunks WHERE {wanted} AND ordinal = 0"),
        pairs,
    ).all()
    return {(int(r[0]), int(r[1])): int(r[2]) for r in rows}


def ready_views(conn: Connection, ids: Sequence[int]) -> dict[int, ChunkView]:
    """The chunks among ``ids`` whose document is ready (others were deleted or re-ingested
    since a search's legs ran), with their documents' titles, kinds and hit metadata."""
    if not ids:
        return {}
    rows = conn.execute(
        text(
            "SELECT c.id, c.document_id, c.page, c.heading_path, c.text, d.title, "
            "d.kind, d.filename, d.metadata, p.label FROM page_chunks c "
            # CROSS JOIN keeps the ~50 chunk ids as the outer loop: without table statistics
            # SQLite would walk every ready document's chunks instead (PostgreSQL has them).
            f"{dialect(conn).join_by_ids} documents d "
            "ON d.id = c.document_id "
            "LEFT JOIN pages p ON p.document_id = c.document_id AND p.page = c.page "
            f"WHERE {in_ids(conn, 'c.id', 'ids')} AND d.status {VISIBLE_SQL}"
        ),
        {"ids": id_list(conn, ids)},
    ).all()
    out = {}
    for r in rows:
        meta = r[8] if isinstance(r[8], dict) else _json_object(r[8])
        out[int(r[0])] = ChunkView(
            chunk_id=int(r[0]),
            document_id=int(r[1]),
            page=int(r[2]),
            heading_path=str(r[3]),
            text=str(r[4]),
            title=str(r[5] or r[7]),
            kind=r[6],
            filename=str(r[7]),
            metadata={k: meta[k] for k in HIT_METADATA if k in meta},
            page_label=printed_label(int(r[2]), r[9]),
        )
    return _with_web_sources(conn, out)


def _with_web_sources(conn: Connection, views: dict[int, ChunkView]) -> dict[int, ChunkView]:
    """The views with the web sources of their Perplexity passages (from their turns)."""
    keys = {(v.document_id, v.page) for v in views.values() if v.kind in TURN_KINDS}
    if not keys:
        return views
    turns = _whole_pages(conn, keys)
    out = dict(views)
    for cid, v in views.items():
        turn = turns.get((v.document_id, v.page))
        if turn is not None:
            found = web_sources(turn[1], turn[0], v.text)
            if found:
                out[cid] = dataclasses.replace(v, web_sources=found)
    return out


def _json_object(raw: Any) -> dict[str, Any]:
    try:
        value = json.loads(raw) if raw else {}
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
