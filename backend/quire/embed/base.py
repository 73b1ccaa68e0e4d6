"""The embedder protocol and the factory that picks one from the settings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    pass

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors, one row per text, in input order.

    ``name`` is the model identity stored next to the vectors (``"local:all-MiniLM-L6-v2-int8"``,
    ``"ollama:nomic-embed-text"``): vectors of two names are never mixed in one index.
    Not ``runtime_checkable`` on purpose: on Python 3.11 ``isinstance`` would read ``dim``,
    which an Ollama embedder that has not embedded anything yet learns with a request.
    """

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``; returns shape ``(len(texts), dim)``, rows L2-normalised."""
        ...

    def close(self) -> None:
        """Release the model or the connection pool."""
        ...


def l2_normalise(matrix: npt.NDArray[np.floating]) -> Vectors:
    """Scale each row to unit length (all-zero rows stay zero)."""
    m = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return np.ascontiguousarray(m / np.maximum(norms, np.float32(1e-12)), dtype=np.float32)


def check_texts(texts: Sequence[str]) -> list[str]:
    """Reject a bare string (a common slip that would embed it character by character)."""
    if isinstance(texts, str | bytes):
        raise TypeError("embed() takes a sequence of strings, not a single string")
    out = list(texts)
    for t in out:
        if not isinstance(t, str):
            raise TypeError(f"embed() takes strings, got {type(t).__name__}")
    return out
