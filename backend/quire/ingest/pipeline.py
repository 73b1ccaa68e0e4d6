"""One ingest job, stage by stage: extract (+ OCR) → chunk and store → embed → ready.

Every stage is idempotent, so a job resumed after a crash redoes at most the stage it was in:
chunks are replaced by content hash and only chunks without a vector are embedded.
Write transactions are short and never span extraction, OCR or embedding.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from quire.config import Settings
from quire.embed.base import Embedder
from quire.errors import NotFound, ResourceLimit
from quire.formats.types import Extracted
from quire.ingest import rendition
from quire.ingest.chunking import chunk_pages
from quire.ingest.isolate import extract_isolated
from quire.storage import chunks, jobs, note_sync, vectors
from quire.storage.db import Database
from quire.storage.documents import mark_embedded, original, record_extraction, set_status
from quire.storage.schema import documents
from quire.text.language import detect as detect_language
from quire.text.table_rows import embedding_text

log = logging.getLogger(__name__)

# Overall progress bands per stage (OCR's band is skipped when no page needs it).
BANDS = {"extract": (0.0, 0.3), "ocr": (0.3, 0.6), "chunk": (0.6, 0.65), "embed": (0.65, 1.0)}
REPORT_EVERY_S = 0.5


@dataclass
class JobContext:
    """What a running job needs: the DB, settings, the embedder and the job row."""

    db: Database
    settings: Settings
    embedder: Embedder
    job: jobs.Job
    owner: str | None = None
    started: float = field(default_factory=time.monotonic)
    detail: dict[str, Any] = field(default_factory=dict)
    _last_report: float = 0.0
    _last_stage: str = ""

    @property
    def deadline(self) -> float:
        return self.started + self.settings.job_timeout_s

    def check_time(self) -> None:
        if time.monotonic() > self.deadline:
            raise ResourceLimit(
                f"ingest took longer than the {self.settings.job_timeout_s:.0f} s limit"
            )

    def report(self, stage: str, fraction: float, *, force: bool = False) -> None:
        """Write stage and overall progress to the job row (throttled; a new stage is
        always written)."""
        now = time.monotonic()
        if not force and stage == self._last_stage and now - self._last_report < REPORT_EVERY_S:
            return
        self._last_report, self._last_stage = now, stage
        lo, hi = BANDS.get(stage, (0.0, 1.0))
        self.detail["stage_progress"] = round(fraction, 4)
        with self.db.write() as conn:
            jobs.report(
                conn,
                self.job.id,
                owner=self.owner,
                stage=stage,
                progress=lo + (hi - lo) * fraction,
                detail=dict(self.detail),
            )


def run_ingest(ctx: JobContext) -> dict[str, Any]:
    """Run an ingest job to the end; raises a QuireError to fail (or retry) it."""
    doc_id = ctx.job.document_id
    assert doc_id is not None
    with ctx.db.write() as conn:
        row = conn.execute(
            select(
                documents.c.stored_path,
                documents.c.filename,
                documents.c.sha256,
                documents.c.kind,
            ).where(documents.c.id == doc_id)
        ).first()
        if row is None:
            raise NotFound(f"document {doc_id} was deleted")
        set_status(conn, doc_id, "processing")
    timings: dict[str, float] = {}
    ctx.detail["timings"] = timings

    t0 = time.monotonic()
    stage_started: dict[str, float] = {}

    def on_progress(stage: str, fraction: float) -> None:
        stage_started.setdefault(stage, time.monotonic())
        ctx.report(stage, fraction)

    ctx.report("extract", 0.0, force=True)
    job_start = t0
    early: list[chunks.ReplaceStats] = []

    def on_partial(text_layer: Extracted) -> None:
        # A PDF's text layer, before its OCR pages: searchable by keywords meanwhile.
        w0 = time.monotonic()
        early.append(_write(ctx, doc_id, text_layer)[0])
        timings["chunk"] = timings.get("chunk", 0.0) + round(time.monotonic() - w0, 3)
        ctx.detail.update(
            searchable_s=round(time.monotonic() - job_start, 3),
            searchable_pages=len(text_layer.pages) - len(text_layer.metadata["ocr_pending"]),
        )

    source = original(ctx.settings.files_dir, row.stored_path, row.sha256, row.kind)
    extracted = extract_isolated(
        source,
        ctx.settings,
        timeout_s=max(1.0, ctx.deadline - time.monotonic()),
        on_progress=on_progress,
        on_partial=on_partial,
    )
    t1 = time.monotonic()
    ocr_start = stage_started.get("ocr", t1)
    timings["extract"] = round(ocr_start - t0 - timings.get("chunk", 0.0), 3)
    timings["ocr"] = round(t1 - ocr_start, 3)
    ocr_pages = sum(1 for p in extracted.pages if p.source == "ocr")
    if extracted.kind in rendition.RENDERED_KINDS:
        # Converted once (kept by content); bounded by its own limit and the job's.
        limit = min(ctx.settings.convert_timeout_s, max(1.0, ctx.deadline - time.monotonic()))
        made = rendition.render(ctx.settings, source, row.sha256, extracted.kind, limit)
        rendition.apply(extracted, made)
        timings["render"] = round(time.monotonic() - t1, 3)
    ctx.detail.update(pages=len(extracted.pages), ocr_pages=ocr_pages)

    t0 = time.monotonic()
    ctx.report("chunk", 0.0, force=True)
    stats, chunk_count, language = _write(ctx, doc_id, extracted)
    timings["chunk"] = round(timings.get("chunk", 0.0) + time.monotonic() - t0, 3)
    # Counted against the version before this job: the text layer written early counts as
    # this job's own, so only chunks both writes kept are the earlier version's.
    kept = min(early[0].kept, stats.kept) if early else stats.kept
    ctx.detail.update(
        chunks=chunk_count,
        kept=kept,
        inserted=chunk_count - kept,
        deleted=early[0].deleted if early else stats.deleted,
        language=language,
    )
    ctx.detail.setdefault("searchable_s", round(time.monotonic() - job_start, 3))

    t0 = time.monotonic()
    ctx.detail["embedded"] = embed_missing(ctx, doc_id)
    timings["embed"] = round(time.monotonic() - t0, 3)

    with ctx.db.write() as conn:
        set_status(conn, doc_id, "ready")
    log.info("document %s ready: %s", doc_id, ctx.detail)
    return ctx.detail


def _write(
    ctx: JobContext, doc_id: int, extracted: Extracted
) -> tuple[chunks.ReplaceStats, int, str | None]:
    """Write a document's pages and chunks (unchanged chunks kept) and what reading it found,
    in one transaction that also makes it ``searchable``: BM25 and the exact leg find it from
    then on, the dense leg each chunk once its vector is in (``ready``, when all are)."""
    new_chunks = chunk_pages(
        extracted.pages, size=ctx.settings.chunk_chars, overlap=ctx.settings.chunk_overlap
    )
    language = detect_language([p.text for p in extracted.pages])
    with ctx.db.write() as conn:
        if conn.execute(select(documents.c.id).where(documents.c.id == doc_id)).first() is None:
            raise NotFound(f"document {doc_id} was deleted")
        stats = chunks.replace(conn, doc_id, extracted.pages, new_chunks)
        note_sync.relocate(conn, doc_id, extracted.pages)  # highlights found again, never lost
        record_extraction(
            conn,
            doc_id,
            kind=extracted.kind,
            page_count=len(extracted.pages),
            chunk_count=len(new_chunks),
            metadata=extracted.metadata,
            title=extracted.title,
            author=extracted.author,
            language=language,
        )
        set_status(conn, doc_id, "searchable")
    return stats, len(new_chunks), language


def embed_missing(ctx: JobContext, document_id: int | None) -> int:
    """Embed every chunk (of one document, or all) that has no vector; returns how many."""
    with ctx.db.read() as conn:
        total = vectors.missing_count(conn, document_id)
    done = 0
    ctx.report("embed", 0.0, force=True)
    while True:
        if document_id is not None:
            ctx.check_time()
        with ctx.db.read() as conn:
            batch = vectors.missing_chunks(conn, document_id, ctx.settings.embed_batch)
        if not batch:
            break
        vecs = ctx.embedder.embed([embedding_text(t) for _, t in batch])
        with ctx.db.write() as conn:
            vectors.add(conn, ctx.embedder.name, [cid for cid, _ in batch], vecs)
        done += len(batch)
        ctx.report("embed", done / max(total, done))
    return done


def run_reembed(ctx: JobContext) -> dict[str, Any]:
    """Embed every chunk without a vector (a new model's store, an imported export), then mark
    the store ready and the searchable documents whose chunks all have vectors ready."""
    ctx.detail["embedded"] = embed_missing(ctx, None)
    with ctx.db.write() as conn:
        if vectors.missing_count(conn) == 0:
            vectors.mark_ready(conn, ctx.embedder.name)
        ctx.detail["ready"] = mark_embedded(conn)
    return ctx.detail
