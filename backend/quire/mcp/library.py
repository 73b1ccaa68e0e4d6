"""The MCP tools' reads of the library: search hits, pages and documents, as the models of
mcp/schemas.py (synchronous: the server runs them in a thread).

    library.search(runtime, "safe harbor", SearchOptions(limit=5), Links())
    library.page(runtime, 1, 2, context=True, links=Links())
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC
from typing import Any

from sqlalchemy import Connection

from quire.errors import NotFound
from quire.mcp import schemas
from quire.mcp.citations import Links, citation, document_uri, page_uri
from quire.retrieval.hits import Hit
from quire.retrieval.options import SearchOptions
from quire.runtime import Runtime
from quire.storage import chunks, documents, notes, records
from quire.storage.records import DocumentStatus, Kind
from quire.synthesis.events import Source


def search(rt: Runtime, query: str, options: SearchOptions, links: Links) -> schemas.SearchResult:
    """One search (InputError for an empty query, NotFound for unknown documents)."""
    result = rt.searcher.search(query, options)
    stored = stored_paths(rt, (h.document_id for h in result.hits), links)
    return schemas.SearchResult(
        query=result.query,
        strategy=result.strategy,
        hits=[_hit(h, links, stored.get(h.document_id)) for h in result.hits],
        notices=result.notices,
    )


def place(
    links: Links,
    *,
    document_id: int,
    title: str,
    kind: Kind,
    page: int,
    heading_path: str,
    stored_path: str | None = None,
    web_url: str | None = None,
    page_label: str | None = None,
) -> dict[str, Any]:
    """The fields of :class:`schemas.Place` for one page."""
    return {
        "document_id": document_id,
        "title": title,
        "kind": kind,
        "page": page,
        "page_label": page_label,
        "heading_path": heading_path,
        "place": records.place(kind, page, page_label, heading_path),
        "citation": citation(title, kind, page, heading_path, page_label),
        "link": web_url or links.original(document_id, kind, page, stored_path),
        "resource": page_uri(document_id, page),
    }


def web_url(kind: Kind, metadata: dict[str, Any]) -> str | None:
    """A Perplexity turn's own address on the web (its thread)."""
    url = metadata.get("url")
    return str(url) if kind == "perplexity" and url else None


def place_of(
    item: Hit | Source, links: Links, stored_path: str | None, url: str | None
) -> dict[str, Any]:
    """:func:`place` of a search hit or an answer's source (``url``: its web address)."""
    return place(
        links,
        document_id=item.document_id,
        title=item.title,
        kind=item.kind,
        page=item.page,
        heading_path=item.heading_path,
        stored_path=stored_path,
        web_url=url,
        page_label=item.page_label,
    )


def _hit(h: Hit, links: Links, stored_path: str | None) -> schemas.Hit:
    return schemas.Hit(
        **place_of(h, links, stored_path, web_url(h.kind, h.metadata)),
        passage=h.text,
        web_sources=h.web_sources,
        highlights=h.highlights,
        score=round(h.rerank if h.rerank is not None else h.fused, 4),
    )


def stored_paths(rt: Runtime, ids: Iterable[int], links: Links) -> dict[int, str]:
    """The stored originals of ``ids``, when links point at files (stdio) rather than at
    the API (HTTP)."""
    wanted = sorted(set(ids))
    if not wanted or links.base_url is not None:
        return {}
    with rt.db.read() as conn:
        return documents.stored_paths(conn, wanted)


@dataclass(frozen=True)
class _Doc:
    title: str
    kind: Kind
    status: str
    page_count: int
    stored_path: str


def _document(conn: Connection, document_id: int) -> _Doc:
    try:
        row = documents.readable(conn, document_id)
    except NotFound:
        raise NotFound(
            f"document {document_id} does not exist; list_documents shows the ids"
        ) from None
    return _Doc(
        title=row.title or row.filename,
        kind=row.kind,
        status=row.status,
        page_count=row.page_count,
        stored_path=row.stored_path,
    )


def page(
    rt: Runtime, document_id: int, number: int, *, context: bool, links: Links
) -> schemas.Page:
    """One page's text (with its neighbours when ``context``); NotFound names the range."""
    with rt.db.read() as conn:
        doc = _document(conn, document_id)
        found = chunks.get_page(conn, document_id, number)
        if found is None:
            if doc.status != "ready":
                raise NotFound(
                    f"document {document_id} is {doc.status}; its pages are not ready yet"
                )
            raise NotFound(
                f"document {document_id} has no page {number}: its pages are 1 to {doc.page_count}"
            )
        around = [
            chunks.get_page(conn, document_id, n) if context else None
            for n in (number - 1, number + 1)
        ]
    before, after = (
        schemas.PageText(page=p["page"], heading_path=p["heading_path"], text=p["text"])
        if p is not None
        else None
        for p in around
    )
    return schemas.Page(
        **place(
            links,
            document_id=document_id,
            title=doc.title,
            kind=doc.kind,
            page=number,
            heading_path=found["heading_path"],
            stored_path=doc.stored_path,
            web_url=web_url(doc.kind, found["metadata"] or {}),
            page_label=found["page_label"],
        ),
        page_count=doc.page_count,
        text=found["text"],
        extracted_by=found["source"],
        previous=before,
        next=after,
    )


def page_text(rt: Runtime, document_id: int, number: int) -> str:
    """A page's text, for its resource."""
    return page(rt, document_id, number, context=False, links=Links()).text


def list_documents(
    rt: Runtime,
    *,
    kind: Kind | None = None,
    status: DocumentStatus | None = None,
    source: str | None = None,
    text: str | None = None,
    limit: int = 100,
) -> schemas.DocumentList:
    """The library, newest first, filtered; ``source`` and ``text`` match case-insensitively
    within the source key, and within title, author and filename."""
    with rt.db.read() as conn:
        rows = documents.list_documents(conn)
        keys = documents.source_keys(conn)
    wanted_source = source.lower() if source else None
    wanted_text = text.lower() if text else None
    matched = []
    for r in rows:
        key = keys.get(r["id"])
        if kind is not None and r["kind"] != kind:
            continue
        if status is not None and r["status"] != status:
            continue
        if wanted_source is not None and wanted_source not in (key or "upload").lower():
            continue
        haystack = " ".join(str(r[k] or "") for k in ("title", "author", "filename")).lower()
        if wanted_text is not None and wanted_text not in haystack:
            continue
        matched.append(_document_out(r, key))
    return schemas.DocumentList(documents=matched[:limit], total=len(matched))


def _document_out(r: dict[str, Any], source: str | None) -> schemas.Document:
    return schemas.Document(
        id=r["id"],
        title=r["title"] or r["filename"],
        author=r["author"],
        kind=r["kind"],
        filename=r["filename"],
        source=source,
        origin=r["origin"],
        status=r["status"],
        error=r["error"],
        page_count=r["page_count"],
        chunk_count=r["chunk_count"],
        language=r["language"],
        created_at=r["created_at"].replace(tzinfo=r["created_at"].tzinfo or UTC),
        resource=document_uri(r["id"]),
    )


def document_json(rt: Runtime, document_id: int) -> str:
    """A document's resource: its metadata, latest job and page list, as JSON."""
    with rt.db.read() as conn:
        doc = documents.get_document(conn, document_id)
        source = documents.source_keys(conn, [document_id]).get(document_id)
        pages = [
            {
                **p,
                "citation": citation(
                    doc["title"] or doc["filename"],
                    doc["kind"],
                    p["page"],
                    p["heading_path"],
                    p["page_label"],
                ),
                "resource": page_uri(document_id, p["page"]),
            }
            for p in chunks.list_pages(conn, document_id)
        ]
    out = _document_out(doc, source).model_dump(mode="json")
    out.update(metadata=doc["metadata"], job=doc.get("job"), pages=pages)
    return json.dumps(out, default=str, ensure_ascii=False, indent=1)


def list_notes(
    rt: Runtime,
    *,
    document_id: int | None = None,
    tag: str | None = None,
    text: str | None = None,
    limit: int = 100,
    offset: int = 0,
) -> schemas.NoteList:
    """The user's notes they may read (their own, the team's shared ones), filtered; ``limit``
    of them from ``offset`` (``next_offset`` asks for the next ones)."""
    flt = notes.NoteFilter(document_id=document_id, tag=tag, q=text)
    with rt.db.read() as conn:
        found, total = notes.list_notes(conn, flt, limit=limit, offset=offset)
    return schemas.NoteList(
        notes=[
            schemas.Note(
                **{k: n[k] for k in schemas.Note.model_fields if k in n},
                citation=f"{n['document_title'] or 'Saved answer'}, {n['place']}",
            )
            for n in found
        ],
        total=total,
        next_offset=notes.next_offset(offset, len(found), total),
    )
