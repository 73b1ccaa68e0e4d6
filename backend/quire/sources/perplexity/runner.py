"""Syncs started by the API: one background thread at a time, stopped with the server.

The thread queues ingest jobs only; the worker process (``quire worker``) embeds them.
"""

from __future__ import annotations

import logging
import threading

from quire.config import Settings
from quire.errors import QuireError
from quire.sources.perplexity.checkpoint import auth_path
from quire.sources.perplexity.errors import LOGIN_HINT, LoginRequired
from quire.sources.perplexity.status import SyncLock
from quire.sources.perplexity.sync import run_sync
from quire.storage.db import Database

log = logging.getLogger(__name__)


class SyncRunner:
    """Owned by the app's lifespan: ``start()`` a sync, ``close()`` at shutdown."""

    def __init__(self, settings: Settings, db: Database) -> None:
        self.settings = settings
        self.db = db
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, limit: int | None = None) -> None:
        """Start a headless sync in the background; SyncRunning or LoginRequired if it cannot."""
        lock = SyncLock(self.settings).acquire_or_raise()
        if not auth_path(self.settings).is_file():
            lock.release()
            raise LoginRequired(f"no saved Perplexity login; {LOGIN_HINT} on the server")
        self._cancel.clear()
        self._thread = threading.Thread(
            target=self._run, args=(lock, limit), name="perplexity-sync", daemon=True
        )
        self._thread.start()

    def _run(self, lock: SyncLock, limit: int | None) -> None:
        try:
            report = run_sync(
                self.settings, self.db, headless=True, limit=limit, cancel=self._cancel, lock=lock
            )
            log.info("Perplexity sync done: %s", report.counts)
        except QuireError as exc:  # recorded in status.json by run_sync
            log.warning("Perplexity sync stopped: %s", exc.message)
        except Exception:  # noqa: BLE001 - a crash must not pass silently in a thread
            log.exception("Perplexity sync crashed")
        finally:
            lock.release()

    def wait(self, timeout: float) -> bool:
        """Wait for the running sync; True if none is running now."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def close(self, timeout: float = 15) -> None:
        """Ask a running sync to stop after its current thread, and wait a bounded time."""
        self._cancel.set()
        if not self.wait(timeout):
            log.warning("Perplexity sync still running at shutdown; it resumes next time")
