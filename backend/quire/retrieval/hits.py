"""What a search returns: its hits, with where each came from (every ranking a request
produced, keyed by :class:`LegRun`: the leg, and which query variation it ran for; HyDE's
ranking is a dense run of its own), and the timings of its stages."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from quire.retrieval import fusion
from quire.retrieval.options import Leg, Strategy
from quire.retrieval.planner import Plan
from quire.retrieval.rerank import RerankReport
from quire.storage.chunks import ChunkView
from quire.storage.records import Kind
from quire.storage.web_sources import WebSource

#: Where a ranking came from: a leg, HyDE's hypothetical passage (a dense run), or the window
#: stage (the fused candidates by their best few sentences).
RankSource = Leg | Literal["hyde", "window"]


@dataclass(frozen=True)
class LegRun:
    """One ranking of a request: ``source`` run for query variation ``variation``."""

    source: RankSource
    variation: int = 0

    def __str__(self) -> str:
        return f"{self.source}#{self.variation}"


Rankings = dict[LegRun, fusion.Ranking]


@dataclass
class Hit:
    chunk_id: int
    document_id: int
    title: str
    kind: Kind
    filename: str
    page: int
    heading_path: str
    text: str
    highlights: list[tuple[int, int]]
    ranks: dict[str, int]
    scores: dict[str, float]
    fused: float
    rerank: float | None = None
    #: The [start, end) characters of ``text`` the cross-encoder read, when reranked.
    rerank_span: tuple[int, int] | None = None
    #: [start, end) of ``text`` from the first to the last query term of its best window of
    #: sentences (where to read it; None: no query term in it, or beyond the 50th hit).
    focus: tuple[int, int] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    context: dict[str, Any] | None = None
    #: The printed page label (PDF /PageLabels), e.g. "xii" or "166"; None when the PDF has
    #: none or it equals the page number.
    page_label: str | None = None
    #: The web pages the passage's footnote markers cite (Perplexity; else empty).
    web_sources: list[WebSource] = field(default_factory=list)


def from_view(view: ChunkView, **found: Any) -> Hit:
    """The hit of a chunk, with what the search found of it (``highlights``, ``ranks``,
    ``scores``, ``fused``, …; none for a passage read without being found)."""
    return Hit(
        chunk_id=view.chunk_id,
        document_id=view.document_id,
        title=view.title,
        kind=view.kind,
        filename=view.filename,
        page=view.page,
        heading_path=view.heading_path,
        text=view.text,
        metadata=view.metadata,
        page_label=view.page_label,
        web_sources=view.web_sources,
        **{"highlights": [], "ranks": {}, "scores": {}, "fused": 0.0, **found},
    )


@dataclass
class SearchResult:
    query: str
    plan: Plan
    strategy: Strategy
    hits: list[Hit]
    counts: dict[str, int]
    timings_ms: dict[str, float]
    cpu_ms: float
    notices: list[str]
    rerank: RerankReport | None = None
    hyde_used: bool = False

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["plan"] = self.plan.model_dump()
        out["rerank"] = self.rerank.model_dump() if self.rerank else None
        return out


def merged(rankings: Rankings, *sources: RankSource) -> list[tuple[int, float]]:
    """The runs of these sources, one after another (for the score blend)."""
    return [h for run, r in rankings.items() if run.source in sources for h in r]


def sources(rankings: Rankings) -> list[RankSource]:
    return list(dict.fromkeys(run.source for run in rankings))


def per_leg(
    rankings: Rankings,
) -> tuple[dict[int, dict[str, int]], dict[int, dict[str, float]]]:
    """Best rank (1-based) and best score of each chunk in each leg (over its variations)."""
    ranks: dict[int, dict[str, int]] = {}
    scores: dict[int, dict[str, float]] = {}
    for run, ranking in rankings.items():
        leg = run.source
        for pos, (cid, score) in enumerate(ranking, start=1):
            r = ranks.setdefault(cid, {})
            if leg not in r or pos < r[leg]:
                r[leg] = pos
            s = scores.setdefault(cid, {})
            s[leg] = max(score, s.get(leg, float("-inf")))
    return ranks, scores
