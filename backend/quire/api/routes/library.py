"""The library as a whole: which languages it holds (and whether the embedder covers them),
and where its documents came from."""

from __future__ import annotations

from fastapi import APIRouter

from quire.api.deps import DbDep, RuntimeDep
from quire.api.schemas import LanguagesOut, SourcesOut
from quire.embed.languages import coverage, library_languages
from quire.storage import documents
from quire.storage.source_runs import library_sources

router = APIRouter(prefix="/api/library", tags=["library"])


@router.get("/languages", response_model=LanguagesOut, summary="Languages held and covered")
def languages(db: DbDep, runtime: RuntimeDep) -> LanguagesOut:
    """Each detected document language with its counts and whether the configured embedder
    covers it; ``hint`` says what to set when one is not covered."""
    covered = coverage(runtime.embedder.name, runtime.settings.embed_languages)
    with db.read() as conn:
        held = documents.language_counts(conn)
    return LanguagesOut.model_validate(library_languages(held.languages, held.undetected, covered))


@router.get("/sources", response_model=SourcesOut, summary="Where the documents came from")
def sources(db: DbDep, runtime: RuntimeDep) -> SourcesOut:
    """Documents by origin (upload, folder, chatgpt, claude, perplexity, zotero, web), the
    watched folders with their last pass, the last import of each export or Zotero library,
    and the Zotero collections and tags (the search filters ``collections`` and ``tags``)."""
    with db.read() as conn:
        return SourcesOut.model_validate(library_sources(conn, runtime.settings.watch_dir_list))
