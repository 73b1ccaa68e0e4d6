"""The FastAPI application factory. Nothing is opened at import time: the lifespan owns it all."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from quire import __version__
from quire.api import errors
from quire.api.auth import install_access_control
from quire.api.limits import BodySizeLimit
from quire.api.routes import chat, documents, health, jobs, openai_compat, perplexity, search
from quire.config import Settings
from quire.embed.base import make_embedder
from quire.llm.router import make_router
from quire.perplexity.runner import SyncRunner
from quire.retrieval.rerank import load_reranker
from quire.retrieval.search import Searcher
from quire.storage.db import open_database
from quire.synthesis.pipeline import ChatEngine

log = logging.getLogger(__name__)


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the API around ``settings`` (default: from the environment)."""
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[dict[str, Any]]:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        db = open_database(settings)
        embedder = make_embedder(settings)
        searcher = Searcher(db, settings, embedder, load_reranker(settings))
        router = make_router(settings)
        engine = ChatEngine(db, settings, searcher, router)
        sync_runner = SyncRunner(settings, db)
        log.info("Quire %s on %s", __version__, settings.data_dir)
        try:
            yield {"db": db, "searcher": searcher, "engine": engine, "perplexity": sync_runner}
        finally:
            sync_runner.close()
            if router is not None:
                await router.aclose()
            searcher.close()
            embedder.close()
            db.dispose()

    app = FastAPI(
        docs_url="/api/docs",
        redoc_url=None,
        openapi_url="/api/openapi.json",
        title="Quire",
        version=__version__,
        summary="Self-hosted research memory with page-exact citations.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    errors.install(app)
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_upload_bytes)
    install_access_control(app, settings)  # outside the body limit: no token, no body read
    for module in (documents, jobs, search, chat, openai_compat, health, perplexity):
        app.include_router(module.router)
    return app
