"""What every benchmark records beside its numbers: the machine and how busy it was."""

from __future__ import annotations

import os
import platform
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
