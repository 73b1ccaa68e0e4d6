"""Search: hybrid retrieval with per-leg ranks, scores and per-stage timings."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field

from quire.api.deps import SearcherDep
from quire.api.schemas import error_responses
from quire.retrieval.options import SearchOptions, Strategy
from quire.retrieval.planner import Plan
from quire.retrieval.rerank import RerankReport
from quire.storage.records import Kind, Placed
from quire.storage.web_sources import WebSource

router = APIRouter(prefix="/api", tags=["search"])


class SearchRequest(SearchOptions):
    """What to look for, and the search options."""

    query: str = Field(min_length=1, max_length=20_000, description="What to look for.")


class HitOut(Placed):
    chunk_id: int
    document_id: int
    title: str
    kind: Kind
    filename: str
    page: int
    page_label: str | None = Field(
        default=None,
        description="The printed page label (PDF /PageLabels), e.g. 'xii' or '166'; None when "
        "the PDF has none or it equals the page number",
    )
    heading_path: str
    text: str
    highlights: list[tuple[int, int]] = Field(description="[start, end) spans of matches in text.")
    ranks: dict[str, int] = Field(description="1-based rank in each leg that found it.")
    scores: dict[str, float] = Field(description="Each leg's raw score (higher is better).")
    fused: float
    rerank: float | None = Field(description="Cross-encoder logit, when reranked.")
    rerank_span: tuple[int, int] | None = Field(
        default=None, description="[start, end) of text the cross-encoder read, when reranked."
    )
    focus: tuple[int, int] | None = Field(
        default=None,
        description="[start, end) of text from the first to the last query term of its best "
        "few sentences; null when no query term is in it (or past the 50th hit).",
    )
    metadata: dict[str, Any]
    context: dict[str, Any] | None = None
    web_sources: list[WebSource] = Field(
        default_factory=list,
        description="The web pages the passage's footnote markers cite, by their number in the "
        "turn (Perplexity; empty for other kinds).",
    )


class SearchResponse(BaseModel):
    query: str
    strategy: Strategy
    plan: Plan
    hits: list[HitOut]
    counts: dict[str, int]
    timings_ms: dict[str, float]
    cpu_ms: float
    notices: list[str]
    rerank: RerankReport | None
    hyde_used: bool


@router.post("/search", response_model=SearchResponse, responses=error_responses(400, 404, 422))
async def search(body: SearchRequest, searcher: SearcherDep) -> SearchResponse:
    """Hybrid search over the ready documents."""
    result = await asyncio.to_thread(searcher.search, body.query, body)
    return SearchResponse.model_validate(result.to_dict())
