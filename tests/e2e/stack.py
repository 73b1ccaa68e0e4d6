"""Start the stack as `make run` does — uvicorn API, worker, nginx with its own prefix — on
free 127.0.0.1 ports, for tests that talk to it over HTTP."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.conftest import REPO
from tests.e2e.helpers import QUIRE, env_for, start_worker, wait_until


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Stack:
    web: str  # through nginx
    api: str  # the API directly
    data: Path
    log: Path
    procs: tuple[subprocess.Popen[bytes], ...] = ()


def stack_report(stack: Stack, lines: int = 60) -> str:
    """Which of the stack's processes still run, and the last lines of their log."""
    alive = ", ".join(
        f"{' '.join(map(str, p.args[-2:]))}: {'running' if p.poll() is None else p.returncode}"
        for p in stack.procs
    )
    tail = stack.log.read_text(errors="replace").splitlines()[-lines:]
    return f"processes: {alive}\n" + "\n".join(tail)


@contextlib.contextmanager
def run_stack(tmp_path: Path, *, dist: Path | None = None, **env: str) -> Iterator[Stack]:
    """API + worker + nginx; ``dist`` is the SPA to serve (default: the placeholder page)."""
    data = tmp_path / "data"
    api_port, web_port = free_port(), free_port()
    if dist is None:
        dist = tmp_path / "dist"
        dist.mkdir(exist_ok=True)
        shutil.copy(REPO / "frontend" / "placeholder" / "index.html", dist / "index.html")
    log_path = tmp_path / "stack.log"
    with log_path.open("ab") as log:
        procs = [
            subprocess.Popen(
                [*QUIRE, "serve", "--port", str(api_port)],
                env=env_for(data, QUIRE_MAX_UPLOAD_MB="20", **env),
                stdout=log,
                stderr=subprocess.STDOUT,
            ),
            subprocess.Popen(
                [
                    str(REPO / "nginx" / "run.sh"),
                    str(tmp_path / "nginx"),
                    f"127.0.0.1:{web_port}",
                    f"127.0.0.1:{api_port}",
                    str(dist),
                    "30m",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            ),
            start_worker(data, log_path, **env),
        ]
    stack = Stack(
        f"http://127.0.0.1:{web_port}", f"http://127.0.0.1:{api_port}", data, log_path, tuple(procs)
    )

    def up() -> bool:
        try:
            return httpx.get(f"{stack.web}/api/health", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        wait_until(up, 60, "nginx and the API")
        yield stack
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
