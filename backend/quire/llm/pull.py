"""Pulling a chat model into Ollama (``POST /api/pull``), with its progress.

    async for step in pull_ollama(url, "llama3.2:3b"):
        step.status, step.completed, step.total     # "pulling 6a0746a1ec1a", bytes
    # ends after Ollama's "success"; else OllamaNotRunning, ModelNotInLibrary, PullFailed

Ollama streams NDJSON: ``{"status": "pulling manifest"}``, then per layer
``{"status": "pulling <digest>", "digest": "sha256:…", "total": N, "completed": n}``, then
``verifying sha256 digest``, ``writing manifest``, ``success``. A failure is one line
``{"error": "…"}`` (an unknown name: ``pull model manifest: file does not exist``). A pull that
is interrupted resumes where it stopped when started again (Ollama keeps the partial blobs).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx

from quire.errors import InputError, ModelNotInLibrary, OllamaNotRunning, PullFailed
from quire.ollama_api import error_message, error_text

log = logging.getLogger(__name__)

#: What Ollama accepts as a model name: ``llama3.2``, ``qwen2.5:7b``, ``library/x:tag``,
#: ``hf.co/user/repo:Q4_K_M``.
MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]*(:[A-Za-z0-9._-]+)?")
MAX_NAME = 200
#: A pull that sends nothing for this long has stalled (a layer is being verified for a
#: while, but never this long).
IDLE_TIMEOUT_S = 300.0
LIBRARY_URL = "https://ollama.com/library"


@dataclass(frozen=True)
class PullStep:
    """One line of a pull's progress."""

    status: str
    digest: str | None = None
    total: int | None = None
    completed: int | None = None
    done: bool = False

    @property
    def fraction(self) -> float | None:
        """How much of this layer is down (None when the line has no sizes)."""
        if self.done:
            return 1.0
        if self.total and self.completed is not None:
            return min(1.0, self.completed / self.total)
        return None


def check_name(name: str) -> str:
    """``name`` stripped, or InputError saying what a model name looks like."""
    name = name.strip()
    if not name or len(name) > MAX_NAME or not MODEL_NAME.fullmatch(name):
        raise InputError(
            f"{name[:80]!r} is not a model name: names look like llama3.2:3b or qwen2.5:7b "
            f"(see {LIBRARY_URL})"
        )
    return name


async def pull_ollama(
    url: str,
    name: str,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    connect_timeout_s: float = 5.0,
    idle_timeout_s: float = IDLE_TIMEOUT_S,
) -> AsyncIterator[PullStep]:
    """The progress of pulling ``name`` into the Ollama at ``url``; the last step is
    ``done``. Raises OllamaNotRunning, ModelNotInLibrary or PullFailed."""
    name = check_name(name)
    timeout = httpx.Timeout(idle_timeout_s, connect=connect_timeout_s)
    last: PullStep | None = None
    async with httpx.AsyncClient(base_url=url, transport=transport, timeout=timeout) as client:
        try:
            async with client.stream(
                "POST", "/api/pull", json={"model": name, "stream": True}
            ) as response:
                if response.status_code != 200:
                    await response.aread()
                    raise _refused(url, name, error_text(response))
                async for line in response.aiter_lines():
                    step = _parse(url, name, line)
                    if step is None:
                        continue
                    last = step
                    yield step
                    if step.done:
                        return
        except httpx.ConnectError as e:
            raise OllamaNotRunning(
                f"no Ollama answers at {url}: start it (`ollama serve`) and pull again",
                detail={"url": url, "model": name},
            ) from e
        except httpx.HTTPError as e:
            raise _interrupted(url, name, last, type(e).__name__) from e
    raise _interrupted(url, name, last, "the stream ended before success")


def _parse(url: str, name: str, line: str) -> PullStep | None:
    if not line.strip():
        return None
    try:
        part = json.loads(line)
    except ValueError:
        log.warning("Ollama at %s sent a line that is not JSON during a pull: %.120s", url, line)
        return None
    if not isinstance(part, dict):
        return None
    if (message := error_message(part)) is not None:
        raise _refused(url, name, message)
    status = str(part.get("status") or "")
    return PullStep(
        status=status,
        digest=part.get("digest") if isinstance(part.get("digest"), str) else None,
        total=part.get("total") if isinstance(part.get("total"), int) else None,
        completed=part.get("completed") if isinstance(part.get("completed"), int) else None,
        done=status == "success",
    )


def _refused(url: str, name: str, message: str) -> ModelNotInLibrary | PullFailed:
    detail = {"url": url, "model": name, "server": message}
    if "file does not exist" in message or "not found" in message:
        return ModelNotInLibrary(
            f"Ollama has no model called {name!r}: check the name at {LIBRARY_URL}",
            detail=detail,
        )
    return PullFailed(f"Ollama refused to pull {name!r}: {message}", detail=detail)


def _interrupted(url: str, name: str, last: PullStep | None, why: str) -> PullFailed:
    where = ""
    if last is not None and (fraction := last.fraction) is not None:
        where = f" at {fraction:.0%} of a layer"
    return PullFailed(
        f"Ollama at {url} stopped answering during the pull of {name!r}{where}: check that it "
        "still runs, then pull again (the download resumes where it stopped)",
        detail={"url": url, "model": name, "why": why},
    )


class Tally:
    """The bytes of a whole pull, over its layers: Ollama reports each layer on its own, the
    weights first, then small ones (template, licence, parameters)."""

    def __init__(self) -> None:
        self.layers: dict[str, tuple[int, int]] = {}

    def add(self, step: PullStep) -> tuple[int, int]:
        """Bytes done and bytes known so far, ``step`` counted."""
        if step.digest and step.total:
            self.layers[step.digest] = (min(step.completed or 0, step.total), step.total)
        if step.done:
            self.layers = {d: (t, t) for d, (_, t) in self.layers.items()}
        return sum(c for c, _ in self.layers.values()), sum(t for _, t in self.layers.values())
