"""ChatGPT and Claude exports into the library: one document per conversation, one page per turn.

Each conversation is a bulk record (ingest/bulk.py) keyed ``chatgpt:<conversation id>`` or
``claude:<uuid>``; its stored file (and content hash) is the conversation's own JSON, written
canonically (sorted keys). A newer export therefore updates only the conversations whose JSON
changed, and only their changed chunks are embedded again; importing the same export twice
writes nothing. A conversation that cannot be read is skipped and reported, the others go in.
Claude project documents become markdown documents of their own, keyed
``claude:project:<project uuid>:doc:<doc uuid>``, their metadata naming the project.

    summary = import_export(db, settings, embedder, Path("export.zip"), "chatgpt")
    summary.new, summary.updated, summary.unchanged, summary.skipped
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from quire.config import Settings
from quire.embed.base import Embedder
from quire.errors import CorruptFile, QuireError
from quire.formats.chat_export import NAMES, Source, parse, read_export
from quire.formats.claude import project_documents
from quire.formats.markdown import parse_markdown
from quire.ingest.bulk import BulkProgress, Record, ingest_records
from quire.storage import jobs, source_runs
from quire.storage.db import Database
from quire.storage.schema import utcnow

log = logging.getLogger(__name__)


@dataclass
class ImportSummary:
    """What one import did, by conversation (project documents counted apart)."""

    source: Source
    conversations: int = 0
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (conversation, why)
    turns: int = 0
    sources: int = 0
    project_docs: int = 0
    project_docs_changed: int = 0
    embedded: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "conversations": self.conversations,
            "new": self.new,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "skipped": [{"conversation": c, "reason": r} for c, r in self.skipped],
            "turns": self.turns,
            "sources": self.sources,
            "project_docs": self.project_docs,
            "project_docs_changed": self.project_docs_changed,
            "embedded": self.embedded,
        }


def canonical(item: Any) -> str:
    """The JSON a conversation is stored and hashed as (stable across re-serialised exports)."""
    return json.dumps(item, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _label(item: Any, n: int) -> str:
    if isinstance(item, dict):
        for key in ("title", "name", "conversation_id", "id", "uuid"):
            if isinstance(item.get(key), str) and item[key].strip():
                return str(item[key])[:80]
    return f"#{n}"


def conversation_records(
    items: list[Any], source: Source, summary: ImportSummary
) -> Iterator[Record]:
    """A record per readable conversation with at least one turn; the rest noted as skipped."""
    seen: set[str] = set()
    for n, item in enumerate(items, start=1):
        try:
            conv = parse(item, source)
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            summary.skipped.append((_label(item, n), str(exc) or type(exc).__name__))
            continue
        if not conv.pages:
            summary.skipped.append((_label(item, n), "no visible turns"))
            continue
        if conv.key in seen:
            summary.skipped.append((_label(item, n), "the same conversation twice in the export"))
            continue
        seen.add(conv.key)
        summary.conversations += 1
        summary.turns += len(conv.pages)
        summary.sources += sum(len(p.meta.get("sources") or []) for p in conv.pages)
        yield Record(
            key=conv.key,
            title=conv.title,
            text="",
            kind=source,
            meta=conv.meta,
            pages=tuple(conv.pages),
            stored=canonical(item),
            filename=f"{source}-{conv.meta['conversation_id']}.json",
        )


def project_records(projects: list[Any], summary: ImportSummary) -> Iterator[Record]:
    for project in projects:
        if not isinstance(project, dict):
            continue
        for key, title, content, meta in project_documents(project):
            summary.project_docs += 1
            yield Record(
                key=key,
                title=title,
                text="",
                kind="markdown",
                meta=meta,
                pages=tuple(parse_markdown(content).pages),
                stored=content,
                filename=title,
            )


def import_export(
    db: Database,
    settings: Settings,
    embedder: Embedder | None,
    path: Path,
    source: Source,
    *,
    progress: BulkProgress | None = None,
    location: str | None = None,
) -> ImportSummary:
    """Import a ChatGPT or Claude export (zip, conversations.json or its folder); see the module
    docstring. Without an embedder the chunks wait for a ``reembed`` job. The run is noted in
    ``source_runs`` under ``location`` (default: the export's path)."""
    started = utcnow()
    where = location or str(path.expanduser().resolve())
    try:
        export = read_export(path, source, max_unpacked_bytes=settings.max_unpacked_mb << 20)
    except QuireError as exc:
        with db.write() as conn:
            source_runs.record(conn, source, where, started, error=exc.message)
        raise
    summary = ImportSummary(source)
    records = list(conversation_records(export.conversations, source, summary))
    stats = ingest_records(db, settings, embedder, records, progress=progress)
    summary.new, summary.updated = stats.added, stats.updated
    summary.unchanged = stats.skipped + stats.resumed
    summary.embedded = stats.embedded
    for key, owner in stats.duplicates.items():
        summary.skipped.append((key, f"the same content is document {owner}"))
    docs = list(project_records(export.projects, summary))
    if docs:
        doc_stats = ingest_records(db, settings, embedder, docs)
        summary.project_docs_changed = doc_stats.added + doc_stats.updated
        summary.embedded += doc_stats.embedded
    with db.write() as conn:
        report = summary.as_dict()
        report["skipped"] = len(summary.skipped)
        source_runs.record(conn, source, where, started, summary=report)
    log.info(
        "%s import of %s: %d conversations, %d new, %d updated, %d unchanged, %d skipped",
        NAMES[source],
        path.name,
        summary.conversations,
        summary.new,
        summary.updated,
        summary.unchanged,
        len(summary.skipped),
    )
    return summary


def import_upload(
    db: Database, settings: Settings, path: Path, source: Source, filename: str | None = None
) -> tuple[ImportSummary, int | None]:
    """An uploaded export: stored at once (searchable by keyword), embedded by a ``reembed``
    job for the worker; returns the summary and that job (None when nothing changed)."""
    where = f"upload: {filename}" if filename else None
    summary = import_export(db, settings, None, path, source, location=where)
    if summary.conversations == 0 and summary.skipped:
        what, why = summary.skipped[0]
        raise CorruptFile(
            f"no conversation of the {NAMES[source]} export could be read ({what}: {why})",
            detail=summary.as_dict(),
        )
    job_id = None
    if summary.new or summary.updated or summary.project_docs_changed:
        with db.write() as conn:
            job_id = jobs.enqueue(conn, None, "reembed")
    return summary, job_id
