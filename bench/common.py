"""What the benchmarks share: where things are, the machine and how busy it was, the run
history of each benchmark, and a library built from the shared documents.

Scripts put the repository root and bench/ on ``sys.path`` first (they run as scripts), then
``from common import …``.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = ROOT / "bench" / "results"
DATA = ROOT.parent / "shared" / "data"
DOCS = DATA / "docs"
SCIFACT = DATA / "ir" / "scifact"


def machine_info(load_avg: float) -> dict[str, Any]:
    """CPU count, platform, Python and ONNX Runtime versions, and the load at the start."""
    import onnxruntime

    return {
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "onnxruntime": onnxruntime.__version__,
        "load_avg_at_start": load_avg,
    }


def run_json_child(
    cmd: list[str],
    deadline: float,
    grace_s: float,
    limit: str,
    env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Run a benchmark's child process until ``deadline`` (+ ``grace_s``: a build cannot stop
    half way, query loops stop at the deadline themselves); the JSON object on the last line of
    its stdout, or ``{"skipped": reason}`` when it was killed (``limit`` says which) or failed."""
    try:
        proc = subprocess.run(
            cmd,
            stdout=subprocess.PIPE,
            text=True,
            env=dict(env) if env is not None else None,
            timeout=max(deadline - time.time(), 0) + grace_s,
        )
    except subprocess.TimeoutExpired:
        return {"skipped": f"killed: {limit} (+{grace_s:.0f} s) passed"}
    if proc.returncode != 0:
        return {"skipped": f"worker failed with exit code {proc.returncode}"}
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def append_record(path: Path, record: dict[str, Any], *, indent: int = 2) -> None:
    """Add ``record`` to the JSON list of earlier runs in ``path`` (a lone object is kept as
    the first run), so every benchmark keeps its history."""
    runs: list[Any] = []
    if path.is_file():
        old = json.loads(path.read_text())
        runs = old if isinstance(old, list) else [old]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([*runs, record], indent=indent) + "\n")


def build_library(settings: Any, files: Iterable[Path]) -> None:
    """Ingest ``files`` into ``settings``' library (those already in it are skipped) with the
    real intake and worker, until the queue is empty."""
    from quire.ingest.intake import add_file
    from quire.ingest.worker import Worker
    from quire.storage.documents import list_documents
    from quire.storage.migrate import open_database

    db = open_database(settings)
    with db.read() as conn:
        have = {d["filename"] for d in list_documents(conn)}
    for path in files:
        if path.name not in have:
            add_file(db, settings.files_dir, path, path.name, max_bytes=settings.max_upload_bytes)
    db.dispose()
    worker = Worker(settings)
    worker.run(drain=True)
    worker.close()
