"""The researcher's own layer: highlights and notes on a page, answers kept as notes, the
annotations brought in from Zotero (docs/using/notes.md).

A note is a row of ``notes``; what makes it a source is its hidden index document (kind
``note``, ``notes.index_id``): one page numbered like the page the note is on, labelled with
its citation ("your note on p. 45"), written by ``chunks.replace`` like any document's, so
that BM25, the exact leg and the vectors find it, the kind filters include or leave it out,
and a citation reads "Title, your note on p. 45". The index document carries the note's owner
and visibility, so that the access rule that hides another person's private documents hides
their private notes too, everywhere a document is read.

A note follows its document: deleting the document deletes its notes (and their index
documents). When a document is read again and a page's text changed, each highlight on it is
found again: ``moved`` (its quote elsewhere on the page, span updated) or ``orphaned`` (its
quote gone), never dropped.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import Connection, Text, cast, delete, func, insert, or_, select, text, update

from quire.errors import FileTooLarge, InputError, NotFound
from quire.storage import access, chunks
from quire.storage.records import Page, place, printed_label
from quire.storage.schema import conversations, documents, messages, notes, pages, utcnow

#: A note's Markdown body is at most this many bytes (UTF-8): a page of notes is a few KB; a
#: megabyte is a document, to be added as one.
MAX_BODY_BYTES = 100_000
#: A highlight's quote: a passage, not a chapter.
MAX_QUOTE_CHARS = 20_000
NoteStatus = Literal["ok", "moved", "orphaned"]
NoteOrigin = Literal["quire", "zotero"]
#: The fields a note is made or edited with (the API's NoteIn, Zotero's importer).
FIELDS = (
    "document_id", "page", "span_start", "span_end", "quote", "boxes", "color", "tags", "body",
    "visibility", "conversation_id", "message_id",
)  # fmt: skip
EDITABLE = ("quote", "boxes", "color", "tags", "body", "visibility", "span_start", "span_end")


@dataclass(frozen=True)
class Target:
    """What a note is about, as its citation needs it."""

    title: str
    kind: str
    label: str | None


def check_body(body: str) -> None:
    """FileTooLarge (413) for a body over ``MAX_BODY_BYTES``."""
    size = len(body.encode("utf-8"))
    if size > MAX_BODY_BYTES:
        raise FileTooLarge(
            f"a note's text is at most {MAX_BODY_BYTES // 1000} KB; this one is "
            f"{size / 1_000_000:.1f} MB: add a text this long as a document instead"
        )


def clean_tags(tags: Iterable[Any] | None) -> list[str]:
    out: list[str] = []
    for t in tags or ():
        tag = " ".join(str(t).split())[:100]
        if tag and tag not in out:
            out.append(tag)
    return out


def _check(fields: dict[str, Any]) -> None:
    check_body(fields.get("body") or "")
    quote = fields.get("quote") or ""
    if len(quote) > MAX_QUOTE_CHARS:
        raise InputError(f"a highlight's quote is at most {MAX_QUOTE_CHARS} characters")
    start, end = fields.get("span_start"), fields.get("span_end")
    if (start is None) != (end is None) or (start is not None and not 0 <= start <= end):
        raise InputError("a highlight's span needs both start and end, with 0 ≤ start ≤ end")


def _target_page(conn: Connection, document_id: int, page: int | None) -> None:
    """NotFound unless the reader may read the document (and it has that page)."""
    sql, params = access.document_sql("d")
    found = conn.execute(
        text(f"SELECT kind FROM documents d WHERE d.id = :id{access.where(sql)}"),
        {"id": document_id, **params},
    ).first()
    if found is None or found.kind == "note":
        raise NotFound(f"document {document_id} does not exist")
    if page is not None:
        has = conn.execute(
            select(pages.c.id).where(pages.c.document_id == document_id, pages.c.page == page)
        ).first()
        if has is None:
            raise NotFound(f"document {document_id} has no page {page}")


def _answer(conn: Connection, conversation_id: int, message_id: int | None) -> tuple[str, int]:
    """A kept answer's text: the answer, then its numbered sources with their places."""
    sql, params = access.conversation_sql("c")
    conv = conn.execute(
        text(f"SELECT id, title FROM conversations c WHERE c.id = :id{access.where(sql)}"),
        {"id": conversation_id, **params},
    ).first()
    if conv is None:
        raise NotFound(f"conversation {conversation_id} does not exist")
    query = select(messages).where(
        messages.c.conversation_id == conversation_id, messages.c.role == "assistant"
    )
    if message_id is not None:
        query = query.where(messages.c.id == message_id)
    msg = conn.execute(query.order_by(messages.c.id.desc())).first()
    if msg is None:
        raise NotFound(f"conversation {conversation_id} has no such answer")
    question = conn.execute(
        select(messages.c.content)
        .where(
            messages.c.conversation_id == conversation_id,
            messages.c.role == "user",
            messages.c.id < msg.id,
        )
        .order_by(messages.c.id.desc())
    ).scalar()
    lines = [f"**Q:** {question}", ""] if question else []
    lines.append(msg.content.strip())
    sources = [c for c in msg.citations or [] if isinstance(c, dict)]
    if sources:
        lines += ["", "Sources:"]
        for i, c in enumerate(sources, 1):
            where = place(str(c.get("kind") or "pdf"), int(c.get("page") or 1), c.get("page_label"))
            n = c.get("n", i)
            lines.append(f"[{n}] {c.get('title') or 'untitled'}, {where}")
    return "\n".join(lines), int(msg.id)


def create(
    conn: Connection,
    fields: dict[str, Any],
    *,
    origin: NoteOrigin = "quire",
    zotero_key: str | None = None,
    annotation_type: str | None = None,
    owner_id: int | None = None,
    use_owner: bool = False,
    check_page: bool = True,
) -> int:
    """A new note from ``fields`` (FIELDS); returns its id. Its index is written by
    ``ingest/notes.py index``. Private by default for a person; on a library without people
    every note is the team's (there is no one else)."""
    fields = {k: fields.get(k) for k in FIELDS}
    if fields["conversation_id"] is not None and not fields.get("body"):
        fields["body"], fields["message_id"] = _answer(
            conn, fields["conversation_id"], fields["message_id"]
        )
    _check(fields)
    doc, page = fields["document_id"], fields["page"]
    if doc is not None:
        _target_page(conn, doc, page if check_page else None)
    elif page is not None or fields["quote"]:
        raise InputError("a highlight or a note on a page needs its document_id")
    if doc is None and fields["conversation_id"] is None and not fields["body"]:
        raise InputError("a note needs a document, a conversation or a text")
    if fields["quote"] and page is None:
        raise InputError("a highlight needs the page it is on")
    reader = access.current()
    visibility = fields["visibility"] or ("private" if reader.person else "team")
    if visibility == "private" and not reader.person and not use_owner:
        raise InputError("a private note needs a person's token (quire users token NAME)")
    now = utcnow()
    values = {
        **fields,
        "quote": fields["quote"] or "",
        "body": fields["body"] or "",
        "tags": clean_tags(fields["tags"]),
        "visibility": visibility,
        "origin": origin,
        "zotero_key": zotero_key,
        "annotation_type": annotation_type,
        "owner_id": owner_id if use_owner else access.owner_for_new(),
        "status": "ok",
        "created_at": now,
        "updated_at": now,
    }
    result = conn.execute(insert(notes).values(**values))
    return int(result.inserted_primary_key[0])  # type: ignore[index]


def _readable(conn: Connection, note_id: int) -> Any:
    sql, params = access.document_sql("notes")
    row = conn.execute(
        select(notes).where(notes.c.id == note_id, text(sql or "1 = 1").bindparams(**params))
    ).first()
    if row is None:
        raise NotFound(f"note {note_id} does not exist")
    return row


def changeable(conn: Connection, note_id: int) -> Any:
    """The note's row, if the reader may edit it (its author; an admin a team note)."""
    row = _readable(conn, note_id)
    access.check_change(row.owner_id, row.visibility, f"note {note_id}")
    return row


def update_note(conn: Connection, note_id: int, changes: dict[str, Any]) -> None:
    """Edit a note's quote, span, boxes, colour, tags, body or visibility."""
    row = changeable(conn, note_id)
    values = {k: v for k, v in changes.items() if k in EDITABLE}
    merged = {**row._mapping, **values}
    _check(merged)
    if "tags" in values:
        values["tags"] = clean_tags(values["tags"])
    if values.get("visibility") == "private" and row.owner_id is None:
        raise InputError("a private note needs a person's token (quire users token NAME)")
    if values.get("visibility") is None:
        values.pop("visibility", None)
    if "span_start" in values or "quote" in values:
        values["status"] = "ok"
    conn.execute(update(notes).where(notes.c.id == note_id).values(**values, updated_at=utcnow()))


def delete_note(conn: Connection, note_id: int) -> None:
    """Delete a note the reader may change, with its index."""
    row = changeable(conn, note_id)
    drop_index(conn, [row.index_id])
    conn.execute(delete(notes).where(notes.c.id == note_id))


def drop_index(conn: Connection, index_ids: Iterable[int | None]) -> None:
    """Delete these index documents (their chunks and vectors)."""
    for index_id in index_ids:
        if index_id is None:
            continue
        chunks.delete_document_chunks(conn, index_id)
        conn.execute(delete(documents).where(documents.c.id == index_id))


def delete_for_document(conn: Connection, document_id: int) -> int:
    """Before a document is deleted: its notes' index documents (its notes then go with the
    document, ON DELETE CASCADE); returns how many notes."""
    ids = (
        conn.execute(select(notes.c.index_id).where(notes.c.document_id == document_id))
        .scalars()
        .all()
    )
    drop_index(conn, ids)
    return len(ids)


def target(conn: Connection, row: Any) -> Target:
    """The title, kind and page label of what a note is about."""
    if row.document_id is None:
        title = None
        if row.conversation_id is not None:
            title = conn.execute(
                select(conversations.c.title).where(conversations.c.id == row.conversation_id)
            ).scalar()
        return Target(title or "Saved answer", "note", None)
    doc = conn.execute(
        select(documents.c.title, documents.c.filename, documents.c.kind).where(
            documents.c.id == row.document_id
        )
    ).one()
    label = None
    if row.page is not None:
        label = conn.execute(
            select(pages.c.label).where(
                pages.c.document_id == row.document_id, pages.c.page == row.page
            )
        ).scalar()
    return Target(doc.title or doc.filename, doc.kind, label)


def citation_label(row: Any, tgt: Target) -> str:
    """How a citation names a note: "your note on p. 45", "your note on section 3", "your
    saved answer", "your note"; the target's place is ``records.place``'s."""
    if row.document_id is None:
        return "your saved answer" if row.conversation_id is not None else "your note"
    if row.page is None:
        return "your note"
    return f"your note on {place(tgt.kind, row.page, tgt.label)}"


def indexed_text(row: Any) -> str:
    """What search reads of a note: the quote, its tags and its text."""
    parts = []
    if row.quote:
        parts.append(f"“{row.quote}”")
    if row.body:
        parts.append(row.body)
    if row.tags:
        parts.append(" ".join(f"#{t}" for t in row.tags))
    return "\n\n".join(parts) or "(empty note)"


def index_page(conn: Connection, note_id: int) -> tuple[int, Page]:
    """Make (or update) the note's index document and return its id and the one page to
    write with ``chunks.replace``: numbered as the note's page, labelled with its citation."""
    row = conn.execute(select(notes).where(notes.c.id == note_id)).one()
    tgt = target(conn, row)
    body = indexed_text(row)
    now = utcnow()
    values = {
        "kind": "note",
        "title": tgt.title,
        "filename": f"note-{note_id}.md",
        "byte_size": len(body.encode("utf-8")),
        "page_count": 1,
        "updated_at": now,
        "meta": {"note": {"id": note_id, "document_id": row.document_id, "page": row.page}},
        "owner_id": row.owner_id,
        "visibility": row.visibility,
        "language": None,
    }
    index_id = row.index_id
    if index_id is None:
        index_id = conn.execute(
            insert(documents).values(
                **values,
                sha256=f"note:{note_id}:{hashlib.sha256(str(now).encode()).hexdigest()[:16]}",
                stored_path="",
                status="searchable",
                created_at=now,
            )
        ).inserted_primary_key[0]  # type: ignore[index]
        conn.execute(update(notes).where(notes.c.id == note_id).values(index_id=index_id))
    else:
        conn.execute(update(documents).where(documents.c.id == index_id).values(**values))
    page = Page(
        row.page or 1, body, heading_path="", source="markdown",
        label=citation_label(row, tgt),
    )  # fmt: skip
    return int(index_id), page


def _dict(row: Any, tgt: Target | None, owners: dict[int, str]) -> dict[str, Any]:
    m = row._mapping
    return {
        "id": m["id"],
        "document_id": m["document_id"],
        "document_title": tgt.title if tgt and m["document_id"] is not None else None,
        "page": m["page"],
        "page_label": printed_label(m["page"], tgt.label) if tgt and m["page"] else None,
        "place": citation_label(row, tgt) if tgt else None,
        "span_start": m["span_start"],
        "span_end": m["span_end"],
        "quote": m["quote"],
        "boxes": m["boxes"],
        "color": m["color"],
        "tags": m["tags"] or [],
        "body": m["body"],
        "origin": m["origin"],
        "zotero_key": m["zotero_key"],
        "annotation_type": m["annotation_type"],
        "status": m["status"],
        "visibility": m["visibility"],
        "owner": owners.get(m["owner_id"]) if m["owner_id"] is not None else None,
        "can_change": access.can_change(m["owner_id"], m["visibility"]),
        "conversation_id": m["conversation_id"],
        "message_id": m["message_id"],
        "searchable": m["index_id"] is not None,
        "created_at": m["created_at"],
        "updated_at": m["updated_at"],
    }


def _owners(conn: Connection) -> dict[int, str]:
    return {int(r.id): r.name for r in conn.execute(text("SELECT id, name FROM users"))}


def get_note(conn: Connection, note_id: int) -> dict[str, Any]:
    """One note the reader may read; NotFound otherwise (another's private note: the same)."""
    row = _readable(conn, note_id)
    return _dict(row, target(conn, row), _owners(conn))


@dataclass(frozen=True)
class NoteFilter:
    """Which notes to list: each field None or empty for all."""

    document_id: int | None = None
    tag: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    q: str | None = None
    origin: str | None = None
    status: str | None = None
    page: int | None = None


def next_offset(offset: int, shown: int, total: int) -> int | None:
    """Where the page after one of ``shown`` notes from ``offset`` starts; None after the last."""
    after = offset + shown
    return after if shown and after < total else None


def list_notes(
    conn: Connection, flt: NoteFilter, *, limit: int = 100, offset: int = 0
) -> tuple[list[dict[str, Any]], int]:
    """The notes the reader may read that match ``flt``, by document and page (newest first
    across documents), and how many match in all."""
    sql, params = access.document_sql("notes")
    where: list[Any] = [text(sql or "1 = 1").bindparams(**params)]
    if flt.document_id is not None:
        where.append(notes.c.document_id == flt.document_id)
    if flt.page is not None:
        where.append(notes.c.page == flt.page)
    if flt.since is not None:
        where.append(notes.c.updated_at >= flt.since)
    if flt.until is not None:
        where.append(notes.c.updated_at <= flt.until)
    if flt.origin:
        where.append(notes.c.origin == flt.origin)
    if flt.status:
        where.append(notes.c.status == flt.status)
    if flt.tag:
        # Tags are a short JSON list; matching its text keeps this one query on both backends.
        where.append(func.lower(cast(notes.c.tags, Text)).contains(json.dumps(flt.tag.lower())))
    for word in (flt.q or "").split()[:20]:
        like = f"%{word.lower()}%"
        where.append(
            or_(
                func.lower(notes.c.body).like(like),
                func.lower(notes.c.quote).like(like),
                func.lower(cast(notes.c.tags, Text)).like(like),
            )
        )
    total = int(conn.execute(select(func.count()).select_from(notes).where(*where)).scalar() or 0)
    rows = conn.execute(
        select(notes)
        .where(*where)
        .order_by(
            notes.c.document_id.is_(None),
            notes.c.document_id.desc(),
            notes.c.page,
            notes.c.span_start,
            notes.c.id,
        )
        .limit(limit)
        .offset(offset)
    ).all()
    owners = _owners(conn)
    targets: dict[tuple[Any, Any, Any], Target] = {}
    out = []
    for r in rows:
        key = (r.document_id, r.page, r.conversation_id)
        if key not in targets:
            targets[key] = target(conn, r)
        out.append(_dict(r, targets[key], owners))
    return out, total
