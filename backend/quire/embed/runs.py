"""Splitting length-sorted inputs into ONNX runs: shared by the embedder and the reranker.

One run of 64 texts padded to 256 tokens costs this CPU ~1.5x more time and ~10x more memory
than several small runs (bench/embed.py, bench/rerank.py), so runs are capped by padded tokens.
"""

from __future__ import annotations


def token_runs(
    order: list[int], lengths: list[int], *, batch_size: int, max_batch_tokens: int | None
) -> list[list[int]]:
    """Split ``order`` (sorted by ascending ``lengths``) into runs of at most ``batch_size``
    items whose padded size (items × longest) stays within ``max_batch_tokens``."""
    runs: list[list[int]] = []
    run: list[int] = []
    for i, length in zip(order, lengths, strict=True):
        # Sorted ascending, so ``length`` is the padded width if ``i`` joins the run.
        full = len(run) >= batch_size or (
            max_batch_tokens is not None
            and bool(run)
            and (len(run) + 1) * length > max_batch_tokens
        )
        if full:
            runs.append(run)
            run = []
        run.append(i)
    if run:
        runs.append(run)
    return runs
