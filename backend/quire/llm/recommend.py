"""Which chat model suits this machine, by its memory, and why (one line).

    pick = recommend(memory_bytes(), server.models)
    pick.name, pick.reason, pick.installed

A 4-bit model needs about 0.6 GB of memory per billion parameters plus its context, and
Quire itself (the embedder, the reranker, the search mirror) keeps about 1 GB: a model may use
about half of the machine's memory. The tiers below follow that; an installed model that fits
the machine's tier is preferred to a download (the largest such), since it answers now.
"""

from __future__ import annotations

import ctypes
import logging
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from quire.llm.discover import ChatModel

log = logging.getLogger(__name__)

GB = 1 << 30
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "0.0.0.0"})
#: Assumed when the memory cannot be read.
UNKNOWN_MEMORY = 8 * GB
#: Bytes on disk per parameter of a Q4_K_M model, to guess the parameters of a model that does
#: not say (4.7 GB for qwen2.5:7b's 7.6B).
Q4_BYTES_PER_PARAM = 0.62


@dataclass(frozen=True)
class Tier:
    """Machines with at most ``memory_gb`` of memory: models of up to ``max_params`` billion
    parameters; ``model`` is the one to download, ``download`` its size."""

    memory_gb: float
    max_params: float
    label: str
    model: str
    download: str


TIERS = (
    Tier(6, 2.0, "a 1-2B model", "qwen2.5:1.5b", "1.0 GB"),
    Tier(12, 4.0, "a 3B model", "llama3.2:3b", "2.0 GB"),
    Tier(24, 9.0, "a 7-8B model", "qwen2.5:7b", "4.7 GB"),
    Tier(float("inf"), 15.0, "a 14B model", "qwen2.5:14b", "9.0 GB"),
)


@dataclass(frozen=True)
class Recommendation:
    """The model to use, whether it is already installed, and why, in one line."""

    name: str
    reason: str
    installed: bool
    memory_bytes: int
    download: str | None = None  # its size, when it must be pulled


def memory_bytes() -> int | None:
    """This machine's memory (Linux, macOS, the BSDs, Windows); None when it cannot be read."""
    if sys.platform == "win32":
        return _windows_memory()
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


def _windows_memory() -> int | None:
    class MemoryStatus(ctypes.Structure):
        _fields_ = [  # noqa: RUF012 - ctypes reads the class attribute
            ("dwLength", ctypes.c_ulong),
            ("dwMemoryLoad", ctypes.c_ulong),
            ("ullTotalPhys", ctypes.c_ulonglong),
            ("ullAvailPhys", ctypes.c_ulonglong),
            ("ullTotalPageFile", ctypes.c_ulonglong),
            ("ullAvailPageFile", ctypes.c_ulonglong),
            ("ullTotalVirtual", ctypes.c_ulonglong),
            ("ullAvailVirtual", ctypes.c_ulonglong),
            ("sullAvailExtendedVirtual", ctypes.c_ulonglong),
        ]

    status = MemoryStatus()
    status.dwLength = ctypes.sizeof(MemoryStatus)
    try:
        ok = ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status))  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        return None
    return int(status.ullTotalPhys) if ok else None


def tier_for(memory: int) -> Tier:
    """The tier of a machine with ``memory`` bytes."""
    return next(t for t in TIERS if memory <= t.memory_gb * GB)


def parameters(model: ChatModel) -> float | None:
    """Billions of parameters: Ollama's ``parameter_size`` ("3.2B", "137M"), else from the
    name ("qwen2.5:7b"), else guessed from the size on disk."""
    for text in (model.parameter_size, model.name.rsplit(":", 1)[-1]):
        m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([bBmM])", text or "")
        if m:
            n = float(m.group(1))
            return n if m.group(2).lower() == "b" else n / 1000
    if model.size:
        return model.size / Q4_BYTES_PER_PARAM / 1e9
    return None


def recommend(
    memory: int | None, installed: Sequence[ChatModel] = (), server_url: str | None = None
) -> Recommendation:
    """The model for a machine with ``memory`` bytes (None: unknown, 8 GB assumed), preferring
    the largest installed model that fits. With the server on another machine (``server_url``)
    the reason says whose memory it is: Quire cannot read that machine's."""
    known = memory is not None
    memory = memory if memory is not None else UNKNOWN_MEMORY
    tier = tier_for(memory)
    gb = f"{memory / GB:.0f} GB of memory" if known else "memory that could not be read"
    host = urlsplit(server_url).hostname if server_url else None
    if host and host not in LOCAL_HOSTS:
        gb += f" (Quire's own; the model runs on {host}: choose by its memory)"
    fitting = [
        (p, m) for m in installed if (p := parameters(m)) is not None and p <= tier.max_params
    ]
    if fitting:
        params, model = max(fitting, key=lambda pm: pm[0])
        return Recommendation(
            name=model.name,
            reason=f"already installed, and its {params:.1f}B parameters suit this machine's "
            f"{gb} (up to {tier.label} fits it).",
            installed=True,
            memory_bytes=memory,
        )
    return Recommendation(
        name=tier.model,
        reason=f"{tier.label} suits this machine's {gb}: good answers, and room left for "
        f"Quire; a {tier.download} download.",
        installed=False,
        memory_bytes=memory,
        download=tier.download,
    )
