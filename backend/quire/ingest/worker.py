"""The ingest worker: claim a job, run it, record the outcome, repeat.

Failures stay with their document: a bad file fails its own job with a readable reason and the
worker takes the next one. Transient failures (a dependency down) are retried with backoff up
to ``job_max_attempts``. SIGTERM/SIGINT stop the loop after the current job.
"""

from __future__ import annotations

import logging
import math
import os
import signal
import threading
import time
import traceback
from datetime import timedelta
from types import FrameType
from typing import Any

from quire.config import Settings
from quire.embed import make_embedder
from quire.embed.base import Embedder
from quire.errors import EmbedderUnavailable, NotFound, QuireError, StoreUnavailable
from quire.ingest.pipeline import JobContext, run_ingest, run_reembed
from quire.parent import stop_with_parent
from quire.storage import documents, jobs, term_postings, vectors
from quire.storage.db import Database, unreachable
from quire.storage.migrate import open_database
from quire.storage.schema import utcnow
from quire.text.stopwords import STOPWORDS

log = logging.getLogger(__name__)

#: How long a job waits before looking again for an originals store that could not be read.
STORE_RETRY_S = 30.0


def prepare_vector_store(db: Database, embedder: Embedder) -> bool:
    """Sweep orphaned vectors and match the store to the embedder; True if a rebuild was queued."""
    with db.write() as conn:
        orphans = vectors.delete_orphans(conn)
        if orphans:
            log.warning("removed %d orphaned vectors", orphans)
        if vectors.ensure(conn, embedder.name, embedder.dim):
            jobs.enqueue(conn, None, "reembed")
            return True
    return False


class Worker:
    """A job loop over one database; ``run()`` until ``stop()`` (or the queue is empty)."""

    def __init__(
        self, settings: Settings, db: Database | None = None, embedder: Embedder | None = None
    ) -> None:
        self.settings = settings
        self._owns_db = db is None
        self.db = db or open_database(settings)
        self.embedder = embedder or make_embedder(settings)
        self.identity = jobs.worker_identity()
        self._stop = threading.Event()
        self._store_checked = False
        self._terms_failed_at = -math.inf

    def stop(self) -> None:
        self._stop.set()

    def close(self) -> None:
        """Release the embedder, and the database when this worker opened it."""
        self.embedder.close()
        if self._owns_db:
            self.db.dispose()

    def _check_store(self) -> None:
        if not self._store_checked:
            prepare_vector_store(self.db, self.embedder)
            self._store_checked = True

    def run(self, *, drain: bool = False) -> int:
        """Process jobs; with ``drain`` return once no job is runnable. Returns jobs handled."""
        handled = 0
        while not self._stop.is_set():
            try:
                self._check_store()
                with self.db.write() as conn:
                    job = jobs.claim(conn, self.identity, self.settings.job_stale_s)
            except Exception as exc:
                # The embedder still loading, or the database away (a PostgreSQL restart;
                # SQLite locked past its timeout, e.g. by a long migration at start-up).
                if isinstance(exc, EmbedderUnavailable):
                    log.warning("embedder not ready (%s); retrying in 5 s", exc)
                elif unreachable(exc):
                    log.warning("database unreachable (%s); retrying in 5 s", type(exc).__name__)
                else:
                    raise
                if drain:
                    return handled
                self._stop.wait(5)
                continue
            if job is None:
                self.refresh_terms()
                if drain:
                    return handled
                self._stop.wait(self.settings.worker_poll_s)
                continue
            self.run_job(job)
            handled += 1
        return handled

    def refresh_terms(self) -> None:
        """Idle work: read the frequent terms' postings again when enough chunks changed
        (storage/term_postings.py); yields as soon as a job is queued or the worker stops. A
        failure is logged and tried again a minute later, never fatal."""
        min_df = self.settings.bm25_frequent_df
        if not min_df or time.monotonic() - self._terms_failed_at < 60:
            return
        checked = [-math.inf]  # the queue is looked at first, then once a second

        def should_stop() -> bool:
            if self._stop.is_set():
                return True
            if time.monotonic() - checked[0] < 1.0:
                return False
            checked[0] = time.monotonic()
            with self.db.read() as conn:
                return jobs.any_queued(conn)

        try:
            with self.db.read() as conn:
                if not term_postings.due(conn, min_df):
                    return
            done = term_postings.refresh(
                self.db, min_df, skip_words=STOPWORDS, should_stop=should_stop, owner=self.identity
            )
            log.info("frequent terms' postings: %s", done)
        except Exception:  # noqa: BLE001 - search still works from FTS5 alone
            log.warning("reading the frequent terms' postings failed", exc_info=True)
            self._terms_failed_at = time.monotonic()

    def run_job(self, job: jobs.Job) -> None:
        """Run one claimed job and record done, failed or retry."""
        ctx = JobContext(self.db, self.settings, self.embedder, job, owner=self.identity)
        log.info(
            "job %s (%s, document %s) attempt %d", job.id, job.kind, job.document_id, job.attempts
        )
        done = threading.Event()
        beat = threading.Thread(target=self._heartbeat, args=(job.id, done), daemon=True)
        beat.start()
        try:
            detail = run_reembed(ctx) if job.kind == "reembed" else run_ingest(ctx)
            with self.db.write() as conn:
                jobs.finish(conn, job.id, detail, owner=self.identity)
        except jobs.JobLost:
            log.warning("job %s was taken over by another worker; leaving it", job.id)
        except NotFound as exc:
            self._record_failure(job, exc.message, retryable=False, mark_document=False)
        except StoreUnavailable as exc:
            # The shared store is away (an unmounted share): the job waits for it, however
            # long, without using up its attempts; nothing about the document is wrong.
            self._record_failure(job, exc.message, retryable=True, wait_s=STORE_RETRY_S)
        except QuireError as exc:
            self._record_failure(job, exc.message, retryable=exc.retryable)
        except Exception as exc:  # noqa: BLE001 - a bug must fail one job, not the worker
            if unreachable(exc):
                # Nothing can be recorded now. What was written stays (each batch commits
                # whole); the job keeps its row and, its heartbeat stale, is taken again and
                # resumed once the database is back.
                log.warning("job %s: database unreachable (%s)", job.id, type(exc).__name__)
                return
            log.error("job %s crashed:\n%s", job.id, traceback.format_exc())
            self._record_failure(job, f"internal error: {type(exc).__name__}: {exc}", False)
        finally:
            done.set()
            beat.join(timeout=5)

    def _heartbeat(self, job_id: int, done: threading.Event) -> None:
        # Beats whatever the stage is doing (a slow embedding batch, a long OCR page), so the
        # job is only reclaimed when this process is really gone.
        interval = max(0.5, min(self.settings.job_stale_s / 4, 10.0))
        while not done.wait(interval):
            try:
                with self.db.write() as conn:
                    jobs.report(conn, job_id, owner=self.identity)
            except jobs.JobLost:
                return
            except Exception:  # noqa: BLE001 - a missed beat is logged, never fatal
                log.warning("heartbeat of job %s failed", job_id, exc_info=True)

    def _record_failure(
        self,
        job: jobs.Job,
        message: str,
        retryable: bool,
        *,
        mark_document: bool = True,
        wait_s: float | None = None,
    ) -> None:
        """Fail the job, or queue it again (``retryable``: with backoff while attempts are
        left; ``wait_s``: after that long, whatever the attempts)."""
        try:
            with self.db.write() as conn:
                if retryable and (
                    wait_s is not None or job.attempts < self.settings.job_max_attempts
                ):
                    delay = wait_s if wait_s is not None else 5 * 2 ** (job.attempts - 1)
                    log.warning("job %s: %s; retry in %g s", job.id, message, delay)
                    retry_at = utcnow() + timedelta(seconds=delay)
                    jobs.fail(conn, job.id, message, retry_at=retry_at, owner=self.identity)
                    if job.document_id is not None and mark_document:
                        documents.set_status(
                            conn, job.document_id, "queued", f"retrying: {message}"
                        )
                    return
                log.warning("job %s failed: %s", job.id, message)
                jobs.fail(conn, job.id, message, owner=self.identity)
                if job.document_id is not None and mark_document:
                    documents.set_status(conn, job.document_id, "failed", message)
        except jobs.JobLost:
            log.warning("job %s was taken over by another worker; leaving it", job.id)


def run_worker(settings: Settings, *, drain: bool = False) -> int:
    """Entry point of ``quire worker``: lower its CPU priority (``worker_nice``), install
    signal handlers and run the loop."""
    if settings.worker_nice:
        os.nice(settings.worker_nice)
    worker = Worker(settings)

    def _handle(signum: int, _frame: FrameType | None) -> None:
        log.info("signal %d: stopping after the current job", signum)
        worker.stop()

    previous: dict[signal.Signals, Any] = {}
    for sig in (signal.SIGTERM, signal.SIGINT):
        previous[sig] = signal.signal(sig, _handle)
    stop_with_parent(worker.stop)
    try:
        return worker.run(drain=drain)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        worker.close()
