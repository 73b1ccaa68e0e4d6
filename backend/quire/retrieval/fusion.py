"""Fusing the legs' rankings: Reciprocal Rank Fusion (default) or Pagepiper's score blend."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

Ranking = Sequence[tuple[int, float]]  # (chunk id, leg score), best first


def rrf(
    rankings: Mapping[str, Ranking], *, k: int = 60, weights: Mapping[str, float] | None = None
) -> list[tuple[int, float]]:
    """Σ weight / (k + rank) over the legs, deduplicated by chunk id, best first.

    >>> rrf({"bm25": [(7, 3.1), (9, 2.0)], "dense": [(9, 0.8)]}, k=60)[0][0]
    9
    """
    fused: dict[int, float] = {}
    for leg, ranking in rankings.items():
        w = 1.0 if weights is None else weights.get(leg, 1.0)
        if w == 0:
            continue
        seen: set[int] = set()
        rank = 0
        for cid, _ in ranking:
            if cid in seen:  # a leg run for several query variations may repeat a chunk
                continue
            seen.add(cid)
            rank += 1
            fused[cid] = fused.get(cid, 0.0) + w / (k + rank)
    return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))


def _normalise(ranking: Ranking) -> dict[int, float]:
    best: dict[int, float] = {}
    for cid, s in ranking:
        best[cid] = max(s, best.get(cid, float("-inf")))
    if not best:
        return {}
    lo, hi = min(best.values()), max(best.values())
    span = hi - lo
    return {cid: (s - lo) / span if span > 0 else 1.0 for cid, s in best.items()}


def blend(bm25: Ranking, dense: Ranking, *, bm25_weight: float = 0.5) -> list[tuple[int, float]]:
    """Pagepiper's fusion: min-max normalised scores mixed 50/50; BM25 hits first on ties."""
    b, d = _normalise(bm25), _normalise(dense)
    mixed = {
        cid: bm25_weight * b.get(cid, 0.0) + (1 - bm25_weight) * d.get(cid, 0.0)
        for cid in b.keys() | d.keys()
    }
    return sorted(mixed.items(), key=lambda kv: (-kv[1], kv[0] not in b, kv[0]))
