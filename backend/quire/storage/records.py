"""What the library stores, as plain values: the kinds of document, a page and a chunk.

Ingest produces them, storage writes them, retrieval reads them back; they live here, at the
bottom, so that storage imports nothing above it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, Field, computed_field

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


def place(kind: str, page: int, label: str | None = None, heading_path: str = "") -> str:
    """How Quire names a unit of a document, everywhere it names one (docs/design/places.md).

        place("pdf", 188, "166")                      # "p. 166 (PDF p. 188)"
        place("pdf", 12)                              # "p. 12"
        place("epub", 62, None, "Chapter 60 > The Return")  # "Chapter 60 · The Return"
        place("epub", 62)                             # "section 62"
        place("perplexity", 2)                        # "turn 2"
        place("pptx", 14, "slide 14 · Results")       # "slide 14 · Results"
        place("web", 3, None, "Setup > Install")      # "Install"

    The web app, the CLI, the exports, ``/v1``, MCP and the prompts all show this string; links
    keep the physical page (``#page=188``). An Office or web page's label is its whole name."""
    unit = UNITS.get(kind, "p.")  # type: ignore[call-overload]
    label = printed_label(page, label)
    if label is not None and kind in LABELLED_KINDS:
        return label
    if kind in HEADED_KINDS and heading_path.strip():
        return _heading(heading_path)
    if label is None:
        return f"{unit} {page}"
    return f"{unit} {label} (PDF {unit} {page})"


#: Kinds named by their heading when a unit has one (a chapter, a section of a web page).
HEADED_KINDS: tuple[Kind, ...] = ("epub", "markdown", "text", "web")
#: Kinds whose heading path is not part of their place, and is shown beside it as the section.
SECTIONED_KINDS: tuple[Kind, ...] = ("pdf", "image", *TURN_KINDS)
# "Chapter 60", "CHAPTER XII", "Part II", "Book 3.", "12": a number with no title of its own.
_BARE_NUMBER = re.compile(
    r"(?:(?:chapter|chap\.|part|book|section|letter|appendix|act|canto|volume|vol\.)\s+)?"
    r"(?:\d+|[ivxlcdm]+|[a-z])\.?",
    re.IGNORECASE,
)
MAX_PLACE = 90


def _heading(heading_path: str) -> str:
    """A heading path's innermost heading, with the chapter number above it when that heading
    is a title under a bare number ("Chapter 60 > The Return" → "Chapter 60 · The Return")."""
    parts = [" ".join(p.split()) for p in heading_path.split(" > ") if p.strip()]
    name = parts[-1]
    if len(parts) > 1 and _BARE_NUMBER.fullmatch(parts[-2]) and not _BARE_NUMBER.fullmatch(name):
        name = f"{parts[-2]} · {name}"
    return name if len(name) <= MAX_PLACE else name[: MAX_PLACE - 1].rstrip() + "…"


def section(kind: str, heading_path: str) -> str:
    """The section a place is in, when its place does not already name it: a PDF page's or a
    turn's heading path ("Graphs > NetworkX"); empty for the kinds named by their heading."""
    return heading_path if kind in SECTIONED_KINDS else ""


def printed_label(page: int, label: str | None) -> str | None:
    """The page's printed label (PDF /PageLabels), or None when there is none or it merely
    repeats the page's position in the file."""
    label = " ".join(label.split()) if label else ""
    return label if label and label != str(page) else None


class Placed(BaseModel):
    """A model that names a page: it carries the page's ``place`` and ``section`` as
    :func:`place` and :func:`section` make them, computed (a stored answer read back gets them
    too) and in the OpenAPI schema, so that no client formats a location itself."""

    kind: Kind
    page: int
    page_label: str | None = None
    heading_path: str

    @computed_field(  # type: ignore[prop-decorator]
        description='Where it is, as Quire names it: "p. 166 (PDF p. 188)", "Chapter 60 · The '
        'Return", "turn 2", "slide 14 · Results" (docs/design/places.md).'
    )
    @property
    def place(self) -> str:
        return place(self.kind, self.page, self.page_label, self.heading_path)

    @computed_field(  # type: ignore[prop-decorator]
        description="The section the place is in when the place does not name it (a PDF page's "
        "or a turn's heading path); empty otherwise."
    )
    @property
    def section(self) -> str:
        return section(self.kind, self.heading_path)


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
