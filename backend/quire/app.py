"""The FastAPI application factory. Nothing is opened at import time: the lifespan owns it all."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from quire import __version__
from quire.api import errors, sse
from quire.api.auth import install_access_control
from quire.api.limits import BodySizeLimit
from quire.api.reranker_pull import PullStep, RerankerPulled, RerankerPulls
from quire.api.routes import (
    chat,
    documents,
    exports,
    health,
    jobs,
    library,
    links,
    models,
    notes,
    openai_compat,
    perplexity,
    search,
)
from quire.api.schemas import error_responses
from quire.config import Settings
from quire.embed.base import Embedder
from quire.mcp import http as mcp_http
from quire.models.hub import SOURCE_TEXT, model_spec
from quire.models.pull import pull
from quire.retrieval.rerank import Reranker
from quire.runtime import Runtime
from quire.sources.perplexity.runner import SyncRunner
from quire.storage import access

log = logging.getLogger(__name__)


def create_app(
    settings: Settings | None = None,
    *,
    embedder: Embedder | None = None,
    reranker: Reranker | None = None,
) -> FastAPI:
    """Build the API around ``settings`` (default: from the environment). ``embedder`` and
    ``reranker`` replace the models the settings name (see ``Runtime.open``)."""
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[dict[str, Any]]:
        async with Runtime.open(settings, embedder=embedder, reranker=reranker) as runtime:
            sync_runner = SyncRunner(settings, runtime.db)
            warming = runtime.start_warming() if settings.warm_up else None
            log.info("Quire %s on %s", __version__, settings.data_dir)
            # Fail closed: what starts from here without a request's reader (the MCP
            # server's session tasks) reads nothing until it binds one (storage/access.py).
            access.bind(access.NOBODY)
            try:
                async with mcp_http.serve(runtime) as mcp_sessions:
                    yield {
                        "runtime": runtime,
                        "perplexity": sync_runner,
                        mcp_http.STATE_KEY: mcp_sessions,
                    }
            finally:
                sync_runner.close()
                if warming is not None:
                    warming.join(timeout=30)  # before the runtime closes what it reads

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
    # The API may not import quire.models (a sibling): the pull is handed in from here.
    app.state.reranker_pulls = RerankerPulls(pull_reranker)
    errors.install(app)
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_upload_bytes)
    install_access_control(app, settings)  # outside the body limit: no token, no body read
    for module in (
        links,
        documents,
        notes,
        library,
        jobs,
        search,
        chat,
        exports,
        models,
        openai_compat,
        health,
        perplexity,
    ):
        # Malformed requests get the one error shape (api/errors.py), not FastAPI's own.
        app.include_router(module.router, responses=error_responses(422))
    app.router.routes.append(mcp_http.route(settings))  # MCP over Streamable HTTP (docs/mcp.md)
    generate = app.openapi
    app.openapi = lambda: sse.document_streams(generate())  # type: ignore[method-assign]
    return app


def pull_reranker(settings: Settings, report: Callable[[PullStep], None]) -> RerankerPulled:
    """``quire models pull reranker`` for the API (``POST /api/models/reranker/pull``): the
    reranker the settings name, fetched, converted, checked and installed; what was done."""
    spec = model_spec("reranker", settings)
    result = pull(spec, report=report)
    m = result.manifest
    return RerankerPulled(
        repo=m.repo,
        commit=m.commit,
        source=SOURCE_TEXT[m.source],
        size=sum(m.files.values()),
        path=str(spec.target / m.model_file),
        up_to_date=result.up_to_date,
        notes=result.notes,
    )
