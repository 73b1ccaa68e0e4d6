"""FTS5's BM25, as sqlite's fts5_aux.c computes it (fts5Bm25Function), for the scores Quire
computes itself: from the worker's stored postings (both backends), PostgreSQL's postings, and
the exact leg's keyword counts. The operations are in FTS5's order, so the numbers equal
``bm25()``'s to float noise (tests/retrieval/test_term_scores.py, tests/storage/
test_postgres.py compare them)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

# FTS5's bm25() constants (fts5_aux.c).
K1, B = 1.2, 0.75


def bm25(f: Any, length: Any, idf_: float, avgdl: float) -> Any:
    """fts5Bm25Function's score of one phrase (positive: higher is better), with its
    operations in that order: ``f`` the phrase's weighted count in a row, ``length`` the row's
    tokens (floats or arrays of them)."""
    return idf_ * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + B * length / avgdl)))


def counts_score(
    tf_text: Any, tf_heading: Any, length: Any, idf_: float, avgdl: float, hw: float
) -> Any:
    """FTS5's bm25() of one term from its counts in the text and heading columns (arrays), the
    heading weighted ``hw``, with the operations in fts5Bm25Function's order."""
    return bm25(tf_text * 1.0 + tf_heading * hw, length, idf_, avgdl)


def idf(rows: int, df: int) -> float:
    """FTS5's IDF: log((N - n + 0.5) / (n + 0.5)), floored at 1e-6."""
    value = math.log((rows - df + 0.5) / (df + 0.5))
    return value if value > 0.0 else 1e-6


def ranked(ids: npt.NDArray[np.int64], scores: npt.NDArray[np.float64], k: int) -> Any:
    """The positions of the best ``k`` by score, best first, ties broken by the lower id (the
    order of FTS5's ``ORDER BY bm25(...)``, rowid)."""
    rows = np.arange(len(ids))
    if k < 1:
        return rows[:0]
    if len(rows) > k:
        # The best ``k`` and everything tied with the last of them, then the tie-break.
        kth = scores[np.argpartition(-scores, k - 1)[k - 1]]
        rows = np.flatnonzero(scores >= kth)
    return rows[np.lexsort((ids[rows], -scores[rows]))][:k]
