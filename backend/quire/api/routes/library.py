"""The library as a whole: which languages it holds, and whether the embedder covers them."""

from __future__ import annotations

from fastapi import APIRouter

from quire.api.deps import DbDep, RuntimeDep
from quire.api.schemas import LanguagesOut
from quire.embed.languages import coverage
from quire.ingest.language import library_languages

router = APIRouter(prefix="/api/library", tags=["library"])


@router.get("/languages", response_model=LanguagesOut, summary="Languages held and covered")
def languages(db: DbDep, runtime: RuntimeDep) -> LanguagesOut:
    """Each detected document language with its counts and whether the configured embedder
    covers it; ``hint`` says what to set when one is not covered."""
    covered = coverage(runtime.embedder.name, runtime.settings.embed_languages)
    with db.read() as conn:
        return LanguagesOut.model_validate(library_languages(conn, covered))
