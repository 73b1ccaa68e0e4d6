"""Dependencies: routes get settings and the runtime's resources through these aliases."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from quire.config import Settings
from quire.errors import Forbidden
from quire.retrieval.search import Searcher
from quire.runtime import Runtime
from quire.sources.perplexity.runner import SyncRunner
from quire.storage import access
from quire.storage.db import Database
from quire.synthesis.engine import ChatEngine


def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def get_runtime(request: Request) -> Runtime:
    runtime: Runtime = request.state.runtime
    return runtime


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]


def get_db(runtime: RuntimeDep) -> Database:
    return runtime.db


def get_searcher(runtime: RuntimeDep) -> Searcher:
    return runtime.searcher


def get_engine(runtime: RuntimeDep) -> ChatEngine:
    runtime.sync_llm()  # a model picked since the last request answers this one
    return runtime.engine


def get_sync_runner(request: Request) -> SyncRunner:
    runner: SyncRunner = request.state.perplexity
    return runner


SettingsDep = Annotated[Settings, Depends(get_settings)]
DbDep = Annotated[Database, Depends(get_db)]
SearcherDep = Annotated[Searcher, Depends(get_searcher)]
EngineDep = Annotated[ChatEngine, Depends(get_engine)]
SyncRunnerDep = Annotated[SyncRunner, Depends(get_sync_runner)]


def require_admin() -> None:
    """Library-wide settings (Perplexity sync): on a library with people, admins only."""
    reader = access.current()
    if not (reader.everything or reader.admin):
        raise Forbidden("only an admin of this library may use this (quire users add --admin)")


AdminOnly = Depends(require_admin)
