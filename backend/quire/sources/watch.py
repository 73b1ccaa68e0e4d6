"""``quire watch``: keep folders in step with the library while it runs.

One thread per folder: a reconcile pass at start (what changed while Quire was down), then
watchfiles (Rust notify: inotify, FSEvents, ReadDirectoryChangesW; ``WATCHFILES_FORCE_POLLING=1``
for network and container mounts that deliver no events) groups changes over
``watch_debounce_ms`` and each group triggers a pass of ``folder.FolderSync``. A pass also runs
while a file is still settling and every ``watch_rescan_s``. A folder that disappears
(unmounted, deleted) is reported once and its documents are left alone; the thread polls for
it and catches up when it is back. No error ends a thread: it is logged and the next pass
retries.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

import watchfiles

from quire.config import Settings
from quire.sources.folder import IGNORE_FILE, FolderMissing, FolderSync
from quire.storage.db import Database

log = logging.getLogger(__name__)

#: How often a quiet watcher wakes (to check pending files, the rescan clock, the folder).
TICK_MS = 500
MISSING_POLL_S = 2.0


class FolderWatcher:
    """Watches one folder until ``stop`` is set."""

    def __init__(self, db: Database, settings: Settings, root: Path, stop: threading.Event) -> None:
        self.sync = FolderSync(db, settings, root)
        self.root = self.sync.root
        self.settings = settings
        self.stop = stop
        self.passes = 0
        self.missing = False

    def _identity(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.root)
        except OSError:
            return None
        return (st.st_dev, st.st_ino)

    def _pass(self) -> int:
        """One reconcile pass; returns how many files are still pending (settling)."""
        try:
            report = self.sync.sync()
        except FolderMissing:
            return 0
        except Exception:  # noqa: BLE001 - a bad pass must not end the watcher
            log.exception("watched folder %s: pass failed; retrying", self.root)
            self.stop.wait(MISSING_POLL_S)
            return 1
        finally:
            self.passes += 1
        return report.pending

    def _relevant(self, changes: set[tuple[watchfiles.Change, str]]) -> bool:
        for _, raw in changes:
            path = Path(raw)
            if path.name == IGNORE_FILE or path == self.root:
                return True
            try:
                rel = path.relative_to(self.root).as_posix()
            except ValueError:
                continue
            if not self.sync.ignored(rel):
                return True
        return False

    def run(self) -> None:
        """Watch (and re-watch) the folder until stopped."""
        while not self.stop.is_set():
            identity = self._identity()
            if identity is None or not self.root.is_dir():
                if not self.missing:
                    log.warning(
                        "watched folder %s is missing (unmounted or deleted?): its documents "
                        "are kept; waiting for it to come back",
                        self.root,
                    )
                    self.missing = True
                self.stop.wait(MISSING_POLL_S)
                continue
            if self.missing:
                log.warning("watched folder %s is back: catching up", self.root)
                self.missing = False
            try:
                self._watch(identity)
            except Exception:  # noqa: BLE001 - e.g. the folder vanished under the notifier
                log.warning("watching %s failed; restarting", self.root, exc_info=True)
                self.stop.wait(MISSING_POLL_S)

    def _watch(self, identity: tuple[int, int]) -> None:
        pending = self._pass()
        last_full = time.monotonic()
        for changes in watchfiles.watch(
            self.root,
            watch_filter=None,
            debounce=self.settings.watch_debounce_ms,
            stop_event=self.stop,
            rust_timeout=TICK_MS,
            yield_on_timeout=True,
            raise_interrupt=False,
        ):
            if self._identity() != identity:
                return  # gone or replaced: the notifier watches a dead inode now
            due = time.monotonic() - last_full >= self.settings.watch_rescan_s
            if due or pending or (changes and self._relevant(changes)):
                pending = self._pass()
                last_full = time.monotonic()


def watch_folders(
    db: Database, settings: Settings, roots: list[Path], stop: threading.Event
) -> list[threading.Thread]:
    """Start a watcher thread per folder; they end once ``stop`` is set."""
    threads = []
    for root in roots:
        watcher = FolderWatcher(db, settings, root, stop)
        thread = threading.Thread(target=watcher.run, name=f"watch:{watcher.root}", daemon=True)
        thread.start()
        threads.append(thread)
    return threads
