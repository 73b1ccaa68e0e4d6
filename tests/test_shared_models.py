"""The premise of the shared embedder (tests/runtime.py): the model is a pure function of each
text, so remembering vectors changes nothing a test can see."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from quire.config import Settings
from quire.embed import make_embedder
from tests.conftest import DOCS
from tests.runtime import SharedEmbedder, shared_embedder


def _texts() -> list[str]:
    rng = random.Random(3)
    words = (DOCS / "perplexity" / "pnw-states-multiturn.md").read_text().split()
    texts = [" ".join(rng.choices(words, k=rng.randint(1, 300))) for _ in range(12)]
    return [*texts, "x", "safe harbor", texts[0]]  # a repeat, and very short texts


def test_a_vector_does_not_depend_on_its_batch() -> None:
    model = make_embedder(Settings())
    try:
        texts = _texts()
        together = model.embed(texts)
        alone = np.vstack([model.embed([t]) for t in texts])
        shuffled = list(range(len(texts)))
        random.Random(5).shuffle(shuffled)
        reordered = model.embed([texts[i] for i in shuffled])
        assert np.array_equal(together, alone)
        assert np.array_equal(together[shuffled], reordered)
    finally:
        model.close()


def test_the_shared_embedder_returns_what_the_model_returns() -> None:
    model = make_embedder(Settings())
    shared = SharedEmbedder(make_embedder(Settings()))
    try:
        texts = _texts()
        first = shared.embed(texts[:8])
        again = shared.embed(texts)  # eight remembered, the rest run
        assert np.array_equal(first, model.embed(texts[:8]))
        assert np.array_equal(again, model.embed(texts))
        assert again.dtype == np.float32 and again.shape == (len(texts), model.dim)
        assert shared.embed([]).shape == (0, model.dim)
        shared.close()  # a no-op: the apps and workers handed it close it
        assert np.array_equal(shared.embed(texts[:1]), model.embed(texts[:1]))
        assert (shared.name, shared.dim) == (model.name, model.dim)
    finally:
        model.close()


def test_only_the_default_model_is_shared() -> None:
    assert shared_embedder(Settings()) is shared_embedder(Settings())
    assert shared_embedder(Settings(embed_threads=2)) is None
    assert shared_embedder(Settings(embedder="local-sint8")) is None
    assert shared_embedder(Settings(embedder="ollama")) is None


class _Counting:
    """The model, counting the texts it is asked to embed."""

    def __init__(self) -> None:
        self.model = make_embedder(Settings())
        self.texts = 0

    def __getattr__(self, name: str) -> object:
        return getattr(self.model, name)

    def embed(self, texts: list[str]) -> np.ndarray:
        self.texts += len(texts)
        return self.model.embed(texts)


def test_a_vector_stored_by_one_process_is_read_by_another(tmp_path: Path) -> None:
    """Two shared embedders over one file, as two xdist workers have: the second runs the
    model on none of the first's texts and returns the same bytes."""
    first, second = _Counting(), _Counting()
    one = SharedEmbedder(first, tmp_path / "vectors.db")  # type: ignore[arg-type]
    other = SharedEmbedder(second, tmp_path / "vectors.db")  # type: ignore[arg-type]
    try:
        texts = _texts()
        written = one.embed(texts[:8])
        read = other.embed(texts)  # eight from the file, the rest (one a repeat) run
        assert first.texts == 8 and second.texts == len(set(texts)) - 8
        assert np.array_equal(read, first.model.embed(texts))
        assert np.array_equal(read[:8], written)
        assert read.dtype == np.float32 and other.embed([]).shape == (0, first.model.dim)
    finally:
        for shared in (one, other):
            shared.inner.close()
        for counting in (first, second):
            counting.model.close()
