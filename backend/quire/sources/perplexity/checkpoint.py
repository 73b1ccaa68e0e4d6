"""What a sync remembers, under ``<data_dir>/perplexity/``, every file written atomically.

- ``checkpoint.json``: per thread (by uuid) the SHA-256 of its entries and where its export
  lives. Written only when a thread changed, so a sync that finds nothing new writes nothing.
- ``run.json``: the uuids the current run has finished, written every
  ``perplexity_checkpoint_every`` threads and removed when the run completes: a run that was
  interrupted (killed, logged out, the site down) resumes after its last finished thread.
- ``auth.json``: the Playwright storage state (cookies + localStorage), owner-only (0600).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from quire.config import Settings

VERSION = 1
RESUME_WINDOW = timedelta(hours=24)  # an older unfinished run is started over


def root(settings: Settings) -> Path:
    return settings.data_dir / "perplexity"


def auth_path(settings: Settings) -> Path:
    return root(settings) / "auth.json"


def exports_dir(settings: Settings) -> Path:
    return root(settings) / "exports"


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def ensure_root(settings: Settings) -> Path:
    """The Perplexity folder, owner-only: it holds the login."""
    path = root(settings)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def write_atomic(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Write ``data`` to a temp file beside ``path`` (created with ``mode``), fsync, rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)  # the umask may have narrowed or kept wider bits of an old file
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_json(path: Path, value: Any, *, mode: int = 0o644) -> None:
    write_atomic(path, json.dumps(value, indent=2, ensure_ascii=False).encode(), mode=mode)


def read_json(path: Path) -> Any:
    """The JSON in ``path``; None when it is missing or unreadable (a half-written file cannot
    exist, but a hand-edited one can)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


@dataclass
class ThreadState:
    """One synced thread as the checkpoint records it."""

    slug: str
    title: str
    space: str | None
    hash: str
    entries: int
    markdown: str  # relative to the Perplexity folder
    raw: str
    document_id: int | None = None
    last_query_datetime: str | None = None
    synced_at: str = ""
    deleted_upstream: bool = False
    missing_since: str | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ThreadState:
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**known)


@dataclass
class Checkpoint:
    path: Path
    threads: dict[str, ThreadState] = field(default_factory=dict)

    @classmethod
    def load(cls, settings: Settings) -> Checkpoint:
        path = root(settings) / "checkpoint.json"
        data = read_json(path)
        threads: dict[str, ThreadState] = {}
        if isinstance(data, dict) and isinstance(data.get("threads"), dict):
            for uuid, item in data["threads"].items():
                if isinstance(item, dict):
                    try:
                        threads[uuid] = ThreadState.from_dict(item)
                    except TypeError:
                        continue  # a damaged entry: that thread is exported again
        return cls(path, threads)

    def save(self) -> None:
        write_json(
            self.path,
            {
                "version": VERSION,
                "saved_at": now_iso(),
                "threads": {u: asdict(t) for u, t in sorted(self.threads.items())},
            },
        )

    def live(self) -> int:
        """Threads not known to be deleted upstream."""
        return sum(1 for t in self.threads.values() if not t.deleted_upstream)


@dataclass
class RunState:
    """The progress of one sync run, kept until the run completes."""

    path: Path
    started_at: str
    done: list[str] = field(default_factory=list)
    resumed: bool = False

    @classmethod
    def resume_or_start(cls, settings: Settings) -> RunState:
        """The interrupted run to finish (if recent), else a new one."""
        path = root(settings) / "run.json"
        data = read_json(path)
        if isinstance(data, dict) and isinstance(data.get("done"), list):
            try:
                started = datetime.fromisoformat(str(data.get("started_at")))
            except ValueError:
                started = None
            if started is not None and datetime.now(UTC) - started < RESUME_WINDOW:
                done = [str(u) for u in data["done"]]
                return cls(path, started.isoformat(timespec="seconds"), done, resumed=True)
        return cls(path, now_iso())

    def save(self) -> None:
        write_json(self.path, {"started_at": self.started_at, "done": self.done})

    def finish(self) -> None:
        self.path.unlink(missing_ok=True)
