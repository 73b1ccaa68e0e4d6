"""One sync at a time (a lock file), and what the last one did (``status.json``).

The lock is an ``flock`` on ``<data_dir>/perplexity/sync.lock``: it excludes a CLI sync and an
API sync alike, across processes, and the kernel drops it when its holder dies. ``status.json``
holds the last run (times, outcome, counts, errors), the run in progress, and the last login
check; GET /api/perplexity/status and ``quire perplexity status`` read it.
"""

from __future__ import annotations

import fcntl
import os
import threading
from datetime import UTC, datetime
from typing import Any

from quire.config import Settings
from quire.sources.perplexity.checkpoint import (
    Checkpoint,
    auth_path,
    ensure_root,
    now_iso,
    read_json,
    root,
    write_json,
)
from quire.sources.perplexity.client import logged_in
from quire.sources.perplexity.errors import SyncRunning

_status_lock = threading.Lock()  # status.json is read-modify-written by threads of one process


class SyncLock:
    """An exclusive, non-blocking lock on the sync."""

    def __init__(self, settings: Settings) -> None:
        self.path = root(settings) / "sync.lock"
        self._fd: int | None = None

    def acquire(self) -> bool:
        """Take the lock; False if another sync holds it."""
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def acquire_or_raise(self) -> SyncLock:
        if not self.acquire():
            raise SyncRunning("a Perplexity sync is already running; wait for it to finish")
        return self

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None


def sync_running(settings: Settings) -> bool:
    """Whether some process (this one included) is syncing now."""
    if not (root(settings) / "sync.lock").exists():
        return False
    probe = SyncLock(settings)
    if probe.acquire():
        probe.release()
        return False
    return True


def read_status(settings: Settings) -> dict[str, Any]:
    data = read_json(root(settings) / "status.json")
    return data if isinstance(data, dict) else {}


def update_status(settings: Settings, **changes: Any) -> None:
    """Merge top-level keys into ``status.json`` (atomically)."""
    with _status_lock:
        ensure_root(settings)
        data = read_status(settings)
        data.update(changes)
        write_json(root(settings) / "status.json", data)


def record_login(settings: Settings, session: dict[str, Any] | None) -> None:
    """Remember the outcome of a session check (None: the check found no session)."""
    user = (session or {}).get("user")
    name = None
    if isinstance(user, dict):
        name = user.get("email") or user.get("name") or user.get("username")
    update_status(
        settings,
        login={
            "checked_at": now_iso(),
            "valid": logged_in(session),
            "expires": (session or {}).get("expires"),
            "user": name,
        },
    )


def _expired(expires: Any) -> bool:
    if not isinstance(expires, str):
        return False
    try:
        when = datetime.fromisoformat(expires.replace("Z", "+00:00"))
    except ValueError:
        return False
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when <= datetime.now(UTC)


def status_report(settings: Settings) -> dict[str, Any]:
    """Everything the status endpoint shows."""
    data = read_status(settings)
    state = auth_path(settings)
    login = dict(data.get("login") or {})
    saved = state.is_file()
    valid = login.get("valid")
    if not saved:
        valid = False
    elif valid and _expired(login.get("expires")):
        valid = False
    running = sync_running(settings)
    checkpoint = Checkpoint.load(settings)
    missing = sum(1 for t in checkpoint.threads.values() if t.deleted_upstream)
    saved_at = (
        datetime.fromtimestamp(state.stat().st_mtime, UTC).isoformat(timespec="seconds")
        if saved
        else None
    )
    return {
        "running": running,
        "current": data.get("current") if running else None,
        "last_run": data.get("last_run"),
        "login": {
            "saved": saved,
            "saved_at": saved_at,
            "valid": valid,
            "checked_at": login.get("checked_at"),
            "expires": login.get("expires"),
            "user": login.get("user"),
        },
        "threads": {"synced": len(checkpoint.threads) - missing, "deleted_upstream": missing},
        "base_url": settings.perplexity_url,
    }
