"""A child of ``quire up`` stops when ``quire up`` is gone.

``quire up`` stops its workers and watcher itself on Ctrl-C or SIGTERM, but a SIGKILL (an
out-of-memory kill, ``kill -9``, a crashed terminal) gives it no chance to: the children would
run on alone, holding the library and a core each. So ``quire up`` names itself in
``QUIRE_PARENT_PID``, and each child checks every ``CHECK_S`` whether its parent is still
that process; once it is not, the child stops as it does on SIGTERM (a worker finishes the
file it is on). POSIX systems give an orphan to another parent, which ``os.getppid`` shows;
Windows does not, so there the check is whether that process still runs.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

PARENT_ENV = "QUIRE_PARENT_PID"
CHECK_S = 1.0


def child_env() -> dict[str, str]:
    """The environment for a child of this process that should stop with it."""
    return {**os.environ, PARENT_ENV: str(os.getpid())}


def _alive(pid: int) -> bool:
    if sys.platform != "win32":
        return os.getppid() == pid
    try:
        os.kill(pid, 0)  # Windows: opens the process, raises OSError when it is gone
    except OSError:
        return False
    return True


def stop_with_parent(stop: Callable[[], None], check_s: float = CHECK_S) -> None:
    """Call ``stop`` once the process named by ``QUIRE_PARENT_PID`` is no longer this one's
    parent; nothing when it is unset (a ``quire worker`` started by hand or by systemd)."""
    raw = os.environ.get(PARENT_ENV, "")
    if not raw.isdigit():
        return
    parent = int(raw)

    def watch() -> None:
        while _alive(parent):
            time.sleep(check_s)
        log.warning("quire up (pid %d) is gone: stopping", parent)
        stop()

    threading.Thread(target=watch, name="parent-check", daemon=True).start()
