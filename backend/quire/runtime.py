"""The composition root: everything a searching, answering Quire holds, opened and closed in
one place — for the API's lifespan, the CLI, the MCP server and the bench scripts.

    async with Runtime.open(settings) as rt:              # the API, `quire ask`, MCP
        async for event in rt.engine.stream(rt.engine.prepare(request)):
            ...
    with Runtime.open(settings, llm=False) as rt:         # synchronous callers
        rt.searcher.search("safe harbor")

The ingest worker is its own process and opens only what it needs (ingest/worker.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from dataclasses import dataclass, field
from types import TracebackType

from quire.config import Settings
from quire.embed import make_embedder
from quire.embed.base import Embedder
from quire.embed.cached import Remembering
from quire.llm import choice
from quire.llm.base import backend_label
from quire.llm.router import LLMRouter, make_router
from quire.retrieval.options import SearchOptions
from quire.retrieval.rerank import Reranker, load_reranker
from quire.retrieval.search import Searcher
from quire.storage.db import Database
from quire.storage.migrate import open_database
from quire.synthesis.engine import ChatEngine
from quire.synthesis.order import SentenceOrder

log = logging.getLogger(__name__)
#: What ``Runtime.warm`` searches for: ordinary words, so that every leg runs.
WARM_QUERY = "what does the introduction say about the results"


@dataclass
class Runtime:
    """The library's open resources; close them with ``close``/``aclose`` or a ``with``."""

    settings: Settings
    db: Database
    embedder: Embedder
    searcher: Searcher
    router: LLMRouter | None
    engine: ChatEngine
    #: Whether ``close`` closes the embedder: not when the caller passed it (the searcher
    #: knows the same of the reranker).
    owns_embedder: bool = field(default=True, repr=False)
    #: Set once ``warm`` has run: the first question is as fast as the rest.
    warmed: threading.Event = field(default_factory=threading.Event, repr=False)
    #: The choice file the router was built from (llm/choice.py), and routers it replaced:
    #: closed with the runtime, since an answer that started with one may still be using it.
    llm_stamp: tuple[int, int] | None = field(default=None, repr=False)
    retired: list[LLMRouter] = field(default_factory=list, repr=False)
    _llm_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def open(
        cls,
        settings: Settings,
        *,
        rerank: bool = True,
        llm: bool = True,
        embedder: Embedder | None = None,
        reranker: Reranker | None = None,
    ) -> Runtime:
        """Open the library: ``rerank`` loads the cross-encoder (when installed), ``llm``
        prepares the LLM router (no connection is made until a question needs it).

        ``embedder`` and ``reranker``, when given, are used instead of loading the ones the
        settings name (the test suite loads each model once per session); they stay the
        caller's to close."""
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        db = open_database(settings)
        closing = contextlib.ExitStack()
        closing.callback(db.dispose)
        owns_embedder, owns_reranker = embedder is None, reranker is None
        with closing:
            if embedder is None:
                embedder = make_embedder(settings)
                closing.callback(embedder.close)
            if not rerank:
                reranker = None
            elif reranker is None:
                reranker = load_reranker(settings)
                if reranker is not None:
                    closing.callback(reranker.close)
            # Searches embed a question and the sentences they score more than once.
            remembering = Remembering(embedder)
            searcher = Searcher(
                db,
                settings,
                remembering,
                reranker,
                SentenceOrder(db, remembering),
                owns_reranker=owns_reranker,
            )
            llm_stamp = choice.stamp(settings.data_dir)
            router = make_router(settings) if llm else None
            engine = ChatEngine(db, settings, searcher, router)
            closing.pop_all()  # opened: the runtime closes them from now on
        runtime = cls(settings, db, embedder, searcher, router, engine, owns_embedder)
        runtime.llm_stamp = llm_stamp
        return runtime

    @property
    def reranker(self) -> Reranker | None:
        """The cross-encoder searches use now (None: none is installed, or ``rerank=False``)."""
        return self.searcher.rerankers.current

    def reload_reranker(self) -> Reranker | None:
        """Load the installed cross-encoder and rerank with it from the next search on (a pull
        through the API installed it: no restart). A search in flight keeps the one it started
        with, closed when it ends. None, and nothing changed, when none loads."""
        reranker = load_reranker(self.settings)
        if reranker is not None:
            self.searcher.rerankers.replace(reranker)
            log.info("search reranks with %s from now on", reranker.name)
        return reranker

    def sync_llm(self, *, force: bool = False) -> bool:
        """Rebuild the LLM router when the model picked in Settings changed (the API, or
        ``quire models use`` in another process, wrote ``<data_dir>/llm.json``), so that the
        next answer is written by it without a restart. A stat per call; True when rebuilt."""
        if self.router is None and not self.settings.llm_backend_names:
            return False
        now = choice.stamp(self.settings.data_dir)
        if now == self.llm_stamp and not force:
            return False
        with self._llm_lock:
            if now == self.llm_stamp and not force:
                return False
            router = make_router(self.settings)
            if self.router is not None:
                self.retired.append(self.router)
            self.router = self.engine.router = router
            self.llm_stamp = now
        log.info("LLM: the model choice changed; answers now go to %s", _backends(router))
        return True

    def warm(self) -> None:
        """Load what searches need before the first question comes: the dense mirror of the
        vectors, the embedder's first run, the index pages every search reads (1.7 s of the
        first search at 100k chunks otherwise). Errors are logged: a search would meet them
        again and report them."""
        t0 = time.perf_counter()
        try:
            self.searcher.run(WARM_QUERY, SearchOptions(limit=10, rerank=False))
        except Exception:  # noqa: BLE001 - warming is an optimisation, never a failure
            log.exception("search: warming up failed")
        else:
            log.info("search warmed up in %.0f ms", (time.perf_counter() - t0) * 1000)
        self.warmed.set()

    def start_warming(self) -> threading.Thread:
        """``warm`` in a background thread (the API's start does not wait for it)."""
        thread = threading.Thread(target=self.warm, name="quire-warm", daemon=True)
        thread.start()
        return thread

    def close(self) -> None:
        """Close what is synchronous. A router must be closed in its event loop: ``aclose``."""
        self.searcher.close()  # and the reranker, when it is the runtime's
        if self.owns_embedder:
            self.embedder.close()
        self.db.dispose()

    async def aclose(self) -> None:
        """Close everything, the LLM router's connections first."""
        try:
            for router in [*self.retired, self.router]:
                if router is not None:
                    await router.aclose()
        finally:
            self.close()

    def __enter__(self) -> Runtime:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.router is not None or self.retired:  # outside any event loop: give the
            # routers one to close in
            asyncio.run(self.aclose())
        else:
            self.close()

    async def __aenter__(self) -> Runtime:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def _backends(router: LLMRouter | None) -> str:
    return ", ".join(backend_label(b) for b in router.backends) if router else "no model"
