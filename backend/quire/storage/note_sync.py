"""Notes kept in step with what they are about (storage/notes.py): a document's pages written
again, where each highlight is found again (``relocate``), and a Zotero re-import, which
mirrors the annotations it brought in (``imported``, ``set_imported``, ``remove``)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from sqlalchemy import Connection, delete, select, update

from quire.storage import chunks
from quire.storage.notes import NoteStatus, check_body, clean_tags
from quire.storage.records import Page
from quire.storage.schema import notes, utcnow


def imported(conn: Connection, document_id: int) -> dict[str, Any]:
    """A document's notes imported from Zotero, by annotation key."""
    rows = conn.execute(
        select(notes).where(notes.c.document_id == document_id, notes.c.origin == "zotero")
    ).all()
    return {str(r.zotero_key): r for r in rows}


def set_imported(conn: Connection, row: Any, fields: dict[str, Any], kind: str) -> bool:
    """Bring an imported note up to date with its annotation; whether anything changed. A
    highlight whose quote or page changed is placed again when its page is next written."""
    values = {k: fields[k] for k in ("page", "quote", "body", "color", "tags", "boxes")}
    values["tags"] = clean_tags(values["tags"])
    values["annotation_type"] = kind
    if all(getattr(row, k) == v for k, v in values.items()):
        return False
    check_body(values["body"])
    if (values["quote"], values["page"]) != (row.quote, row.page):
        values.update(span_start=None, span_end=None, status="ok")
        values.update(_place_now(conn, row.document_id, values["page"], values["quote"]))
    conn.execute(update(notes).where(notes.c.id == row.id).values(**values, updated_at=utcnow()))
    return True


def _place_now(conn: Connection, document_id: int, page: int | None, quote: str) -> dict[str, Any]:
    """The span of ``quote`` on the page as stored now, if it is there."""
    if page is None or not quote:
        return {}
    got = chunks.get_page(conn, document_id, page)
    at = _find(str(got["text"]), quote, None) if got else None
    return {} if at is None else {"span_start": at, "span_end": at + len(quote)}


def remove(conn: Connection, note_id: int) -> None:
    """Delete a note whatever the reader (an import mirroring its source); ``drop_index``
    first."""
    conn.execute(delete(notes).where(notes.c.id == note_id))


def relocate(conn: Connection, document_id: int, new_pages: Iterable[Page]) -> dict[str, int]:
    """After a document's pages were written again: each highlight whose quote is no longer
    at its span is looked for on its page: ``moved`` (span updated) or ``orphaned`` (kept,
    with its quote). Returns how many of each."""
    by_number = {p.number: p.text for p in new_pages}
    counts = {"ok": 0, "moved": 0, "orphaned": 0}
    rows = conn.execute(
        select(notes.c.id, notes.c.page, notes.c.span_start, notes.c.span_end, notes.c.quote).where(
            notes.c.document_id == document_id, notes.c.quote != ""
        )
    ).all()
    for r in rows:
        page = by_number.get(r.page) if r.page is not None else None
        status: NoteStatus
        start, end = r.span_start, r.span_end
        if page is not None and start is not None and page[start:end] == r.quote:
            status = "ok"
        elif page is not None and (at := _find(page, r.quote, start)) is not None:
            # Placed for the first time (an imported annotation): ok; else it moved.
            status = "ok" if start is None else "moved"
            start, end = at, at + len(r.quote)
        else:
            status = "orphaned"
        counts[status] += 1
        conn.execute(
            update(notes)
            .where(notes.c.id == r.id)
            .values(status=status, span_start=start, span_end=end)
        )
    return counts


def _find(page: str, quote: str, near: int | None) -> int | None:
    """Where ``quote`` is on ``page``: the occurrence nearest ``near``; whitespace-insensitive
    as a last resort (a re-extraction that only re-flowed lines)."""
    hits: list[int] = []
    at = page.find(quote)
    while at >= 0 and len(hits) < 50:
        hits.append(at)
        at = page.find(quote, at + 1)
    if hits:
        return min(hits, key=lambda h: abs(h - (near or 0)))
    words = quote.split()
    if not words:
        return None
    found = re.search(r"\s+".join(re.escape(w) for w in words), page)
    return found.start() if found else None
