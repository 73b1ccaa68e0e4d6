"""The web pages a thread cites, added to the library in one action (``quire add --sources-of``,
``POST /api/documents/{id}/sources/add``, the document page's button): each address through
web/links.py, each with its own outcome — added, updated, unchanged, or refused and why.

    for page in cited_pages(db, thread_id):
        outcome = add_source(db, settings, page, fetcher)   # never raises for one page

The addresses come from the pages' metadata (storage/web_sources.py: a turn's ``sources``, else
its ``urls``), in the order the thread lists them, each address once (as normalised for the
source key, so two spellings of one page are one).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

from quire.config import Settings
from quire.errors import ErrorBody, InputError, QuireError
from quire.storage import chunks, documents
from quire.storage.db import Database
from quire.storage.web_sources import turn_sources
from quire.web.fetch import Fetcher
from quire.web.links import add_link, normalise_url

OutcomeStatus = Literal["added", "updated", "unchanged", "refused"]


@dataclass(frozen=True)
class CitedPage:
    """One web page a thread cites: its place in the thread's list, address and title."""

    n: int
    url: str
    title: str | None


@dataclass(frozen=True)
class SourceOutcome:
    """What adding one cited page did."""

    n: int
    url: str
    title: str | None
    status: OutcomeStatus
    document_id: int | None = None
    job_id: int | None = None
    error: ErrorBody | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "url": self.url,
            "title": self.title,
            "status": self.status,
            "document_id": self.document_id,
            "job_id": self.job_id,
            "error": self.error.model_dump() if self.error else None,
        }


def cited_pages(db: Database, document_id: int) -> list[CitedPage]:
    """The web pages ``document_id`` cites, each once, in the thread's order; InputError when
    it cites none."""
    with db.read() as conn:
        doc = documents.get_document(conn, document_id)  # NotFound, also for hidden ones
        metas = chunks.page_metadata(conn, document_id)
    found: dict[str, CitedPage] = {}
    for meta in metas:
        for source in turn_sources(meta).values():
            try:
                key = normalise_url(source.url)
            except QuireError:
                key = source.url  # refused when added, with the reason
            if key not in found:
                found[key] = CitedPage(len(found) + 1, source.url, source.title)
    if not found:
        why = (
            "it is not read yet"
            if doc["status"] not in ("searchable", "ready")
            else "its pages list no web sources"
        )
        raise InputError(f"document {document_id} cites no web pages ({why})")
    return list(found.values())


def add_source(
    db: Database, settings: Settings, page: CitedPage, fetcher: Fetcher
) -> SourceOutcome:
    """Add one cited page; a refusal is the outcome, not an exception."""
    try:
        added = add_link(db, settings, page.url, fetcher=fetcher, title=page.title)
    except QuireError as exc:
        return SourceOutcome(page.n, page.url, page.title, "refused", error=exc.body())
    job = added.intake.job_id if added.status != "unchanged" else None
    return SourceOutcome(page.n, page.url, page.title, added.status, added.intake.document_id, job)


def counts(outcomes: list[SourceOutcome]) -> dict[str, int]:
    """How many of each status (every status present, zero or not)."""
    seen = Counter(o.status for o in outcomes)
    return {s: seen.get(s, 0) for s in ("added", "updated", "unchanged", "refused")}
