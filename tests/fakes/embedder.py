"""An embedder for tests that count what was embedded: deterministic vectors from a hash."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from quire.embed.base import Vectors, l2_normalise


class CountingEmbedder:
    """Deterministic vectors from a text hash; records every text it was asked to embed."""

    name = "test:hash-8"
    dim = 8

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts += list(texts)
        rows = [
            np.frombuffer(hashlib.sha256(t.encode()).digest()[:8], dtype=np.uint8) for t in texts
        ]
        return l2_normalise(np.asarray(rows, dtype=np.float32) + 1.0)

    def close(self) -> None:
        pass
