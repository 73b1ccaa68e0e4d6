"""One sync run: list, fetch, hash, export and ingest what changed; resumable; one at a time.

1. Session check; logged out → LoginRequired.
2. The list (regular + pinned, paged, merged by uuid). Zero threads when the checkpoint holds
   some is a logged-out session (Perplexity answers ``[]``, not 401): LoggedOut, and nothing is
   written.
3. Each thread in list order: its entries (cursor paging) → SHA-256 of their stable JSON. Only
   a new or changed thread (or one whose title/space changed, or whose export went missing)
   gets raw JSON + markdown written and is handed to the library under ``perplexity:<slug>``,
   which replaces that document's chunks. A thread that fails is counted and retried next
   time; three failures in a row while the site is unavailable stop the run.
4. Threads no longer listed (a full run only) are marked ``deleted_upstream`` in the
   checkpoint; their exports and documents are kept.

The run's progress (``run.json``) and the checkpoint are written every
``perplexity_checkpoint_every`` threads and whenever the run stops early, so the next run
resumes after the last finished thread. Ingest jobs are only queued here: a worker runs them
(the CLI runs one itself).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, Page

from quire.config import Settings
from quire.errors import QuireError
from quire.sources.perplexity import browser as pbrowser
from quire.sources.perplexity.checkpoint import (
    Checkpoint,
    RunState,
    ThreadState,
    now_iso,
    root,
    write_atomic,
)
from quire.sources.perplexity.client import PerplexityClient, logged_in
from quire.sources.perplexity.errors import (
    LOGIN_HINT,
    LoggedOut,
    LoginRequired,
    PerplexityUnavailable,
    SyncCancelled,
)
from quire.sources.perplexity.importer import add_thread
from quire.sources.perplexity.render import (
    entries_hash,
    export_relpath,
    raw_relpath,
    render_markdown,
    thread_info,
)
from quire.sources.perplexity.status import SyncLock, record_login, update_status
from quire.storage import source_runs
from quire.storage.db import Database

log = logging.getLogger(__name__)

MAX_CONSECUTIVE_FAILURES = 3
STATUS_EVERY_S = 0.5
MAX_ERRORS_KEPT = 50


@dataclass
class SyncCounts:
    listed: int = 0
    changed: int = 0  # new or changed: exported again
    exported: int = 0
    ingested: int = 0  # handed to the library (an ingest job queued, or already identical)
    failed: int = 0
    unchanged: int = 0
    resumed: int = 0  # finished by the interrupted run this one resumed
    deleted_upstream: int = 0  # in the checkpoint, no longer listed (kept)

    @property
    def visited(self) -> int:
        return self.changed + self.unchanged + self.failed + self.resumed


@dataclass
class SyncReport:
    counts: SyncCounts
    errors: list[dict[str, str]] = field(default_factory=list)
    job_ids: list[int] = field(default_factory=list)
    resumed: bool = False
    seconds: float = 0.0
    requests: int = 0


Progress = Callable[[SyncCounts, int, str], None]  # counts, threads to visit, current thread


def thread_url(settings: Settings, slug: str) -> str:
    return f"{settings.perplexity_url}/search/{slug}"


def _write_if_changed(path: Path, data: bytes) -> bool:
    try:
        if path.read_bytes() == data:
            return False
    except OSError:
        pass
    write_atomic(path, data)
    return True


class _Run:
    def __init__(
        self,
        settings: Settings,
        db: Database,
        client: PerplexityClient,
        limit: int | None,
        on_progress: Progress | None,
        cancel: threading.Event | None,
    ) -> None:
        self.settings = settings
        self.db = db
        self.client = client
        self.limit = limit
        self.on_progress = on_progress
        self.cancel = cancel
        self.report = SyncReport(SyncCounts())
        self.checkpoint = Checkpoint.load(settings)
        self.run: RunState | None = None
        self.total = 0
        self.dirty = False
        self.since_save = 0
        self.started = time.monotonic()
        self._status_at = 0.0

    @property
    def counts(self) -> SyncCounts:
        return self.report.counts

    def progress(self, current: str = "", *, force: bool = False) -> None:
        if self.on_progress is not None:
            self.on_progress(self.counts, self.total, current)
        now = time.monotonic()
        if force or now - self._status_at >= STATUS_EVERY_S:
            self._status_at = now
            update_status(
                self.settings,
                current={
                    "started_at": self.run.started_at if self.run else None,
                    "total": self.total,
                    "thread": current,
                    "counts": asdict(self.counts),
                },
            )

    def execute(self) -> None:
        session = self.client.session()
        record_login(self.settings, session if logged_in(session) else None)
        if not logged_in(session):
            raise LoginRequired(
                f"the saved Perplexity login has expired or was logged out; {LOGIN_HINT}"
            )
        self.progress("listing threads", force=True)
        threads = self.client.list_threads(self.limit)
        self.counts.listed = len(threads)
        if not threads and self.checkpoint.live():
            raise LoggedOut(
                f"Perplexity listed no threads, but {self.checkpoint.live()} were synced before: "
                "the session looks logged out (Perplexity then answers an empty list, not an "
                f"error). Nothing was changed; {LOGIN_HINT}, then sync again."
            )
        self.run = RunState.resume_or_start(self.settings)
        self.report.resumed = self.run.resumed
        done = set(self.run.done)
        self.total = len(threads)
        try:
            failures = 0
            for item in threads:
                if self.cancel is not None and self.cancel.is_set():
                    raise SyncCancelled("the sync was stopped; the next one resumes from here")
                if item["uuid"] in done:
                    self.counts.resumed += 1
                    continue
                title = str(item.get("title") or item["slug"])
                self.progress(title)
                try:
                    self.sync_thread(item)
                    failures = 0
                except (LoginRequired, SyncCancelled):
                    raise
                except QuireError as exc:
                    failures += 1
                    self.counts.failed += 1
                    log.warning("thread %s: %s", item["slug"], exc.message)
                    if len(self.report.errors) < MAX_ERRORS_KEPT:
                        self.report.errors.append(
                            {"slug": item["slug"], "title": title, "error": exc.message}
                        )
                    if isinstance(exc, PerplexityUnavailable) and (
                        failures >= MAX_CONSECUTIVE_FAILURES
                    ):
                        raise PerplexityUnavailable(
                            f"stopped after {failures} threads in a row failed "
                            f"(the last: {exc.message}); the next sync resumes here"
                        ) from exc
                    continue
                self.run.done.append(item["uuid"])
                self.since_save += 1
                if self.since_save >= self.settings.perplexity_checkpoint_every:
                    self.save()
            if self.limit is None:
                self.mark_missing({t["uuid"] for t in threads})
        except BaseException:
            self.save()
            raise
        if self.dirty:
            self.checkpoint.save()
        self.run.finish()
        self.progress("done", force=True)

    def save(self) -> None:
        if self.dirty:
            self.checkpoint.save()
            self.dirty = False
        if self.run is not None:
            self.run.save()
        self.since_save = 0

    def sync_thread(self, item: dict[str, Any]) -> None:
        uuid, slug = item["uuid"], item["slug"]
        data = self.client.thread(slug)
        digest = entries_hash(data.entries)
        info = thread_info(item, data.entries)
        base = root(self.settings)
        prev = self.checkpoint.threads.get(uuid)
        md_rel, raw_rel = export_relpath(info), raw_relpath(info)
        if (
            prev is not None
            and prev.hash == digest
            and (prev.title, prev.space) == (info.title, info.space)
            and (base / prev.markdown).is_file()
        ):
            self.counts.unchanged += 1
            if prev.deleted_upstream:
                prev.deleted_upstream, prev.missing_since = False, None
                self.dirty = True
            return
        self.counts.changed += 1
        raw = {"thread": item, "thread_metadata": data.metadata, "entries": data.entries}
        _write_if_changed(base / raw_rel, json.dumps(raw, indent=1, ensure_ascii=False).encode())
        text = render_markdown(info, data.entries, thread_url(self.settings, slug))
        _write_if_changed(base / md_rel, text.encode())
        if prev is not None and prev.markdown != str(md_rel):
            (base / prev.markdown).unlink(missing_ok=True)  # renamed or moved to another Space
        self.counts.exported += 1
        intake = add_thread(self.settings, self.db, base / md_rel, slug)
        self.counts.ingested += 1
        if intake.job_id is not None and intake.status != "duplicate":
            self.report.job_ids.append(intake.job_id)
        self.checkpoint.threads[uuid] = ThreadState(
            slug=slug,
            title=info.title,
            space=info.space,
            hash=digest,
            entries=len(data.entries),
            markdown=str(md_rel),
            raw=str(raw_rel),
            document_id=intake.document_id,
            last_query_datetime=item.get("last_query_datetime"),
            synced_at=now_iso(),
        )
        self.dirty = True

    def mark_missing(self, listed: set[str]) -> None:
        for uuid, state in self.checkpoint.threads.items():
            if uuid not in listed and not state.deleted_upstream:
                state.deleted_upstream, state.missing_since = True, now_iso()
                self.dirty = True
        self.counts.deleted_upstream = sum(
            1 for t in self.checkpoint.threads.values() if t.deleted_upstream
        )


def _naive_utc(iso: str) -> datetime:
    """An ISO time as the naive UTC that SQLite DateTime columns store."""
    return datetime.fromisoformat(iso).astimezone(UTC).replace(tzinfo=None)


def run_sync(
    settings: Settings,
    db: Database,
    *,
    headless: bool = True,
    limit: int | None = None,
    browser: Browser | None = None,
    client: PerplexityClient | None = None,
    on_progress: Progress | None = None,
    cancel: threading.Event | None = None,
    lock: SyncLock | None = None,
) -> SyncReport:
    """Sync the saved login's threads into the library; the outcome goes to ``status.json``.

    Uses ``client`` if given, else a page of ``browser`` (or of a Chromium launched here)
    carrying the saved login. Takes the sync lock unless ``lock`` (held) is passed; raises
    SyncRunning if another sync holds it.
    """
    own_lock = lock is None
    held = lock if lock is not None else SyncLock(settings).acquire_or_raise()
    started = now_iso()
    run: _Run | None = None
    outcome, message = "internal_error", "the sync crashed; see the log"
    try:
        with ExitStack() as stack:
            page: Page | None = None
            if client is None:
                page = stack.enter_context(
                    pbrowser.logged_in_page(settings, headless=headless, browser=browser)
                )
                client = PerplexityClient(pbrowser.page_fetch(page, settings), settings)
            run = _Run(settings, db, client, limit, on_progress, cancel)
            try:
                run.execute()
            except LoginRequired:
                record_login(settings, None)
                raise
            if page is not None:
                pbrowser.save_state(page.context, settings)  # keep a rolling session's cookies
        outcome, message = "ok", ""
        assert run is not None
        return run.report
    except QuireError as exc:
        outcome, message = exc.code, exc.message
        raise
    except KeyboardInterrupt:
        outcome, message = "interrupted", "interrupted; the next sync resumes"
        raise
    finally:
        report = run.report if run is not None else SyncReport(SyncCounts())
        report.seconds = round(time.monotonic() - (run.started if run else time.monotonic()), 3)
        report.requests = client.requests if client is not None else 0
        update_status(
            settings,
            current=None,
            last_run={
                "started_at": started,
                "finished_at": now_iso(),
                "outcome": outcome,
                "message": message,
                "counts": asdict(report.counts),
                "errors": report.errors,
                "resumed": report.resumed,
                "limit": limit,
                "seconds": report.seconds,
                "requests": report.requests,
            },
        )
        with db.write() as conn:
            source_runs.record(
                conn,
                "perplexity",
                settings.perplexity_url,
                _naive_utc(started),
                summary={**asdict(report.counts), "errors": len(report.errors)},
                error=None if outcome == "ok" else message or outcome,
            )
        if own_lock:
            held.release()
