"""Perplexity exports into the library: one synced thread, or a folder of existing exports.

A thread's document is named by the source key ``perplexity:<slug>``, so a new version of the
thread (a re-sync, or an import of a newer export of it) replaces that document's chunks; only
changed chunks are embedded again (storage/documents.py). Perplexity's own "Export → Markdown"
carries no slug: such a file is keyed by its path, as ``quire ingest`` does.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from quire.config import Settings
from quire.errors import QuireError
from quire.formats.detect import decode_text, detect_kind
from quire.formats.perplexity_md import parse_perplexity_markdown
from quire.ingest.intake import Intake, add_file
from quire.storage.db import Database

log = logging.getLogger(__name__)


def source_key(slug: str) -> str:
    return f"perplexity:{slug}"


def add_thread(settings: Settings, db: Database, path: Path, slug: str | None) -> Intake:
    """Hand one export to the library (queues its ingest job unless nothing changed)."""
    return add_file(
        db,
        settings.files_dir,
        path,
        path.name,
        max_bytes=settings.max_upload_bytes,
        source_key=source_key(slug) if slug else f"path:{path.resolve()}",
    )


@dataclass
class ImportReport:
    intakes: list[tuple[Path, Intake]] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)  # not a Perplexity export
    failed: list[tuple[Path, str]] = field(default_factory=list)

    @property
    def job_ids(self) -> list[int]:
        return [i.job_id for _, i in self.intakes if i.job_id is not None]


def import_folder(
    settings: Settings,
    db: Database,
    folder: Path,
    on_file: Callable[[Path], None] | None = None,
) -> ImportReport:
    """Add every Perplexity export (either markdown layout) under ``folder``; other files are
    skipped, hidden ones not looked at."""
    report = ImportReport()
    files = sorted(
        p
        for p in folder.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )
    for path in files:
        if on_file is not None:
            on_file(path)
        try:
            if detect_kind(path) != "perplexity":
                report.skipped.append((path, "not a Perplexity export"))
                continue
            meta = parse_perplexity_markdown(decode_text(path.read_bytes())).metadata
            report.intakes.append((path, add_thread(settings, db, path, meta.get("slug"))))
        except QuireError as exc:
            if exc.code == "unsupported_type":
                report.skipped.append((path, exc.message))
            else:
                report.failed.append((path, exc.message))
        except OSError as exc:
            report.failed.append((path, str(exc)))
    return report
