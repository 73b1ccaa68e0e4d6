"""Health: is the service up, and what it holds."""

from __future__ import annotations

from fastapi import APIRouter, Request

from quire import __version__
from quire.api.deps import DbDep, SettingsDep
from quire.api.schemas import (
    EmbedderStatus,
    FormatOut,
    HealthOut,
    MeOut,
    MeUser,
    RerankerStatus,
    VectorStatus,
)
from quire.formats.enabled import format_status
from quire.retrieval.rerank import find_model_file, resolve_model_dir
from quire.retrieval.search import Searcher
from quire.runtime import Runtime
from quire.storage import access, documents, vectors

router = APIRouter(prefix="/api", tags=["health"])


@router.get("/health", response_model=HealthOut)
def health(db: DbDep, settings: SettingsDep, request: Request) -> HealthOut:
    with db.read() as conn:
        counts = documents.library_counts(conn)
        meta = vectors.read_meta(conn)
        vec_count = vectors.count(conn) if meta else 0
    return HealthOut(
        status="ok",
        version=__version__,
        documents=counts.documents,
        chunks=counts.chunks,
        jobs_queued=counts.jobs_queued,
        jobs_running=counts.jobs_running,
        vectors=VectorStatus(
            model=meta.model if meta else None,
            dim=meta.dim if meta else None,
            state=meta.state if meta else None,
            count=vec_count,
        ),
        embedder=_embedder(request, meta.dim if meta else None),
        reranker=_reranker(request, settings),
        formats=[FormatOut(**vars(f)) for f in format_status(settings)],
        warm=(runtime := getattr(request.state, "runtime", None)) is not None
        and runtime.warmed.is_set(),
    )


def _searcher(request: Request) -> Searcher | None:
    runtime: Runtime | None = getattr(request.state, "runtime", None)
    return runtime.searcher if runtime is not None else None


def _embedder(request: Request, dim: int | None) -> EmbedderStatus | None:
    searcher = _searcher(request)
    if searcher is None or searcher.embedder is None:
        return None
    # The name only: an Ollama embedder learns its size with a request, not worth a health check.
    return EmbedderStatus(name=searcher.embedder.name, dim=dim)


def _reranker(request: Request, settings: SettingsDep) -> RerankerStatus:
    searcher = _searcher(request)
    loaded = searcher is not None and searcher.rerankers.current is not None
    model_dir = resolve_model_dir(settings)
    model = str(model_dir)
    if loaded:
        error = None
    elif find_model_file(model_dir) is not None:
        # By `quire models pull` (a pull in Settings loads what it installs).
        error = (
            "installed after the API started: restart it, or press Load reranker in "
            "Settings, to rerank"
        )
    else:
        error = (
            "not installed: Download reranker in Settings, or run `quire models pull "
            "reranker` (until then, the first hits by their best sentence)"
        )
    return RerankerStatus(model=model, loaded=loaded, error=error)


@router.get("/me", response_model=MeOut, summary="Who is signed in")
def me() -> MeOut:
    """The person this request's token names (the web app shows it), and whether the library
    has people at all."""
    # The access middleware read everything only on a library without people.
    reader = access.current()
    user = None
    if reader.user_id is not None and reader.name is not None:
        user = MeUser(id=reader.user_id, name=reader.name, admin=reader.admin)
    return MeOut(mode="single" if reader.everything else "people", user=user)
