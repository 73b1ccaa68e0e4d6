"""What a caller may choose about one search, defined once: the REST search body, the chat
request, ``/v1``, the CLI and the MCP tools all carry these models (or extend them).

    options = SearchOptions(kinds=("pdf",), limit=5)
    result = searcher.search("safe harbor", options)
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from quire.config import LANGUAGE_TAG, HydeMode, canonical_tag
from quire.storage.records import Id, Kind, Origin

Strategy = Literal["precise", "exhaustive"]
STRATEGIES: tuple[Strategy, ...] = get_args(Strategy)
Leg = Literal["bm25", "dense", "exact"]
ALL_LEGS: tuple[Leg, ...] = get_args(Leg)
HYDE_MODES: tuple[HydeMode, ...] = get_args(HydeMode)
#: A document language as stored ("en", "ja", "zh-Hant"); "ZH-hant" is read as "zh-Hant".
LanguageTag = Annotated[
    str, Field(pattern=LANGUAGE_TAG, max_length=35), AfterValidator(canonical_tag)
]


class RetrievalOptions(BaseModel):
    """The choices an answer shares with a search: how widely, where, and whether to rerank."""

    model_config = ConfigDict(frozen=True)

    strategy: Strategy | None = Field(
        default=None,
        description="Candidate pool 50 (precise) or 80 (exhaustive); default: planned.",
    )
    hyde_mode: HydeMode | None = Field(
        default=None,
        description="When a hypothetical passage joins the dense leg (QUIRE_HYDE_MODE).",
    )
    document_ids: tuple[Id, ...] = Field(
        default=(), max_length=1000, description="Only these documents (default: all)."
    )
    kinds: tuple[Kind, ...] = Field(default=(), description="Only these kinds (default: all).")
    languages: tuple[LanguageTag, ...] = Field(
        default=(), max_length=100, description="Document languages to search (empty: all)"
    )
    origins: tuple[Origin, ...] = Field(
        default=(),
        description="Only documents from these sources: upload, folder, chatgpt, claude, "
        "perplexity, zotero, web (empty: all).",
    )
    collections: tuple[Annotated[str, Field(min_length=1, max_length=500)], ...] = Field(
        default=(),
        max_length=100,
        description="Only documents in these Zotero collections (a collection's path, "
        '"Thesis/Methods"; a parent includes its subcollections).',
    )
    tags: tuple[Annotated[str, Field(min_length=1, max_length=500)], ...] = Field(
        default=(), max_length=100, description="Only documents with one of these Zotero tags."
    )
    rerank: bool = Field(default=True, description="Rerank with the cross-encoder if installed.")

    def retrieval(self) -> RetrievalOptions:
        """Just these fields (a request model that extends this class carries more)."""
        return RetrievalOptions.model_validate(
            self.model_dump(include=set(RetrievalOptions.model_fields))
        )


class SearchOptions(RetrievalOptions):
    """A search's options: the shared ones plus the legs, the depth and the context pages."""

    legs: tuple[Leg, ...] = Field(default=ALL_LEGS, min_length=1, description="Legs to run.")
    limit: int | None = Field(
        default=None, ge=1, le=200, description="Hits to return (default: by strategy)."
    )
    context: bool = Field(default=False, description="Add the adjacent pages (±1) of each hit.")

    @classmethod
    def of(cls, options: RetrievalOptions, **more: object) -> SearchOptions:
        """Search options from shared ones (an answer's), with ``more`` set."""
        return cls.model_validate({**options.retrieval().model_dump(), **more})
