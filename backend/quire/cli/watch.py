"""``quire watch``: keep folders in step with the library (see sources/watch.py)."""

from __future__ import annotations

import dataclasses
import signal
import threading
import time
from pathlib import Path
from types import FrameType

import click

from quire.cli.common import console, error, settings
from quire.parent import stop_with_parent
from quire.sources.folder import FolderMissing, FolderSync, SyncReport
from quire.sources.watch import watch_folders
from quire.storage.migrate import open_database


def _catch_up(sync: FolderSync, stable_s: float) -> SyncReport:
    """Passes until no file is still being written (a file written just now settles after
    ``stable_s``), for at most a few of those; the counts of every pass added up."""
    total = sync.sync()
    deadline = time.monotonic() + 3 * stable_s + 1
    while total.pending and time.monotonic() < deadline:
        time.sleep(max(0.1, stable_s / 4))
        report = sync.sync()
        for f in dataclasses.fields(report):
            if f.name != "pending":
                setattr(total, f.name, getattr(total, f.name) + getattr(report, f.name))
        total.pending = report.pending
    return total


@click.command()
@click.argument("dirs", nargs=-1, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--once",
    is_flag=True,
    help="Catch up once and exit (no watching); files still being written are waited for.",
)
def watch(dirs: tuple[Path, ...], once: bool) -> None:
    """Watch folders (default: $QUIRE_WATCH_DIRS): new and changed files are ingested, deleted
    ones hidden from search, renames followed. Run `quire worker` to process the queue."""
    config = settings()
    roots = [d.expanduser().absolute() for d in dirs] or config.watch_dir_list
    if not roots:
        error("no folder to watch: name one, or set QUIRE_WATCH_DIRS")
        raise SystemExit(2)
    db = open_database(config)
    try:
        if once:
            for root in roots:
                try:
                    report = _catch_up(FolderSync(db, config, root), config.watch_stable_s)
                except FolderMissing as exc:
                    error(exc.message)
                    continue
                console.print(f"{root}: {report}")
            return
        stop = threading.Event()

        def _handle(signum: int, _frame: FrameType | None) -> None:
            stop.set()

        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, _handle)
        stop_with_parent(stop.set)
        threads = watch_folders(db, config, roots, stop)
        console.print("watching " + ", ".join(str(r) for r in roots) + " (Ctrl-C to stop)")
        while not stop.wait(1.0):
            pass
        for thread in threads:
            thread.join(timeout=10)
    finally:
        db.dispose()
