"""Search: hybrid retrieval with per-leg ranks, scores and per-stage timings."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field

from quire.api.schemas import ErrorOut, Id
from quire.retrieval.search import Searcher, SearchOptions

router = APIRouter(prefix="/api", tags=["search"])


def get_searcher(request: Request) -> Searcher:
    searcher: Searcher = request.state.searcher
    return searcher


SearcherDep = Annotated[Searcher, Depends(get_searcher)]


class SearchRequest(BaseModel):
    query: str = Field(min_length=1, max_length=20_000, description="What to look for.")
    strategy: Literal["precise", "exhaustive"] | None = Field(
        default=None,
        description="Candidate pool 50 (precise) or 80 (exhaustive); default: planned.",
    )
    hyde_mode: Literal["off", "fusion", "supplement"] | None = None
    document_ids: list[Id] = Field(default_factory=list, max_length=1000)
    kinds: list[Literal["pdf", "epub", "perplexity", "markdown", "text"]] = Field(
        default_factory=list
    )
    legs: list[Literal["bm25", "dense", "exact"]] = Field(
        default=["bm25", "dense", "exact"], min_length=1
    )
    rerank: bool = True
    limit: int | None = Field(default=None, ge=1, le=200)
    context: bool = Field(default=False, description="Add the adjacent pages (±1) of each hit.")


class HitOut(BaseModel):
    chunk_id: int
    document_id: int
    title: str
    kind: str
    filename: str
    page: int
    heading_path: str
    text: str
    highlights: list[tuple[int, int]] = Field(description="[start, end) spans of matches in text.")
    ranks: dict[str, int] = Field(description="1-based rank in each leg that found it.")
    scores: dict[str, float] = Field(description="Each leg's raw score (higher is better).")
    fused: float
    rerank: float | None = Field(description="Cross-encoder logit, when reranked.")
    metadata: dict[str, Any]
    context: dict[str, Any] | None = None


class PlanOut(BaseModel):
    strategy: str
    queries: list[str]
    hard_keywords: list[str]
    hyde_passage: str | None
    source: str


class SearchResponse(BaseModel):
    query: str
    strategy: str
    plan: PlanOut
    hits: list[HitOut]
    counts: dict[str, int]
    timings_ms: dict[str, float]
    cpu_ms: float
    notices: list[str]
    rerank: dict[str, Any] | None
    hyde_used: bool


@router.post(
    "/search",
    response_model=SearchResponse,
    responses={400: {"model": ErrorOut}, 404: {"model": ErrorOut}, 422: {"model": ErrorOut}},
)
async def search(body: SearchRequest, searcher: SearcherDep) -> SearchResponse:
    """Hybrid search over the ready documents."""
    options = SearchOptions(
        strategy=body.strategy,
        hyde_mode=body.hyde_mode,
        document_ids=tuple(body.document_ids),
        kinds=tuple(body.kinds),
        legs=tuple(body.legs),
        rerank=body.rerank,
        limit=body.limit,
        context=body.context,
    )
    result = await asyncio.to_thread(searcher.search, body.query, options)
    return SearchResponse.model_validate(result.to_dict())
