"""What every command shares: the consoles, settings and logging, error exits, and running
ingest jobs here with progress bars."""

from __future__ import annotations

import logging
import sys
import threading
import time
from typing import NoReturn

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from quire.config import Settings
from quire.errors import QuireError
from quire.ingest.worker import Worker
from quire.storage import jobs
from quire.storage.db import Database

# soft_wrap: paths and commands stay whole, for copy and paste.
console = Console(soft_wrap=True)
err_console = Console(stderr=True, soft_wrap=True)


def settings(*, logs: bool = True) -> Settings:
    """The settings from the environment, with logging set up for a command that works."""
    loaded = Settings()
    if logs:
        logging.basicConfig(
            level=loaded.log_level.upper(),
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )
        # Alembic announces every plugin at INFO on each start.
        logging.getLogger("alembic").setLevel(logging.WARNING)
    return loaded


def error(message: str) -> None:
    """One failure, on stderr."""
    err_console.print(f"[red]✗[/red] {escape(message)}", highlight=False)


def fail(exc: QuireError, code: int = 1) -> NoReturn:
    """Report a Quire error and exit."""
    error(exc.message)
    sys.exit(code)


def run_jobs(settings: Settings, db: Database, pending: dict[int, str]) -> int:
    """Run a worker in this process until the jobs (id -> name) end, with each one's stage and
    progress; returns how many failed."""
    worker = Worker(settings, db=db)
    thread = threading.Thread(target=worker.run, kwargs={"drain": False}, daemon=True)
    thread.start()
    failures = 0
    pending = dict(pending)
    with Progress(
        TextColumn("{task.fields[name]}", style="bold"),
        TextColumn("{task.fields[stage]:>8}"),
        BarColumn(),
        TextColumn("{task.percentage:>3.0f}%"),
        TimeElapsedColumn(),
        console=err_console,
    ) as bar:
        tasks: dict[int, TaskID] = {
            job_id: bar.add_task("", total=1.0, name=name[:40], stage="queued")
            for job_id, name in pending.items()
        }
        try:
            while pending:
                with db.read() as conn:
                    states = {jid: jobs.get(conn, jid) for jid in pending}
                for jid, job in states.items():
                    if job is None:  # its document was deleted meanwhile
                        del pending[jid]
                        continue
                    bar.update(tasks[jid], completed=job.progress, stage=job.stage)
                    if job.status in ("done", "failed"):
                        name = pending.pop(jid)
                        if job.status == "failed":
                            failures += 1
                            bar.update(tasks[jid], stage="failed")
                            error(f"{name}: {job.error}")
                time.sleep(0.2)
        finally:
            worker.stop()
            thread.join(timeout=30)
            worker.close()
    return failures
