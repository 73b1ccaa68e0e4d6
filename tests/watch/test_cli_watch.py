"""`quire watch` as a user runs it: a real process, stopped by SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest
from sqlalchemy import text

from quire.config import Settings
from quire.storage.migrate import open_database
from tests.e2e.helpers import QUIRE, env_for, quire

pytestmark = pytest.mark.slow  # the quire watch process


def _keys(data: Path) -> list[str]:
    db = open_database(Settings(data_dir=data))
    try:
        with db.read() as conn:
            return [r[0] for r in conn.execute(text("SELECT source_key FROM documents"))]
    finally:
        db.dispose()


def test_watch_once_and_the_watch_process(tmp_path: Path) -> None:
    data, folder = tmp_path / "data", tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nFirst note.")
    nothing = quire(data, "watch", timeout=60)
    assert nothing.returncode == 2 and "QUIRE_WATCH_DIRS" in nothing.stderr
    absent = quire(data, "watch", "--once", str(tmp_path / "absent"), timeout=60)
    assert absent.returncode == 0 and "missing" in absent.stderr

    once = quire(data, "watch", "--once", str(folder), timeout=60)
    assert once.returncode == 0, once.stderr
    assert _keys(data) == [f"folder:{folder}/a.md"]

    proc = subprocess.Popen(
        [*QUIRE, "watch"],
        env=env_for(data, QUIRE_WATCH_DIRS=str(folder), QUIRE_WATCH_STABLE_S="0.3"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        time.sleep(1.5)  # started, first pass done
        (folder / "b.md").write_text("# B\n\nSecond note.")
        deadline = time.monotonic() + 20
        while len(_keys(data)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert sorted(_keys(data)) == [f"folder:{folder}/a.md", f"folder:{folder}/b.md"]
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err.decode()
