"""Reading Zotero exports: Better BibTeX JSON, CSL JSON (no files) and BibTeX/BibLaTeX with
``file`` fields."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from quire.sources.zotero.items import (
    Attachment,
    Item,
    Library,
    ZoteroUnreadable,
    cite_fields,
    local_path,
    person_name,
    unreadable_reason,
)


# -- Better BibTeX JSON -----------------------------------------------------------------------
def read_bbt_json(path: Path, data: dict[str, Any]) -> Library:
    names = _bbt_collections(data.get("collections"))
    items: list[Item] = []
    for n, raw in enumerate(data["items"], start=1):
        if (
            not isinstance(raw, dict)
            or raw.get("deleted")
            or raw.get("itemType")
            in (
                "note",
                "attachment",
                "annotation",
            )
        ):
            continue
        creators = [
            (
                person_name(c.get("firstName"), c.get("lastName") or c.get("name")),
                str(c.get("creatorType") or "author"),
            )
            for c in raw.get("creators") or []
            if isinstance(c, dict)
        ]
        title = str(raw.get("title") or "").strip() or f"item {n}"
        zotero_key = raw.get("itemKey") or _uri_key(raw.get("uri"))
        key = f"item:{zotero_key}" if zotero_key else f"bib:{raw.get('citationKey') or n}"
        tags = sorted(
            {
                str(t.get("tag") if isinstance(t, dict) else t)
                for t in raw.get("tags") or []
                if (t.get("tag") if isinstance(t, dict) else t)
            }
        )
        attachments = []
        for a in raw.get("attachments") or []:
            if not isinstance(a, dict) or not a.get("path"):
                continue
            file = local_path(str(a["path"]), path.parent)
            ctype = a.get("contentType") or a.get("mimeType")
            attachments.append(
                Attachment(
                    _uri_key(a.get("uri")) or file.name,
                    str(a.get("title") or file.name),
                    file,
                    ctype,
                    unreadable_reason(file, ctype),
                )
            )
        items.append(
            Item(
                key=key,
                label=title[:80],
                cite=cite_fields(str(raw.get("itemType") or "document"), title, creators, raw),
                collections=sorted({names[c] for c in raw.get("collections") or [] if c in names}),
                tags=tags,
                attachments=attachments,
            )
        )
    return Library(path, "bbt-json", items)


def _uri_key(uri: Any) -> str | None:
    """The item key that ends a Zotero URI (…/items/SJGFJW9F)."""
    match = re.search(r"/items/([A-Z0-9]{8})$", uri) if isinstance(uri, str) else None
    return match.group(1) if match else None


def _bbt_collections(raw: Any) -> dict[str, str]:
    """BBT JSON's collections (key -> {name, parent}) as key -> path."""
    if not isinstance(raw, dict):
        return {}
    info = {
        k: (str(v.get("name") or k), v.get("parent")) for k, v in raw.items() if isinstance(v, dict)
    }
    out = {}
    for key in info:
        parts, cur, seen = [], key, set()
        while cur in info and cur not in seen:
            seen.add(cur)
            name, cur = info[cur]
            parts.append(name.replace("/", "∕"))
        out[key] = "/".join(reversed(parts))
    return out


# -- CSL JSON ---------------------------------------------------------------------------------
def read_csl_json(path: Path, data: list[Any]) -> Library:
    items: list[Item] = []
    for n, raw in enumerate(data, start=1):
        if not isinstance(raw, dict):
            continue
        creators = [
            (person_name(a.get("given"), a.get("family") or a.get("literal")), "author")
            for a in raw.get("author") or []
            if isinstance(a, dict)
        ]
        title = str(raw.get("title") or "").strip() or f"item {n}"
        parts = (raw.get("issued") or {}).get("date-parts") or [[]]
        year = parts[0][0] if parts and parts[0] else None
        fields = {
            "DOI": raw.get("DOI"),
            "url": raw.get("URL"),
            "publicationTitle": raw.get("container-title"),
            "publisher": raw.get("publisher"),
            "date": str(year) if year else None,
            "citationKey": raw.get("citation-key") or raw.get("id"),
        }
        key = str(raw.get("citation-key") or raw.get("id") or f"csl{n}")
        items.append(
            Item(
                f"bib:{key}",
                title[:80],
                cite_fields(str(raw.get("type") or "document"), title, creators, fields),
            )
        )
    return Library(
        path,
        "csl-json",
        items,
        note="CSL JSON names no files: export Better BibTeX JSON, or BibTeX with files, to "
        "import the attachments",
    )


# -- BibTeX / BibLaTeX ------------------------------------------------------------------------
#: A field the parser swallowed into the one before it, when a comma is missing between them
#: (``langid = {english}`` newline ``file = {…}``, Zotero's own export).
_SWALLOWED = re.compile(r"^\{([^{}]*)\}\s*\n\s*([A-Za-z][\w-]*)\s*=\s*\{(.*)\}\s*$", re.S)
_VERBATIM = frozenset(("file", "url", "doi"))
_BIB_FIELDS = {
    "doi": "DOI",
    "url": "url",
    "journaltitle": "publicationTitle",
    "journal": "publicationTitle",
    "booktitle": "bookTitle",
    "publisher": "publisher",
    "volume": "volume",
    "number": "issue",
    "pages": "pages",
    "isbn": "ISBN",
}


def _bib_fields(entry: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, f in entry.fields_dict.items():
        key, value = name.lower(), str(f.value)
        while match := _SWALLOWED.match(value):
            out[key] = match.group(1)
            key, value = match.group(2).lower(), match.group(3)
        out[key] = value
    return out


def read_bibtex(path: Path, text: str) -> Library:
    from bibtexparser.entrypoint import parse_string
    from pylatexenc.latex2text import LatexNodes2Text

    library = parse_string(text)
    if not library.entries:
        raise ZoteroUnreadable(f"{path.name}: no BibTeX entry could be read")
    decode = LatexNodes2Text(math_mode="verbatim", strict_latex_spaces=True)

    def plain(value: str) -> str:
        try:
            return " ".join(decode.latex_to_text(value).split())
        except Exception:  # pylatexenc raises on some malformed input: keep it as written
            return " ".join(value.split())

    items: list[Item] = []
    for entry in library.entries:
        raw = _bib_fields(entry)
        fields = {k: (v if k in _VERBATIM else plain(v)) for k, v in raw.items()}
        creators = [
            (" ".join(name.split()), role)
            for role, bib in (("author", "author"), ("editor", "editor"))
            for name in re.split(r"\s+and\s+", fields.get(bib, ""))
            if name.strip()
        ]
        zotero = {_BIB_FIELDS[k]: v for k, v in fields.items() if k in _BIB_FIELDS}
        zotero["date"] = fields.get("date") or fields.get("year") or ""
        zotero["citationKey"] = entry.key
        title = fields.get("title") or entry.key
        attachments = [_bib_file(piece, path.parent) for piece in _split_files(raw.get("file", ""))]
        tags = sorted({t.strip() for t in fields.get("keywords", "").split(",") if t.strip()})
        items.append(
            Item(
                key=f"bib:{entry.key}",
                label=title[:80],
                cite=cite_fields(entry.entry_type.lower(), title, creators, zotero),
                tags=tags,
                attachments=attachments,
            )
        )
    return Library(path, "bibtex", items)


def _split_files(value: str) -> Iterator[str]:
    """The attachments of a ``file`` field, split on ``;`` not escaped as ``\\;``."""
    for piece in re.split(r"(?<!\\);", value):
        if piece.strip():
            yield piece.strip().replace("\\;", ";")


def _bib_file(piece: str, relative_to: Path) -> Attachment:
    """One attachment: Zotero's ``title:path:mime`` or Better BibTeX's bare path."""
    piece = piece.replace("\\\\", "\\")
    title, raw, ctype = "", piece, None
    match = re.fullmatch(r"(.*?)(?<!\\):(.+)(?<!\\):([\w.+-]+/[\w.+-]+)", piece)
    if match:
        title, raw, ctype = match.group(1), match.group(2), match.group(3)
    raw = raw.replace("\\:", ":")
    file = local_path(raw, relative_to)
    return Attachment(file.name, title or file.name, file, ctype, unreadable_reason(file, ctype))
