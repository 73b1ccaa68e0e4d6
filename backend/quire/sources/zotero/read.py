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
from pathlib import Path

from quire.errors import InputError
from quire.sources.zotero.exports import read_bbt_json, read_bibtex, read_csl_json
from quire.sources.zotero.items import MAX_EXPORT_BYTES, Attachment, Item, Library, ZoteroUnreadable
from quire.sources.zotero.sqlite import read_sqlite

__all__ = ["Attachment", "Item", "Library", "ZoteroUnreadable", "read_library"]


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
            return read_bbt_json(path, data)
        if isinstance(data, list):
            return read_csl_json(path, data)
        raise ZoteroUnreadable(
            f"{path.name}: neither Better BibTeX JSON (an object with items) nor CSL JSON (a list)"
        )
    if "@" in text:
        return read_bibtex(path, text)
    raise ZoteroUnreadable(
        f"{path.name}: not a Zotero database, Better BibTeX JSON, CSL JSON or BibTeX file"
    )
