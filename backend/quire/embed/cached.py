"""An embedder that remembers the vectors of the texts it embedded last: one question is
embedded by the dense leg and again by the sentence scoring, and the same sentences are scored
for the search's order and then for the answer (synthesis/order.py, extractive.py)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from quire.embed.base import Embedder, Vectors, check_texts

#: Texts remembered (a question's search and answer score a few hundred).
CACHE_TEXTS = 4096


class Remembering:
    """``inner`` with a bounded least-recently-used memory of text → vector; thread-safe (the
    search legs embed from a pool). Closing it closes nothing: ``inner`` stays its owner's."""

    def __init__(self, inner: Embedder, size: int = CACHE_TEXTS) -> None:
        self.inner = inner
        self.size = size
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        texts = check_texts(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            known = {t: v for t in texts if (v := self._vectors.get(t)) is not None}
            for t in known:
                self._vectors.move_to_end(t)
        missing = list(dict.fromkeys(t for t in texts if t not in known))
        if missing:
            fresh = self.inner.embed(missing)
            with self._lock:
                for t, v in zip(missing, fresh, strict=True):
                    known[t] = self._vectors[t] = v
                while len(self._vectors) > self.size:
                    self._vectors.popitem(last=False)
        return np.stack([known[t] for t in texts]).astype(np.float32, copy=False)

    def forget(self) -> None:
        """Drop every remembered vector (benchmarks time each question as if asked first)."""
        with self._lock:
            self._vectors.clear()

    def close(self) -> None:
        return None
