"""Quire installed as a user without Debian's packages or root would: the wheel is built
(``python -m build --wheel``, from the web app ``make frontend`` built), installed into a fresh
virtual environment outside the repository, and ``quire up`` from there serves the web app and
the API itself, with its workers and watcher as children — no nginx. In Chromium a real PDF is
uploaded and a question gets a streamed, cited answer whose citation opens the page.

The environment is made by uv (a dev dependency): pip took 47-52 s to install the wheel's
dependencies into a fresh environment here, uv 11 s with an empty cache and 2-3 s with a warm
one (docs/testing.md). Either installs the same wheel with the same resolver inputs; the
package itself comes from the wheel only (checked: ``quire.__file__`` is in the environment).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psutil
import pytest
from playwright.sync_api import Page, expect

from tests.conftest import DOCS, REPO
from tests.e2e.browser_helpers import built_spa
from tests.e2e.helpers import env_for, wait_until
from tests.e2e.stack import Stack, free_port
from tests.e2e.test_browser import ask, shot, wait_rows
from tests.hardening.test_uploads import send_huge

pytestmark = pytest.mark.slow

PDF = DOCS / "pdf" / "dmca-summary.pdf"
#: What a wheel is built from: the files setup.py and pyproject.toml name.
SOURCES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "backend")
START_S = 120


def _source_tree(dest: Path, *, web_app: bool) -> Path:
    """A copy of what the wheel is built from (the repository's own build/ is left alone)."""
    dest.mkdir()
    for name in SOURCES:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(
                src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
            )
        else:
            shutil.copy(src, dest / name)
    if web_app:
        shutil.copytree(built_spa(), dest / "frontend" / "dist")
    return dest


def _clean_env(**extra: str) -> dict[str, str]:
    """The environment of a user's shell: nothing pointing Python at the repository."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    src = _source_tree(tmp / "src", web_app=True)
    r = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp / "dist"), str(src)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (built,) = (tmp / "dist").glob("quire-*-py3-none-any.whl")
    return built


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Path:
    root = tmp_path_factory.mktemp("venv") / "quire"
    assert not root.resolve().is_relative_to(REPO)
    uv = [sys.executable, "-m", "uv"]
    started = time.monotonic()
    for args in (
        ["venv", "--quiet", "--python", sys.executable, str(root)],
        ["pip", "install", "--quiet", "--python", str(root / "bin" / "python"), str(wheel)],
    ):
        r = subprocess.run([*uv, *args], capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]
    print(f"fresh environment with the wheel installed in {time.monotonic() - started:.1f} s")
    return root


def test_the_wheel_holds_the_web_app_migrations_and_tokenizer(wheel: Path, venv: Path) -> None:
    r = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import pathlib, sys, quire; p = pathlib.Path(quire.__file__).parent; "
            "print(p); print(sys.path); "
            "print(*(f.relative_to(p).as_posix() for f in sorted(p.rglob('*')) if f.is_file()))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=venv.parent,
        env=_clean_env(),
    )
    assert r.returncode == 0, r.stderr
    package, path, files = r.stdout.splitlines()
    assert Path(package).is_relative_to(venv), package  # the wheel's copy, not the checkout
    assert str(REPO) not in path and str(REPO / "backend") not in path
    shipped = set(files.split())
    assert {"web_app/index.html", "web_app/favicon.svg", "embed/minilm/tokenizer.json"} <= shipped
    assert {"migrations/env.py", "migrations/versions/0001_initial.py"} <= shipped
    assert any(re.fullmatch(r"web_app/assets/index-[\w-]+\.js", f) for f in shipped), shipped
    code = REPO / "backend" / "quire"
    ours = {f.relative_to(code).as_posix() for f in code.glob("migrations/versions/*.py")}
    assert ours <= shipped  # every migration
    # Every module of the package (the web app beside them never replaces one).
    modules = {
        f.relative_to(code).as_posix() for f in code.rglob("*.py") if "__pycache__" not in f.parts
    }
    assert modules <= shipped, sorted(modules - shipped)


def test_the_wheel_is_not_built_without_the_web_app(tmp_path: Path) -> None:
    src = _source_tree(tmp_path / "src", web_app=False)
    r = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", str(src)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode != 0
    assert "the web app is not built" in r.stdout + r.stderr
    assert "make frontend" in r.stdout + r.stderr
    assert not list((src / "dist").glob("*.whl"))


def _start_up(
    venv: Path, tmp: Path, *args: str, **env: str
) -> tuple[subprocess.Popen[bytes], str, Path]:
    port = free_port()
    log = tmp / "up.log"
    with log.open("ab") as fh:
        proc = subprocess.Popen(
            [str(venv / "bin" / "quire"), "up", "--port", str(port), *args],
            cwd=tmp,
            env=_clean_env(**env_for(tmp / "data", QUIRE_LLM_BACKENDS="none", **env)),
            stdout=fh,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, as a terminal's foreground job
        )
    url = f"http://127.0.0.1:{port}"

    def up() -> bool:
        assert proc.poll() is None, log.read_text(errors="replace")[-3000:]
        try:
            return httpx.get(f"{url}/api/health", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    wait_until(up, START_S, "quire up")
    return proc, url, log


def _children(proc: subprocess.Popen[bytes], name: str, count: int) -> list[psutil.Process]:
    """``quire up``'s children running ``quire <name>``, once there are ``count`` of them."""

    def found() -> list[psutil.Process]:
        kids = []
        for child in psutil.Process(proc.pid).children():
            try:
                if child.cmdline()[-2:] == ["quire", name]:
                    kids.append(child)
            except psutil.NoSuchProcess:  # one that just exited: not running it
                continue
        return kids if len(kids) == count else []

    result: list[psutil.Process] = wait_until(found, 60, f"{count} `quire {name}` children")
    return result


def _stops_cleanly(proc: subprocess.Popen[bytes], sig: signal.Signals, *, group: bool) -> None:
    family = [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]
    assert len(family) >= 2
    if group:  # Ctrl-C in a terminal: the signal goes to the whole foreground process group
        os.killpg(proc.pid, sig)
    else:
        proc.send_signal(sig)
    assert proc.wait(timeout=40) == 0
    gone, alive = psutil.wait_procs(family, timeout=10)
    assert not alive, f"left running: {[p.cmdline() for p in alive]}"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, venv: Path) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("up")
    # One worker whatever the machine's cores (the default), so the tests can count it.
    proc, url, log = _start_up(venv, tmp, QUIRE_MAX_UPLOAD_MB="20", QUIRE_WORKERS="1")
    try:
        yield Stack(url, url, tmp / "data", log, (proc,))
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=40)


def test_upload_and_a_cited_answer_with_no_nginx(page: Page, stack: Stack) -> None:
    family = psutil.Process(stack.procs[0].pid).children(recursive=True)
    assert not [p for p in family if p.name() == "nginx"]
    pg = page
    pg.goto("/")
    expect(pg).to_have_url(re.compile(r"/chat$"))
    pg.get_by_role("link", name="Upload", exact=True).first.click()
    pg.locator('input[type="file"]').set_input_files([str(PDF)])
    seen = wait_rows(pg, 1, {"ready", "failed", "duplicate"}, 180)
    assert seen[0][-1] == "ready", seen

    # The answer streams in (SSE straight from uvicorn) and cites the PDF.
    pg.get_by_role("link", name="Chat", exact=True).click()
    states = ask(pg, "What does the DMCA say about safe harbors for online service providers?")
    assert any(s["busy"] and s["chars"] > 0 for s in states), "the answer did not stream"
    cite = pg.locator('[data-testid="answer"] a.cite').first
    href = cite.get_attribute("href") or ""
    m = re.match(r"^/library/(\d+)/pages/(\d+)\?", href)
    assert m, href
    shot(pg, "up-chat", full=False)

    # The citation opens the page: a client-side route, then reloaded as a user would, so the
    # server answers that path with the web app itself.
    cite.click()
    expect(pg).to_have_url(re.compile(rf"/library/{m[1]}/pages/{m[2]}\?chunk=\d+"))
    pg.reload()
    expect(pg.get_by_test_id("pdf-page")).to_have_attribute("data-state", "ready")
    expect(pg.locator(".textLayer mark.pdf-hl").first).to_be_in_viewport()
    shot(pg, "up-source", full=False)


def test_assets_are_cached_and_the_upload_limit_holds(stack: Stack) -> None:
    index = httpx.get(stack.web + "/", timeout=10)
    assert index.headers["cache-control"] == "no-cache"
    bundle = re.search(r'src="(/assets/index-[\w-]+\.js)"', index.text)
    assert bundle, index.text
    r = httpx.get(stack.web + bundle[1], timeout=10, headers={"Accept-Encoding": "gzip"})
    assert r.status_code == 200 and r.headers["content-encoding"] == "gzip"
    assert r.headers["cache-control"] == "public, max-age=31536000, immutable"
    # QUIRE_MAX_UPLOAD_MB=20, enforced by the API itself whether or not nginx is in front.
    for content_length in (True, False):
        out = send_huge(f"{stack.api}/api/documents", 64 << 20, content_length=content_length)
        assert out.status == 413, out
        assert out.body is not None and out.body["error"]["code"] == "too_large", out  # type: ignore[index]


def test_a_crashed_worker_is_started_again_and_the_api_stays(stack: Stack) -> None:
    proc = stack.procs[0]
    (first,) = _children(proc, "worker", 1)
    first.kill()
    first.wait(timeout=10)
    assert httpx.get(stack.api + "/api/health", timeout=5).status_code == 200

    def replaced() -> bool:
        return [c.pid for c in _children(proc, "worker", 1)] != [first.pid]

    wait_until(replaced, 30, "a new worker")
    assert "exited with code -9: starting it again" in stack.log.read_text(errors="replace")


def test_sigterm_stops_the_server_and_every_child(stack: Stack) -> None:
    _children(stack.procs[0], "worker", 1)
    _stops_cleanly(stack.procs[0], signal.SIGTERM, group=False)


def test_ctrl_c_stops_workers_and_watcher(venv: Path, tmp_path: Path) -> None:
    watched = tmp_path / "papers"
    watched.mkdir()
    proc, url, _log = _start_up(venv, tmp_path, "--workers", "2", QUIRE_WATCH_DIRS=str(watched))
    try:
        assert len(_children(proc, "worker", 2)) == 2
        assert len(_children(proc, "watch", 1)) == 1
        _stops_cleanly(proc, signal.SIGINT, group=True)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_killed_outright_its_children_stop_too(venv: Path, tmp_path: Path) -> None:
    """SIGKILL gives `quire up` no chance to stop its children: they see it gone and stop."""
    watched = tmp_path / "papers"
    watched.mkdir()
    proc, _url, log = _start_up(venv, tmp_path, "--workers", "1", QUIRE_WATCH_DIRS=str(watched))
    family: list[psutil.Process] = []
    try:
        family = [*_children(proc, "worker", 1), *_children(proc, "watch", 1)]
        proc.kill()
        proc.wait(timeout=10)
        _gone, alive = psutil.wait_procs(family, timeout=20)
        assert not alive, f"left running: {[p.cmdline() for p in alive]}"
        assert log.read_text(errors="replace").count(f"quire up (pid {proc.pid}) is gone") == 2
    finally:
        proc.kill()
        for p in family:
            if p.is_running():
                p.kill()
