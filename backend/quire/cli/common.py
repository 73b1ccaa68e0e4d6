"""What every command shares: the consoles, settings and logging, error exits, and running
ingest jobs here with progress bars."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from typing import Any, NoReturn

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from quire.config import Settings
from quire.errors import QuireError
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


#: How long ``--wait``'s workers get to finish their current job when the command ends.
WAIT_STOP_S = 30.0
#: Memory one ingest worker may need: its embedder, a document's text and vectors, and the
#: extraction process beside it (a 244-page book peaks near 600 MB).
WORKER_MB = 1024


def default_workers(config: Settings | None = None) -> int:
    """Ingest workers to run at once: QUIRE_WORKERS, else one per core, each embedding on one
    thread (on a busy 2-core box two single-thread runs beat one two-thread run,
    bench/embed.py), as many as half the memory holds at ``WORKER_MB`` each."""
    if config is not None and config.workers:
        return config.workers
    cores = os.cpu_count() or 1
    return max(1, min(cores, _memory_mb() // 2 // WORKER_MB or 1))


def _memory_mb() -> int:
    """The machine's memory in MB (unknown: a figure that does not bound anything)."""
    from quire.llm.recommend import memory_bytes  # not at import: every command loads this

    memory = memory_bytes()
    return memory >> 20 if memory is not None else 1 << 20


def run_jobs(settings: Settings, db: Database, pending: dict[int, str], *, workers: int = 1) -> int:
    """Run ``workers`` worker processes (``quire worker``, at most one per job) until the jobs
    (id -> name) end, with an overall line (files, pages, chunks, time left) and a bar per
    running file; returns how many failed. Processes, not threads: the embedder scales with
    single-thread processes and not with threads of one. Interrupted, the jobs stay queued:
    running the command again resumes them."""
    pool = [_worker_process(settings) for _ in range(max(1, min(workers, len(pending))))]
    relays = [
        threading.Thread(target=_relay, args=(proc,), daemon=True) for proc in pool if proc.stderr
    ]
    for relay in relays:
        relay.start()
    failures = 0
    pending = dict(pending)
    total = len(pending)
    progress: dict[int, float] = dict.fromkeys(pending, 0.0)
    pages: dict[int, int] = {}
    chunk_counts: dict[int, int] = {}
    with Progress(
        TextColumn("{task.fields[name]}", style="bold"),
        TextColumn("{task.fields[stage]:>8}"),
        BarColumn(),
        TextColumn("{task.percentage:>3.0f}%"),
        TimeElapsedColumn(),
        TextColumn("{task.fields[left]}"),
        console=err_console,
    ) as bar:
        overall = bar.add_task("", total=float(total), name="all files", stage="", left="")
        tasks: dict[int, TaskID] = {}
        try:
            while pending:
                with db.read() as conn:
                    found = jobs.get_many(conn, pending)
                states = {jid: found.get(jid) for jid in pending}
                for jid, job in states.items():
                    if job is None:  # its document was deleted meanwhile
                        del pending[jid]
                        progress[jid] = 1.0
                        continue
                    progress[jid] = job.progress
                    pages[jid] = int(job.detail.get("pages") or 0)
                    chunk_counts[jid] = int(job.detail.get("chunks") or 0)
                    if job.status == "running" and jid not in tasks:
                        tasks[jid] = bar.add_task(
                            "", total=1.0, name=pending[jid][:40], stage=job.stage, left=""
                        )
                    if jid in tasks:
                        bar.update(tasks[jid], completed=job.progress, stage=job.stage)
                    if job.status in ("done", "failed"):
                        name = pending.pop(jid)
                        progress[jid] = 1.0
                        if jid in tasks:
                            bar.remove_task(tasks.pop(jid))
                        if job.status == "failed":
                            failures += 1
                            error(f"{name}: {job.error}")
                done = sum(progress.values())
                task = bar.tasks[overall]
                left = (
                    f"~{_clock(task.elapsed * (total - done) / done)} left"
                    if done > 0 and task.elapsed
                    else ""
                )
                bar.update(
                    overall,
                    completed=done,
                    stage=f"{total - len(pending)}/{total}",
                    left=f"{sum(pages.values()):,} pages · {sum(chunk_counts.values()):,} "
                    f"chunks {left}",
                )
                time.sleep(0.2)
        finally:
            stop_processes(pool, WAIT_STOP_S)
            for relay in relays:
                relay.join(timeout=5)
    return failures


def _worker_process(settings: Settings) -> subprocess.Popen[str]:
    """A ``quire worker`` on this library, its log lines piped back (see ``_relay``)."""
    env = {**os.environ, "QUIRE_DATA_DIR": str(settings.data_dir)}
    if settings.database_url is not None:
        env["QUIRE_DATABASE_URL"] = settings.database_url.get_secret_value()
    return subprocess.Popen(
        [sys.executable, "-m", "quire", "worker"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _relay(proc: subprocess.Popen[str]) -> None:
    """A worker's log lines, written to this process's stderr, which the progress display
    prints above its bars (a child writing to the terminal itself would tear them)."""
    assert proc.stderr is not None
    for line in proc.stderr:
        sys.stderr.write(line)


def stop_processes(procs: Iterable[subprocess.Popen[Any]], grace_s: float) -> None:
    """SIGTERM every process still running (a worker stops after its current job), wait up to
    ``grace_s`` for them all, then kill the rest."""
    running = [proc for proc in procs if proc.poll() is None]
    for proc in running:
        proc.terminate()
    deadline = time.monotonic() + grace_s
    for proc in running:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
