"""``quire up``: Quire in one command, wherever Python runs (no nginx, no root).

It migrates the library, checks the bind as ``quire serve`` does, then serves the API and the
web app from one uvicorn server in this process (api/webapp.py), and starts the ingest workers
and, with ``QUIRE_WATCH_DIRS``, the folder watcher as child processes: the same ``quire
worker`` and ``quire watch`` a shell would run, in this process group. A child that crashes
is started again (the API stays up); one that keeps crashing is given up with an error. Ctrl-C
or SIGTERM stops the server, then the children: each finishes its current file for up to
``STOP_GRACE_S`` and is killed after that (its job is taken up again at the next start).
"""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from types import FrameType

import click
import uvicorn

from quire.api.webapp import WebAppMissing, find_web_app, serve_web_app
from quire.app import create_app
from quire.cli.common import console, default_workers, error, settings, stop_processes
from quire.cli.serve import migrate_and_check_bind
from quire.parent import child_env

log = logging.getLogger(__name__)

#: How long a child may take to stop (a worker finishes its current file) before it is killed.
STOP_GRACE_S = 10.0
#: A child that exits this many times within ``CRASH_WINDOW_S`` is not started again.
MAX_CRASHES = 5
CRASH_WINDOW_S = 60.0


@dataclass
class Child:
    """A ``quire`` subcommand run as a child process, started again when it dies."""

    name: str
    args: list[str]
    proc: subprocess.Popen[bytes] | None = None
    exits: deque[float] = field(default_factory=lambda: deque(maxlen=MAX_CRASHES))
    given_up: bool = False

    def start(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "quire", *self.args], env=child_env())

    def check(self) -> None:
        """Start the child again if it exited; give up after ``MAX_CRASHES`` quick exits."""
        if self.proc is None or self.given_up or self.proc.poll() is None:
            return
        now = time.monotonic()
        self.exits.append(now)
        if len(self.exits) == MAX_CRASHES and now - self.exits[0] < CRASH_WINDOW_S:
            self.given_up = True
            error(
                f"{self.name} exited {MAX_CRASHES} times within {CRASH_WINDOW_S:.0f} s (last "
                f"code {self.proc.returncode}); not starting it again. The API keeps running: "
                "see the log above, fix the cause and restart `quire up`"
            )
            return
        log.warning("%s exited with code %s: starting it again", self.name, self.proc.returncode)
        self.start()


class _Server(uvicorn.Server):
    """uvicorn's server, telling the supervisor when a signal asks everything to stop."""

    def __init__(self, config: uvicorn.Config, stopping: threading.Event) -> None:
        super().__init__(config)
        self.stopping = stopping

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.stopping.set()
        super().handle_exit(sig, frame)


def _supervise(server: _Server, children: list[Child], stopping: threading.Event) -> None:
    """Start the children once the server listens, then keep them running until the stop."""
    while not server.started:
        if stopping.wait(0.1):
            return
    for child in children:
        child.start()
    while not stopping.wait(1.0):
        for child in children:
            child.check()


def _stop(children: list[Child], grace_s: float = STOP_GRACE_S) -> None:
    """SIGTERM every child, wait up to ``grace_s`` for them all, then kill the rest."""
    stop_processes((c.proc for c in children if c.proc is not None), grace_s)


@click.command()
@click.option("--host", default=None, help="Bind address (default QUIRE_HOST, 127.0.0.1).")
@click.option("--port", default=None, type=int, help="Port (default QUIRE_PORT, 8000).")
@click.option(
    "--workers",
    default=None,
    type=click.IntRange(0, 64),
    help="Ingest worker processes (default: QUIRE_WORKERS, else one per core as memory "
    "allows; 0: none here, e.g. workers on other machines).",
)
def up(host: str | None, port: int | None, workers: int | None) -> None:
    """Start Quire: the web app and the API, the ingest workers and the watched folders."""
    config = settings()
    workers = default_workers(config) if workers is None else workers
    host = host or config.host
    port = port or config.port
    migrate_and_check_bind(config, host, "up")
    try:
        web = find_web_app()
    except WebAppMissing as exc:
        error(str(exc))
        sys.exit(2)
    children = [Child(f"worker {i + 1}", ["worker"]) for i in range(workers)]
    if config.watch_dir_list:
        children.append(Child("watch", ["watch"]))
    stopping = threading.Event()
    # Whatever signal stopped the server, uvicorn raises it again once it is down; this
    # process then has the children to stop first, so these handlers only note it.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda _sig, _frame: stopping.set())
    server = _Server(
        uvicorn.Config(
            serve_web_app(create_app(config), web),
            host=host,
            port=port,
            log_level=config.log_level.lower(),
            timeout_graceful_shutdown=5,
        ),
        stopping,
    )
    supervisor = threading.Thread(
        target=_supervise, args=(server, children, stopping), name="children", daemon=True
    )
    supervisor.start()
    watched = ", ".join(str(d) for d in config.watch_dir_list) or "none (QUIRE_WATCH_DIRS)"
    console.print(
        f"Quire: http://{host}:{port}/  ·  data {config.data_dir}  ·  {workers} worker(s)  ·  "
        f"watching {watched}  ·  Ctrl-C to stop",
        highlight=False,
    )
    try:
        server.run()
    finally:
        stopping.set()
        supervisor.join(timeout=5)
        _stop(children)
    if not server.started:
        sys.exit(1)  # uvicorn said why (e.g. the port is taken)
