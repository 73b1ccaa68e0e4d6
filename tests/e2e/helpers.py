"""Run the real `quire` CLI and worker processes against a temp data directory."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from quire.config import Settings
from quire.storage.db import Database
from quire.storage.migrate import open_database

QUIRE = [sys.executable, "-m", "quire"]


def env_for(data_dir: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        QUIRE_DATA_DIR=str(data_dir),
        QUIRE_LOG_LEVEL="INFO",
        QUIRE_WORKER_POLL_S="0.2",
        QUIRE_JOB_STALE_S="5",
        QUIRE_OCR_DPI="200",
        # Not reniced: on a busy CI machine a worker at nice 10 waits behind every other
        # process (the tests that check renicing set it themselves).
        QUIRE_WORKER_NICE="0",
    )
    env.update(extra)
    return env


def quire(
    data_dir: Path, *args: str, timeout: float = 300, input: str | None = None, **extra: str
) -> Any:
    return subprocess.run(
        [*QUIRE, *args],
        env=env_for(data_dir, **extra),
        capture_output=True,
        text=True,
        timeout=timeout,
        input=input,
    )


def start_worker(data_dir: Path, log: Path, **extra: str) -> subprocess.Popen[bytes]:
    with log.open("ab") as fh:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(
            [*QUIRE, "worker"], env=env_for(data_dir, **extra), stdout=fh, stderr=subprocess.STDOUT
        )


def open_db(data_dir: Path) -> Database:
    return open_database(Settings(data_dir=data_dir))


def wait_until(check: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def write_long_text(path: Path, paragraphs: int, seed: int = 7) -> Path:
    """A text document of distinct paragraphs (about one chunk each)."""
    rng = random.Random(seed)
    words = [
        "archive",
        "basalt",
        "cipher",
        "delta",
        "ember",
        "fjord",
        "glacier",
        "harbor",
        "island",
        "juniper",
        "kelp",
        "lumen",
        "meadow",
        "nebula",
        "orchard",
        "prairie",
        "quartz",
        "river",
        "summit",
        "tundra",
        "umber",
        "valley",
        "willow",
        "xenon",
        "yarrow",
        "zephyr",
    ]
    paras = []
    for i in range(paragraphs):
        sentences = [
            " ".join(rng.choice(words) for _ in range(12)).capitalize() + "." for _ in range(10)
        ]
        paras.append(f"Paragraph {i}. " + " ".join(sentences))
    path.write_text("\n\n".join(paras) + "\n", encoding="utf-8")
    return path


def integrity(db: Database) -> dict[str, int]:
    """Counts that must agree after any crash: chunks, FTS rows, vectors, orphans, duplicates."""
    with db.read() as conn:
        q = conn.exec_driver_sql
        return {
            "chunks": q("SELECT count(*) FROM page_chunks").scalar_one(),
            "fts": q("SELECT count(*) FROM page_chunks_fts_docsize").scalar_one(),
            "tri": q("SELECT count(*) FROM page_chunks_tri_docsize").scalar_one(),
            "vectors": q("SELECT count(*) FROM vec.page_vecs").scalar_one(),
            "orphan_vectors": q(
                "SELECT count(*) FROM vec.page_vecs v WHERE NOT EXISTS "
                "(SELECT 1 FROM page_chunks c WHERE c.id = v.rowid)"
            ).scalar_one(),
            "duplicate_positions": q(
                "SELECT count(*) FROM (SELECT document_id, page, ordinal FROM page_chunks "
                "GROUP BY 1, 2, 3 HAVING count(*) > 1)"
            ).scalar_one(),
            "orphan_chunks": q(
                "SELECT count(*) FROM page_chunks c WHERE NOT EXISTS "
                "(SELECT 1 FROM documents d WHERE d.id = c.document_id)"
            ).scalar_one(),
        }
