"""Reading a Zotero library: its ``zotero.sqlite`` (with ``storage/``), a Better BibTeX JSON
export, a BibTeX/BibLaTeX export with ``file`` fields, or CSL JSON. Formats in
../shared/data/docs/CHAT-EXPORT-FORMATS.md §3.

    library = read_library(Path("~/Zotero").expanduser())
    library.items[0].cite      # {"title": …, "authors": ["Schaeffer, Nathanaël"], "year": 2013, …}
    library.items[0].attachments[0].path

The database is copied first (with a journal or WAL beside it) and only the copy is opened:
Zotero holds its database locked while it runs, and a copy taken mid-write is rolled back to
its last commit when opened. Only PDF and EPUB attachments are files Quire reads; the others
are listed with the reason they are left out. Items in the trash are not read.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PureWindowsPath
from typing import Any, Literal

from quire.errors import CorruptFile, InputError

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


@dataclass(frozen=True)
class Attachment:
    """One file of an item; ``problem`` says why it cannot be read (then ``path`` may be None)."""

    key: str
    title: str
    path: Path | None
    content_type: str | None = None
    problem: str | None = None


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


def read_library(path: Path, *, base_dir: Path | None = None) -> Library:
    """The library at ``path`` (a data directory, its zotero.sqlite, or an export file).

    ``base_dir``: Zotero's base directory for linked files stored relative to it
    (``attachments:…``). Raises :class:`ZoteroUnreadable` or InputError."""
    path = path.expanduser().resolve()
    if path.is_dir():
        db = path / "zotero.sqlite"
        if not db.is_file():
            raise InputError(f"{path}: no zotero.sqlite here (give a Zotero data directory)")
        return read_sqlite(db, base_dir=base_dir)
    if not path.is_file():
        raise InputError(f"{path}: no such file or directory")
    with path.open("rb") as f:
        head = f.read(16)
    if head.startswith(b"SQLite format 3"):
        return read_sqlite(path, base_dir=base_dir)
    if path.stat().st_size > MAX_EXPORT_BYTES:
        raise InputError(f"{path.name}: over {MAX_EXPORT_BYTES >> 20} MB, not read")
    text = path.read_bytes().decode("utf-8-sig", errors="replace")
    if path.suffix.lower() == ".json" or text.lstrip()[:1] in ("{", "["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ZoteroUnreadable(f"{path.name}: not JSON ({exc})") from exc
        if isinstance(data, dict) and isinstance(data.get("items"), list):
            return _bbt_json(path, data)
        if isinstance(data, list):
            return _csl_json(path, data)
        raise ZoteroUnreadable(
            f"{path.name}: neither Better BibTeX JSON (an object with items) nor CSL JSON (a list)"
        )
    if "@" in text:
        return _bibtex(path, text)
    raise ZoteroUnreadable(
        f"{path.name}: not a Zotero database, Better BibTeX JSON, CSL JSON or BibTeX file"
    )


# -- names and dates --------------------------------------------------------------------------
def _name(first: str | None, last: str | None) -> str:
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


def _cite(
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


def _readable(path: Path | None, content_type: str | None) -> str | None:
    """Why a file attachment is not one Quire reads (None: it is)."""
    if path is None:
        return "no file"
    if content_type in READABLE or path.suffix.lower() in READABLE.values():
        return None
    return f"not a PDF or EPUB ({content_type or path.suffix or 'unknown type'})"


def _local(raw: str, relative_to: Path) -> Path:
    """A path as an export writes it: ``~``, Windows separators, relative to the export."""
    if re.match(r"^[A-Za-z]:[\\/]", raw) or "\\" in raw:
        raw = "/".join(PureWindowsPath(raw).parts).replace("\\", "/")
        if re.match(r"^[A-Za-z]:", raw):
            return Path(raw)  # a Windows drive: not on this machine, reported missing
    path = Path(raw).expanduser()
    return path if path.is_absolute() else relative_to / path


# -- zotero.sqlite ----------------------------------------------------------------------------
def read_sqlite(db_path: Path, *, base_dir: Path | None = None) -> Library:
    """Read a copy of ``zotero.sqlite`` (the live file is never opened)."""
    with tempfile.TemporaryDirectory(prefix="quire-zotero-") as tmp:
        copy = Path(tmp) / "zotero.sqlite"
        try:
            shutil.copyfile(db_path, copy)
            for suffix in ("-journal", "-wal"):
                side = db_path.with_name(db_path.name + suffix)
                if side.is_file():
                    shutil.copyfile(side, copy.with_name(copy.name + suffix))
        except OSError as exc:
            raise InputError(f"{db_path}: cannot be read ({exc.strerror or exc})") from exc
        try:
            conn = sqlite3.connect(copy)
            try:
                items = _sqlite_items(conn, db_path.parent, base_dir)
            finally:
                conn.close()
        except sqlite3.DatabaseError as exc:
            raise ZoteroUnreadable(
                f"{db_path}: not a readable Zotero database ({exc}); Zotero keeps a backup, "
                "zotero.sqlite.bak, beside it"
            ) from exc
    return Library(db_path.parent, "sqlite", items, complete=True)


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _sqlite_items(conn: sqlite3.Connection, data_dir: Path, base_dir: Path | None) -> list[Item]:
    tables = _tables(conn)
    need = {"items", "itemData", "itemDataValues", "itemAttachments", "creators", "itemCreators"}
    if not need <= tables:
        raise sqlite3.DatabaseError(f"no {', '.join(sorted(need - tables))} table")
    types = "itemTypesCombined" if "itemTypesCombined" in tables else "itemTypes"
    fields_t = "fieldsCombined" if "fieldsCombined" in tables else "fields"
    deleted = (
        "SELECT itemID FROM deletedItems" if "deletedItems" in tables else "SELECT NULL LIMIT 0"
    )
    rows = conn.execute(
        f"SELECT i.itemID, i.key, t.typeName FROM items i JOIN {types} t USING (itemTypeID) "
        f"WHERE t.typeName NOT IN ('note', 'annotation') AND i.itemID NOT IN ({deleted}) "
        "ORDER BY i.itemID"
    ).fetchall()
    fields: dict[int, dict[str, str]] = {}
    for item_id, name, value in conn.execute(
        f"SELECT d.itemID, f.fieldName, v.value FROM itemData d "
        f"JOIN {fields_t} f USING (fieldID) JOIN itemDataValues v USING (valueID)"
    ):
        fields.setdefault(item_id, {})[name] = value
    creators: dict[int, list[tuple[str, str]]] = {}
    for item_id, first, last, role in conn.execute(
        "SELECT ic.itemID, c.firstName, c.lastName, ct.creatorType FROM itemCreators ic "
        "JOIN creators c USING (creatorID) JOIN creatorTypes ct USING (creatorTypeID) "
        "ORDER BY ic.itemID, ic.orderIndex"
    ):
        creators.setdefault(item_id, []).append((_name(first, last), role))
    tags: dict[int, list[str]] = {}
    if {"itemTags", "tags"} <= tables:
        for item_id, name in conn.execute(
            "SELECT it.itemID, t.name FROM itemTags it JOIN tags t USING (tagID) ORDER BY t.name"
        ):
            tags.setdefault(item_id, []).append(name)
    collections = _sqlite_collections(conn, tables)
    keys = _bbt_keys(data_dir)

    by_id = {r[0]: (r[1], r[2]) for r in rows}
    attachments: dict[int, list[Attachment]] = {}
    standalone: list[int] = []
    for att_id, parent, link_mode, content_type, raw in conn.execute(
        "SELECT itemID, parentItemID, linkMode, contentType, path FROM itemAttachments"
    ):
        if att_id not in by_id:
            continue  # in the trash
        if parent is None:
            standalone.append(att_id)
        att_key = by_id[att_id][0]
        title = fields.get(att_id, {}).get("title", "")
        path, problem = _attachment_path(data_dir, base_dir, att_key, link_mode, raw)
        problem = problem or _readable(path, content_type)
        attachments.setdefault(parent if parent is not None else att_id, []).append(
            Attachment(
                att_key, title or (path.name if path else att_key), path, content_type, problem
            )
        )

    items: list[Item] = []
    for item_id, (key, item_type) in by_id.items():
        if item_type == "attachment" and item_id not in standalone:
            continue
        f = fields.get(item_id, {})
        if item_id in keys and "citationKey" not in f:
            f = {**f, "citationKey": keys[item_id]}
        title = f.get("title") or key
        items.append(
            Item(
                key=f"item:{key}",
                label=title[:80],
                cite=_cite(item_type, title, creators.get(item_id, []), f),
                collections=sorted(collections.get(item_id, [])),
                tags=tags.get(item_id, []),
                attachments=attachments.get(item_id, []),
            )
        )
    return items


def _sqlite_collections(conn: sqlite3.Connection, tables: set[str]) -> dict[int, list[str]]:
    """Each item's collections as paths ("Thesis/Methods"), trashed collections left out."""
    if not {"collections", "collectionItems"} <= tables:
        return {}
    gone: set[int] = set()
    if "deletedCollections" in tables:
        gone = {r[0] for r in conn.execute("SELECT collectionID FROM deletedCollections")}
    info = {
        r[0]: (r[1], r[2])
        for r in conn.execute(
            "SELECT collectionID, collectionName, parentCollectionID FROM collections"
        )
    }

    def path(cid: int) -> str | None:
        parts, seen = [], set()
        while cid is not None and cid in info and cid not in seen:
            if cid in gone:
                return None
            seen.add(cid)
            name, cid = info[cid]
            parts.append(name.replace("/", "∕"))
        return "/".join(reversed(parts))

    out: dict[int, list[str]] = {}
    for cid, item_id in conn.execute("SELECT collectionID, itemID FROM collectionItems"):
        p = path(cid)
        if p:
            out.setdefault(item_id, []).append(p)
    return out


def _bbt_keys(data_dir: Path) -> dict[int, str]:
    """Better BibTeX's citation keys (Zotero 6 keeps them in better-bibtex.sqlite)."""
    source = data_dir / "better-bibtex.sqlite"
    if not source.is_file():
        return {}
    with tempfile.TemporaryDirectory(prefix="quire-bbt-") as tmp:
        copy = Path(tmp) / source.name
        try:
            shutil.copyfile(source, copy)
            conn = sqlite3.connect(copy)
            try:
                return {
                    int(r[0]): str(r[1])
                    for r in conn.execute("SELECT itemID, citationKey FROM citationkey")
                }
            finally:
                conn.close()
        except (OSError, sqlite3.DatabaseError):
            return {}  # keys are a nicety: the items import without them


def _attachment_path(
    data_dir: Path, base_dir: Path | None, key: str, link_mode: int | None, raw: str | None
) -> tuple[Path | None, str | None]:
    """Where an attachment's file is (linkMode 0/1 stored, 2 linked, 3 a link only)."""
    if link_mode == 3 or not raw:
        return None, "a web link, no file"
    if raw.startswith("storage:"):
        return data_dir / "storage" / key / raw.removeprefix("storage:"), None
    if raw.startswith("attachments:"):
        if base_dir is None:
            return None, (
                "a linked file relative to Zotero's base directory: give it with --base-dir"
            )
        return base_dir.expanduser().absolute() / raw.removeprefix("attachments:"), None
    return _local(raw, data_dir), None


# -- Better BibTeX JSON -----------------------------------------------------------------------
def _bbt_json(path: Path, data: dict[str, Any]) -> Library:
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
                _name(c.get("firstName"), c.get("lastName") or c.get("name")),
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
            file = _local(str(a["path"]), path.parent)
            ctype = a.get("contentType") or a.get("mimeType")
            attachments.append(
                Attachment(
                    _uri_key(a.get("uri")) or file.name,
                    str(a.get("title") or file.name),
                    file,
                    ctype,
                    _readable(file, ctype),
                )
            )
        items.append(
            Item(
                key=key,
                label=title[:80],
                cite=_cite(str(raw.get("itemType") or "document"), title, creators, raw),
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
def _csl_json(path: Path, data: list[Any]) -> Library:
    items: list[Item] = []
    for n, raw in enumerate(data, start=1):
        if not isinstance(raw, dict):
            continue
        creators = [
            (_name(a.get("given"), a.get("family") or a.get("literal")), "author")
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
                _cite(str(raw.get("type") or "document"), title, creators, fields),
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


def _bibtex(path: Path, text: str) -> Library:
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
                cite=_cite(entry.entry_type.lower(), title, creators, zotero),
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
    file = _local(raw, relative_to)
    return Attachment(file.name, title or file.name, file, ctype, _readable(file, ctype))
