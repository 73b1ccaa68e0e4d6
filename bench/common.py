"""What every benchmark records beside its numbers: the machine and how busy it was."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path
from typing import Any


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


def append_record(path: Path, record: dict[str, Any], *, indent: int = 2) -> None:
    """Add ``record`` to the JSON list of earlier runs in ``path`` (a lone object is kept as
    the first run), so every benchmark keeps its history."""
    runs: list[Any] = []
    if path.is_file():
        old = json.loads(path.read_text())
        runs = old if isinstance(old, list) else [old]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([*runs, record], indent=indent) + "\n")
