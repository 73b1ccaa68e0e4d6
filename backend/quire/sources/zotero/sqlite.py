"""Reading ``zotero.sqlite`` (with ``storage/``): copied first, with a journal or WAL beside it,
and only the copy opened (Zotero holds its database locked while it runs, and a copy taken
mid-write is rolled back to its last commit when opened). Items in the trash are not read."""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from pathlib import Path

from quire.errors import InputError
from quire.sources.zotero.items import (
    ANNOTATION_TYPES,
    Annotation,
    Attachment,
    Item,
    Library,
    ZoteroUnreadable,
    cite_fields,
    local_path,
    person_name,
    unreadable_reason,
)


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
        creators.setdefault(item_id, []).append((person_name(first, last), role))
    tags: dict[int, list[str]] = {}
    if {"itemTags", "tags"} <= tables:
        for item_id, name in conn.execute(
            "SELECT it.itemID, t.name FROM itemTags it JOIN tags t USING (tagID) ORDER BY t.name"
        ):
            tags.setdefault(item_id, []).append(name)
    collections = _sqlite_collections(conn, tables)
    keys = _bbt_keys(data_dir)

    by_id = {r[0]: (r[1], r[2]) for r in rows}
    notes = _annotations(conn, tables, deleted, tags)
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
        problem = problem or unreadable_reason(path, content_type)
        attachments.setdefault(parent if parent is not None else att_id, []).append(
            Attachment(
                att_key,
                title or (path.name if path else att_key),
                path,
                content_type,
                problem,
                notes.get(att_id, []),
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
                cite=cite_fields(item_type, title, creators.get(item_id, []), f),
                collections=sorted(collections.get(item_id, [])),
                tags=tags.get(item_id, []),
                attachments=attachments.get(item_id, []),
            )
        )
    return items


def _annotations(
    conn: sqlite3.Connection, tables: set[str], deleted: str, tags: dict[int, list[str]]
) -> dict[int, list[Annotation]]:
    """Each attachment's annotations (Zotero 6/7 ``itemAnnotations``), in reading order;
    trashed ones left out. A position that is not JSON leaves the page to the page label."""
    if "itemAnnotations" not in tables:
        return {}
    out: dict[int, list[Annotation]] = {}
    for item_id, key, parent, kind, body, comment, color, label, sort_index, raw in conn.execute(
        "SELECT a.itemID, i.key, a.parentItemID, a.type, a.text, a.comment, a.color, "
        "a.pageLabel, a.sortIndex, a.position FROM itemAnnotations a JOIN items i USING (itemID) "
        f"WHERE a.itemID NOT IN ({deleted}) ORDER BY a.parentItemID, a.sortIndex, a.itemID"
    ):
        try:
            position = json.loads(raw or "{}")
        except ValueError:
            position = {}
        index = position.get("pageIndex") if isinstance(position, dict) else None
        rects = position.get("rects") if isinstance(position, dict) else None
        out.setdefault(parent, []).append(
            Annotation(
                key=str(key),
                type=ANNOTATION_TYPES.get(int(kind or 0), "note"),
                text=str(body or ""),
                comment=str(comment or ""),
                color=color or None,
                page_label=label or None,
                page=index + 1 if isinstance(index, int) and index >= 0 else None,
                rects=[list(map(float, r)) for r in rects or [] if isinstance(r, list)],
                sort_index=str(sort_index or ""),
                tags=tags.get(item_id, []),
            )
        )
    return out


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
    return local_path(raw, data_dir), None
