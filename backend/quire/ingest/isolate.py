"""Run one document's extraction in a child process: a time limit that can stop a looping
parser, a memory limit, and a crash that cannot take the worker down."""

from __future__ import annotations

import contextlib
import ctypes
import logging
import multiprocessing as mp
import os
import queue
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from quire import errors
from quire.config import Settings
from quire.formats.types import Extracted

log = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    # A worker killed with -9 must not leave its extraction running on.
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _child(path: str, settings: dict[str, Any], out: Any, partial: bool = False) -> None:
    os.setpgrp()  # tesseract/pdftoppm children share our group and are killed with us
    _die_with_parent()
    os.environ["OMP_THREAD_LIMIT"] = "1"
    try:
        import resource

        limit = int(settings["job_memory_mb"]) * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):
        pass
    from quire.formats.extract import extract_file

    def progress(stage: str, fraction: float) -> None:
        out.put(("progress", stage, fraction))

    try:
        early = (lambda ex: out.put(("partial", ex))) if partial else None
        result = extract_file(Path(path), Settings(**settings), progress, early)
        out.put(("result", result))
    except errors.QuireError as exc:
        out.put(("error", type(exc).__name__, exc.message))
    except MemoryError:
        out.put(("error", "ResourceLimit", "the document needs more memory than allowed"))
    except RecursionError:
        out.put(("error", "CorruptFile", "the document is nested too deeply to read"))
    except Exception as exc:  # noqa: BLE001 - any parser failure is this file's fault
        out.put(("error", "CorruptFile", f"could not read the file: {type(exc).__name__}: {exc}"))


def extract_isolated(
    path: Path,
    settings: Settings,
    timeout_s: float,
    on_progress: Callable[[str, float], None],
    on_partial: Callable[[Extracted], None] | None = None,
) -> Extracted:
    """Extract ``path`` in a child process; raises the child's error, or ResourceLimit on timeout.

    ``on_progress(stage, fraction)`` is called for the child's progress; ``on_partial`` with a
    PDF's text layer while the child goes on with its OCR pages (extract_file's ``partial``).
    """
    # A forkserver that has imported the readers once forks each child in milliseconds; a
    # spawned child imports pdfminer, ebooklib and lxml again (~0.5 s a document). Not plain
    # fork: the worker has threads (heartbeat, ONNX Runtime).
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["quire.formats.extract"])
    out = ctx.Queue()
    # Secrets would arrive masked ("**********") and fail validation; the reader needs none.
    secrets = {name for name, value in settings if isinstance(value, SecretStr)}
    plain = settings.model_dump(mode="json", exclude=secrets)
    proc = ctx.Process(
        target=_child, args=(str(path), plain, out, on_partial is not None), daemon=True
    )
    proc.start()
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise errors.ResourceLimit(
                    f"reading the document took longer than the {timeout_s:.0f} s limit"
                )
            try:
                msg = out.get(timeout=min(1.0, remaining))
            except queue.Empty:
                if not proc.is_alive():
                    # Drain anything flushed just before exit.
                    try:
                        msg = out.get(timeout=0.5)
                    except queue.Empty:
                        raise errors.CorruptFile(
                            f"the reader process died (exit code {proc.exitcode}) on this file"
                        ) from None
                else:
                    continue
            if msg[0] == "progress":
                on_progress(msg[1], msg[2])
                continue
            if msg[0] == "partial":
                assert on_partial is not None
                on_partial(msg[1])
                continue
            if msg[0] == "result":
                result: Extracted = msg[1]
                return result
            cls = getattr(errors, msg[1], errors.CorruptFile)
            raise cls(msg[2])
    finally:
        if proc.is_alive() and proc.pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        proc.join(timeout=5)
        out.close()
        out.cancel_join_thread()
