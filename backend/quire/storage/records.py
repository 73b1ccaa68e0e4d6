"""What the library stores, as plain values: the kinds of document, a page and a chunk.

Ingest produces them, storage writes them, retrieval reads them back; they live here, at the
bottom, so that storage imports nothing above it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, get_args

from pydantic import Field

# SQLite integers are 64-bit: a bigger id cannot exist, and cannot even be bound to a query
# (it raised OverflowError, a 500, until the fuzzer found it).
MAX_ID = 2**63 - 1
#: A row id as a request may give it.
Id = Annotated[int, Field(ge=1, le=MAX_ID)]

Kind = Literal[
    "pdf", "epub", "perplexity", "markdown", "text", "chatgpt", "claude",
    "docx", "odt", "pptx", "odp", "xlsx", "ods", "image", "web", "note",
]  # fmt: skip
KINDS: tuple[Kind, ...] = get_args(Kind)
#: Office kinds: a page's label, when it has one, is its whole citation ("slide 14 · Results",
#: "sheet Results, rows 12–40", "Background, ¶ 12–30"); formats/office/.
OFFICE_KINDS: tuple[Kind, ...] = ("docx", "odt", "pptx", "odp", "xlsx", "ods")
#: Kinds whose pages are the turns of a conversation, with the web sources each turn cites.
TURN_KINDS: tuple[Kind, ...] = ("perplexity", "chatgpt", "claude")
#: Kinds whose label, when a page has one, is its whole citation: Office files and saved web
#: pages ("The Four Golden Signals, ¶ 3–7": formats/web.py) and the user's notes ("your note
#: on p. 45": storage/notes.py).
LABELLED_KINDS: tuple[Kind, ...] = (*OFFICE_KINDS, "web", "note")
#: Where a page's text came from.
PageSource = Literal["text_layer", "ocr", "markdown", "epub", "text", "office", "web"]
#: Where a document came from (``documents.origin``, generated: storage/schema.py ORIGIN_SQL).
Origin = Literal["upload", "folder", "chatgpt", "claude", "perplexity", "zotero", "web"]
ORIGINS: tuple[Origin, ...] = get_args(Origin)
#: searchable: its chunks are written (BM25 and the exact leg find it), its vectors are being
#: made; ready: all of it is in. Search shows these two only.
DocumentStatus = Literal["queued", "processing", "searchable", "ready", "failed"]
VISIBLE: tuple[DocumentStatus, ...] = ("searchable", "ready")
#: ``f"d.status {VISIBLE_SQL}"``: the documents a search may return.
VISIBLE_SQL = f"IN ({', '.join(repr(s) for s in VISIBLE)})"
JobStatus = Literal["queued", "running", "done", "failed"]
#: Who may read a document: the whole team, or only its owner (storage/access.py).
Visibility = Literal["team", "private"]


#: What one citable unit of each kind is called: a page, a section or a turn.
UNITS: dict[Kind, str] = {
    "pdf": "p.",
    "epub": "section",
    "markdown": "section",
    "perplexity": "turn",
    "text": "part",
    "chatgpt": "turn",
    "claude": "turn",
    "docx": "p.",  # as Word last laid it out; else a section, labelled
    "odt": "p.",
    "pptx": "slide",
    "odp": "slide",
    "xlsx": "sheet",
    "ods": "sheet",
    "image": "p.",  # a frame of the file: "p. 2" of a two-page TIFF scan
    "web": "section",  # a saved web page: labelled "The Four Golden Signals, ¶ 3–7"
    "note": "p.",  # the user's note, labelled "your note on p. 45" (storage/notes.py)
}


def place(kind: str, page: int, label: str | None = None) -> str:
    """How a citation names a unit of a document: "p. 12", "section 3", "turn 2"; a PDF page
    whose printed label differs from its position in the file, "p. 166 (PDF p. 188)".

    Every citation the CLI, ``/v1``, MCP and the prompts print goes through here; links keep
    the physical page (``#page=188``). An Office page's label is its whole citation."""
    unit = UNITS.get(kind, "p.")  # type: ignore[call-overload]
    label = printed_label(page, label)
    if label is not None and kind in LABELLED_KINDS:
        return label
    if label is None:
        return f"{unit} {page}"
    return f"{unit} {label} (PDF {unit} {page})"


def printed_label(page: int, label: str | None) -> str | None:
    """The page's printed label (PDF /PageLabels), or None when there is none or it merely
    repeats the page's position in the file."""
    label = " ".join(label.split()) if label else ""
    return label if label and label != str(page) else None


@dataclass(frozen=True)
class Page:
    """One citable unit: a PDF page, an EPUB section, a Perplexity turn, a markdown section,
    a Word page or section, a slide, the rows of a sheet, a frame of an image file."""

    number: int  # 1-based
    text: str
    heading_path: str = ""  # "Chapter 3 > The Voyage"
    source: PageSource = "text_layer"
    meta: dict[str, Any] = field(default_factory=dict)  # e.g. a Perplexity turn's query and URLs
    label: str | None = None  # the printed page number (PDF /PageLabels): "xii", "A-3";
    # for Office kinds the citation itself: "slide 14 · Results"


@dataclass(frozen=True)
class Chunk:
    """A passage stored in ``page_chunks``; never spans two pages."""

    page: int
    ordinal: int  # position within the page, from 0
    heading_path: str
    text: str
    content_hash: str  # sha256 of the text
    source: PageSource
