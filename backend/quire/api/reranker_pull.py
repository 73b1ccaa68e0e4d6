"""Pulling the reranker from the API (Settings): one pull at a time, in a thread of its own,
its steps relayed as Server-Sent Events, and the new model reranking the next search.

The pull itself is ``quire.models`` (fetch from the Hugging Face Hub, convert, check, install by
rename), a package on the API's own layer, which the API does not import (pyproject.toml's
import contracts). ``quire.app``, the layer above both, hands the pull in as a plain function:

    app.state.reranker_pulls = RerankerPulls(pull_reranker)       # quire/app.py
    return EventStream(pulls.start(runtime))                     # the route: 409 when running

The pull runs to its end even when the client leaves (a page closed mid-download): it installs
by rename, so there is never a half-installed model, and the next search uses what it
installed. ``GET /api/models`` says a pull is running (``reranker.pulling``) meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Callable
from typing import Protocol

from fastapi.sse import ServerSentEvent
from pydantic import BaseModel, Field, RootModel

from quire.config import Settings
from quire.errors import PullInProgress, QuireError
from quire.runtime import Runtime

log = logging.getLogger(__name__)


class PullStep(Protocol):
    """One step of a pull as ``quire.models`` reports it (its ``Step``)."""

    @property
    def label(self) -> str: ...
    @property
    def completed(self) -> float: ...
    @property
    def total(self) -> float | None: ...
    @property
    def done(self) -> bool: ...


class RerankerPullProgress(BaseModel):
    step: str = Field(description='What is done now: "download onnx/model.onnx", "quantise" …')
    completed: float = Field(description="Bytes of the step done (0 for a conversion).")
    total: float | None = Field(description="Bytes of the step; null: a step without a size.")
    fraction: float | None = Field(description="completed / total, null without a size.")
    done: bool = Field(description="The step is finished.")


class RerankerPulled(BaseModel):
    repo: str
    commit: str
    source: str = Field(description="How the int8 model was made, in words.")
    size: int = Field(description="Bytes installed.")
    path: str = Field(description="The model file.")
    up_to_date: bool = Field(description="This commit was installed already: nothing changed.")
    notes: list[str] = Field(description="What the pull noticed (offline: the cached copy …).")
    loaded: bool = Field(default=False, description="Search reranks with it now.")


class RerankerPullEvent(RootModel[RerankerPullProgress | RerankerPulled]):
    """The data of an event: ``progress`` (a step), or the closing ``done`` (what was
    installed); an ``error`` event carries the error shape."""


#: The pull ``quire.app`` hands in: fetch, convert, check and install the reranker the settings
#: name, reporting each step; raises a QuireError saying what to do when it cannot.
PullReranker = Callable[[Settings, Callable[[PullStep], None]], RerankerPulled]


def progress(step: PullStep) -> RerankerPullProgress:
    """A step as the event sent for it."""
    total = step.total if step.total else None
    fraction = min(1.0, step.completed / total) if total else None
    return RerankerPullProgress(
        step=step.label,
        completed=step.completed,
        total=total,
        fraction=1.0 if step.done else fraction,
        done=step.done,
    )


class RerankerPulls:
    """The reranker pulls of one app: at most one runs (``PullInProgress`` for a second)."""

    def __init__(self, pull: PullReranker) -> None:
        self._pull = pull
        self._running = threading.Lock()

    @property
    def running(self) -> bool:
        """A pull started here has not ended yet."""
        return self._running.locked()

    def start(self, runtime: Runtime) -> AsyncIterator[ServerSentEvent]:
        """Start a pull into ``runtime``'s settings; its events: ``progress`` for each step,
        then ``done`` (the runtime reranks with the new model) or ``error``. Raises
        ``PullInProgress`` at once when one is running (the CLI's, in another process, is
        met by the pull's own lock and ends as an ``error`` event with the same code)."""
        if not self._running.acquire(blocking=False):
            raise PullInProgress(
                "the reranker is being downloaded already (Settings, in another tab?): "
                "wait for that download to end"
            )
        loop = asyncio.get_running_loop()
        events: asyncio.Queue[ServerSentEvent] = asyncio.Queue()

        def send(event: ServerSentEvent) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is gone: the API stopped
                loop.call_soon_threadsafe(events.put_nowait, event)

        def work() -> None:
            try:
                pulled = self._pull(
                    runtime.settings,
                    lambda step: send(ServerSentEvent(event="progress", data=progress(step))),
                )
                if pulled.up_to_date and runtime.reranker is not None:
                    loaded = True  # the same commit, loaded already
                else:
                    loaded = runtime.reload_reranker() is not None
                pulled = pulled.model_copy(update={"loaded": loaded})
                send(ServerSentEvent(event="done", data=pulled))
            except QuireError as e:
                send(ServerSentEvent(event="error", data=e.body()))
            except Exception as e:  # noqa: BLE001 - said on the stream, logged in full
                log.exception("the reranker pull failed")
                error = QuireError(f"the reranker pull failed ({type(e).__name__}: {e})")
                send(ServerSentEvent(event="error", data=error.body()))
            finally:
                self._running.release()

        threading.Thread(target=work, name="quire-reranker-pull", daemon=True).start()
        return _relay(events)


async def _relay(events: asyncio.Queue[ServerSentEvent]) -> AsyncIterator[ServerSentEvent]:
    """The pull's events, up to and including its last (``done`` or ``error``)."""
    while True:
        event = await events.get()
        yield event
        if event.event != "progress":
            return
