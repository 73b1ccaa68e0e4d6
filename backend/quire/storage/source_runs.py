"""The history of imports and watched-folder passes: one row per run of one source at one
location, the last ``KEEP`` of each kept. The Settings page lists the last run of each.

    with db.write() as conn:
        source_runs.record(conn, "zotero", "/home/me/Zotero", started, summary={"new": 3})
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, delete, func, insert, select, text

from quire.storage import access
from quire.storage.db import json_array_elements, json_text
from quire.storage.schema import source_runs, utcnow

#: Runs kept per (source, location): a watched folder makes one per change.
KEEP = 20
#: The error of a document whose file left its watched folder (sources/folder.py says it).
FOLDER_REMOVED = "removed from its watched folder"


def record(
    conn: Connection,
    source: str,
    location: str,
    started_at: datetime,
    *,
    summary: dict[str, Any] | None = None,
    error: str | None = None,
) -> None:
    """Note one finished run (``error``: it failed, and why); older runs beyond KEEP go."""
    conn.execute(
        insert(source_runs).values(
            source=source,
            location=location,
            started_at=started_at,
            finished_at=utcnow(),
            ok=error is None,
            summary=summary or {},
            error=error,
        )
    )
    keep = (
        select(source_runs.c.id)
        .where(source_runs.c.source == source, source_runs.c.location == location)
        .order_by(source_runs.c.id.desc())
        .limit(KEEP)
    )
    conn.execute(
        delete(source_runs).where(
            source_runs.c.source == source,
            source_runs.c.location == location,
            source_runs.c.id.not_in(keep),
        )
    )


def latest(conn: Connection, source: str | None = None) -> list[dict[str, Any]]:
    """The last run of each (source, location), newest first."""
    last = select(func.max(source_runs.c.id)).group_by(source_runs.c.source, source_runs.c.location)
    query = select(source_runs).where(source_runs.c.id.in_(last))
    if source is not None:
        query = query.where(source_runs.c.source == source)
    rows = conn.execute(query.order_by(source_runs.c.id.desc())).all()
    return [
        {
            "source": r.source,
            "location": r.location,
            "started_at": r.started_at,
            "finished_at": r.finished_at,
            "ok": bool(r.ok),
            "summary": r.summary,
            "error": r.error,
        }
        for r in rows
    ]


def library_sources(conn: Connection, watch_dirs: list[Path]) -> dict[str, Any]:
    """Where the library's documents came from: counts by origin, the watched folders (the
    configured ones and any that documents came from) with their last pass, the last import
    of each other source, and the Zotero collections and tags with their document counts."""
    # Counts are of the documents the reader may read (storage/access.py).
    readable, params = access.document_sql("documents")
    origins = [
        {"origin": r[0], "documents": int(r[1]), "chunks": int(r[2])}
        for r in conn.execute(
            text(
                "SELECT origin, count(*), coalesce(sum(chunk_count), 0) FROM documents "
                # Not the notes' index documents (storage/notes.py): notes are no source.
                f"WHERE kind <> 'note'{access.where(readable)} GROUP BY origin ORDER BY 2 DESC, 1"
            ),
            params,
        )
    ]
    runs = latest(conn)
    if not access.current().everything:
        # An uploaded export's run names its file, which may be someone's private one.
        runs = [r for r in runs if not str(r["location"]).startswith("upload:")]
    folder_runs = {r["location"]: r for r in runs if r["source"] == "folder"}
    counts = {
        str(r[0]): (int(r[1]), int(r[2]))
        for r in conn.execute(
            text(
                f"SELECT {json_text(conn, 'metadata', 'origin', 'folder')}, count(*), "
                "count(*) FILTER (WHERE status = 'failed' "
                "AND substr(coalesce(error, ''), 1, :n) = :removed) FROM documents "
                f"WHERE origin = 'folder'{access.where(readable)} GROUP BY 1"
            ),
            {"n": len(FOLDER_REMOVED), "removed": FOLDER_REMOVED, **params},
        )
        if r[0]
    }
    configured = [str(d) for d in watch_dirs]
    folders = []
    for path in dict.fromkeys([*configured, *sorted(counts), *sorted(folder_runs)]):
        docs, removed = counts.get(path, (0, 0))
        folders.append(
            {
                "path": path,
                "configured": path in configured,
                "exists": Path(path).is_dir(),
                "documents": docs,
                "removed": removed,
                "last_run": folder_runs.get(path),
            }
        )
    return {
        "origins": origins,
        "watched_folders": folders,
        "imports": [r for r in runs if r["source"] != "folder"],
        "collections": _facet(conn, "collections"),
        "tags": _facet(conn, "tags"),
    }


def _facet(conn: Connection, name: str) -> list[dict[str, Any]]:
    values = json_array_elements(conn, "j", "d.metadata", "origin", name)
    readable, params = access.document_sql("d")
    rows = conn.execute(
        text(
            f"SELECT j.value, count(DISTINCT d.id) FROM documents d, {values} "
            f"WHERE d.origin = 'zotero'{access.where(readable)} GROUP BY j.value ORDER BY 1"
        ),
        params,
    )
    return [{"name": str(r[0]), "documents": int(r[1])} for r in rows]
