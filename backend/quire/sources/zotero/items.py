"""What a Zotero library holds for Quire: items with their citation fields, collections,
tags and attachments; names and dates as citations carry them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PureWindowsPath
from typing import Any, Literal

from quire.errors import CorruptFile

Format = Literal["sqlite", "bbt-json", "bibtex", "csl-json"]
#: Bigger exports than this are not parsed (a library of 100,000 items is ~200 MB of JSON).
MAX_EXPORT_BYTES = 512 << 20
READABLE = {"application/pdf": ".pdf", "application/epub+zip": ".epub"}
#: Zotero fields kept for citations, under the names documents.metadata uses.
FIELDS = {
    "DOI": "doi",
    "url": "url",
    "publicationTitle": "container",
    "bookTitle": "container",
    "proceedingsTitle": "container",
    "publisher": "publisher",
    "volume": "volume",
    "issue": "issue",
    "pages": "pages",
    "ISBN": "isbn",
    "date": "date",
}


class ZoteroUnreadable(CorruptFile):
    """The library or export cannot be read at all (corrupt, not Zotero's, unknown format)."""


#: Zotero's annotation types (itemAnnotations.type, Zotero 6/7).
ANNOTATION_TYPES = {1: "highlight", 2: "note", 3: "image", 4: "ink", 5: "underline", 6: "text"}


@dataclass(frozen=True)
class Annotation:
    """One annotation made in Zotero's reader on an attachment: ``key`` is its item key (what
    a re-import matches it by), ``page`` its 1-based page (``position.pageIndex`` + 1)."""

    key: str
    type: str
    text: str
    comment: str
    color: str | None
    page_label: str | None
    page: int | None
    rects: list[list[float]]
    sort_index: str
    tags: list[str]


@dataclass(frozen=True)
class Attachment:
    """One file of an item; ``problem`` says why it cannot be read (then ``path`` may be None);
    ``annotations``: those made on it in Zotero's reader (a database only)."""

    key: str
    title: str
    path: Path | None
    content_type: str | None = None
    problem: str | None = None
    annotations: list[Annotation] = field(default_factory=list)


@dataclass
class Item:
    """A Zotero item: ``key`` names it across imports (``item:<Zotero key>``, or
    ``bib:<citation key>`` for a BibTeX export); ``cite`` is what its citations carry."""

    key: str
    label: str
    cite: dict[str, Any]
    collections: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    attachments: list[Attachment] = field(default_factory=list)


@dataclass
class Library:
    location: Path
    format: Format
    items: list[Item]
    #: The whole library (a database), so that an item not in it has left it.
    complete: bool = False
    #: Why nothing of some items can be imported (CSL JSON has no files).
    note: str | None = None


# -- names and dates --------------------------------------------------------------------------
def person_name(first: str | None, last: str | None) -> str:
    """``Family, Given`` (the BibTeX order, unambiguous for "De Lellis"); a one-field name
    (an organisation) as it is."""
    first, last = (first or "").strip(), (last or "").strip()
    return f"{last}, {first}" if first and last else (last or first)


def _year(date: str | None) -> int | None:
    match = re.match(r"\s*(\d{4})", date or "")
    return int(match.group(1)) if match and match.group(1) != "0000" else None


def _display_date(date: str) -> str:
    """Zotero's multipart date "2013-03-00 03/2013" as "2013-03"."""
    head = date.split(" ", 1)[0]
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", head):
        parts = [p for p in head.split("-") if p not in ("00", "0000")]
        return "-".join(parts)
    return date.strip()


#: The rich-text markup Zotero allows in titles (``<i>Prouerbia</i>``, ``g<sub>1</sub>``).
_RICH = re.compile(r"</?(?:b|i|sub|sup|sc|span)(?:\s[^>]*)?>", re.I)


def cite_fields(
    item_type: str, title: str, creators: list[tuple[str, str]], fields: dict[str, Any]
) -> dict[str, Any]:
    """The citation fields of an item (only those present)."""
    authors = [n for n, role in creators if role == "author" and n]
    editors = [n for n, role in creators if role == "editor" and n]
    if not authors:  # a book with editors only, a film with a director: its first role
        authors = [n for n, role in creators if role != "editor" and n]
    cite: dict[str, Any] = {"item_type": item_type, "title": _RICH.sub("", title).strip()}
    if authors:
        cite["authors"] = authors
    if editors:
        cite["editors"] = editors
    for zotero, ours in FIELDS.items():
        value = fields.get(zotero)
        if isinstance(value, (str, int)) and str(value).strip() and ours not in cite:
            cite[ours] = str(value).strip()
    if "date" in cite:
        cite["year"] = _year(cite["date"])
        cite["date"] = _display_date(cite["date"])
        if cite["year"] is None:
            del cite["year"]
    key = fields.get("citationKey") or _extra_key(fields.get("extra"))
    if key:
        cite["citation_key"] = str(key).strip()
    return {k: v for k, v in cite.items() if v not in ("", None, [])}


def _extra_key(extra: Any) -> str | None:
    """A citation key pinned in Zotero's Extra field ("Citation Key: smith2020")."""
    if not isinstance(extra, str):
        return None
    match = re.search(r"^\s*Citation Key:\s*(\S+)\s*$", extra, re.M | re.I)
    return match.group(1) if match else None


def unreadable_reason(path: Path | None, content_type: str | None) -> str | None:
    """Why a file attachment is not one Quire reads (None: it is)."""
    if path is None:
        return "no file"
    if content_type in READABLE or path.suffix.lower() in READABLE.values():
        return None
    return f"not a PDF or EPUB ({content_type or path.suffix or 'unknown type'})"


def local_path(raw: str, relative_to: Path) -> Path:
    """A path as an export writes it: ``~``, Windows separators, relative to the export."""
    if re.match(r"^[A-Za-z]:[\\/]", raw) or "\\" in raw:
        raw = "/".join(PureWindowsPath(raw).parts).replace("\\", "/")
        if re.match(r"^[A-Za-z]:", raw):
            return Path(raw)  # a Windows drive: not on this machine, reported missing
    path = Path(raw).expanduser()
    return path if path.is_absolute() else relative_to / path
