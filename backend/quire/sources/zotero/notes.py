"""Zotero's annotations into notes (docs/using/notes.md "From Zotero"): each highlight,
underline, note, image or ink annotation made in Zotero's reader on an attachment Quire reads
becomes a note on that document's page, keyed by the annotation's item key, so that a
re-import adds what is new, updates what changed and deletes what Zotero no longer has.

The page is ``position.pageIndex`` + 1 (Zotero's own index of the page in the file); an
annotation without one is placed by its page label, when the document's pages carry that
label. The quote is the annotated text (highlight, underline), the note's text the comment.
Zotero's rectangles (PDF points) are kept in ``boxes`` as ``{"pdf": [x1, y1, x2, y2]}``. The
span in the page's text is found when the document's pages are written (storage/notes.py
``relocate``): a first import queues the file and its annotations together.

Imported notes are the team's, like the documents a Zotero import brings in (no person runs
``quire import``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, select

from quire.config import Settings
from quire.ingest import notes as indexing
from quire.sources.zotero.items import Annotation
from quire.storage import note_sync, notes
from quire.storage.db import Database
from quire.storage.schema import pages


@dataclass
class AnnotationCounts:
    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


def _fields(conn: Connection, document_id: int, a: Annotation) -> dict[str, Any]:
    page = a.page
    if page is None and a.page_label:
        page = conn.execute(
            select(pages.c.page).where(
                pages.c.document_id == document_id, pages.c.label == a.page_label
            )
        ).scalar()
    quoted = a.type in ("highlight", "underline")
    body = a.comment if quoted else (a.comment or a.text)
    if not body and not quoted:
        body = f"({a.type} annotation)"
    return {
        "document_id": document_id,
        "page": page,
        "quote": a.text if quoted else "",
        "body": body,
        "color": a.color,
        "tags": a.tags,
        "boxes": [{"pdf": r} for r in a.rects] or None,
        "visibility": "team",
    }


def sync_annotations(
    db: Database,
    settings: Settings,
    document_id: int,
    annotations: list[Annotation],
    counts: AnnotationCounts,
) -> None:
    """Make the document's Zotero notes what ``annotations`` say; index what changed, and queue
    their vectors (a re-embed job: the worker embeds every chunk without one)."""
    changed: list[int] = []
    with db.write() as conn:
        have = note_sync.imported(conn, document_id)
        for a in annotations:
            fields = _fields(conn, document_id, a)
            row = have.pop(a.key, None)
            if row is None:
                note_id = notes.create(
                    conn,
                    fields,
                    origin="zotero",
                    zotero_key=a.key,
                    annotation_type=a.type,
                    owner_id=None,
                    use_owner=True,
                    check_page=False,
                )
                counts.added += 1
                changed.append(note_id)
            elif note_sync.set_imported(conn, row, fields, a.type):
                counts.updated += 1
                changed.append(int(row.id))
            else:
                counts.unchanged += 1
        for row in have.values():
            notes.drop_index(conn, [row.index_id])
            note_sync.remove(conn, int(row.id))
            counts.removed += 1
    for note_id in changed:
        indexing.index(db, settings, None, note_id)  # vectors: a re-embed job for the worker
