"""The searcher's remembering embedder: the same vectors as the model, each text embedded
once while remembered, and a bounded memory."""

from __future__ import annotations

import numpy as np

from quire.embed.cached import Remembering
from tests.fakes.embedder import CountingEmbedder


def test_vectors_are_the_models_and_each_text_is_embedded_once() -> None:
    inner = CountingEmbedder()
    memo = Remembering(inner, size=3)
    first = memo.embed(["a cat", "the dog", "a cat"])
    assert np.array_equal(first, CountingEmbedder().embed(["a cat", "the dog", "a cat"]))
    assert inner.texts == ["a cat", "the dog"]
    again = memo.embed(["the dog", "an eel"])
    assert inner.texts == ["a cat", "the dog", "an eel"]
    assert np.array_equal(again[0], first[1])
    assert memo.embed([]).shape == (0, inner.dim)
    assert (memo.name, memo.dim) == (inner.name, inner.dim)


def test_the_memory_is_bounded_and_forgets_the_least_recently_used() -> None:
    inner = CountingEmbedder()
    memo = Remembering(inner, size=2)
    memo.embed(["one", "two"])
    memo.embed(["one"])  # "one" is now the most recent
    memo.embed(["three"])  # "two" goes
    inner.texts.clear()
    memo.embed(["one", "three", "two"])
    assert inner.texts == ["two"]
    memo.forget()
    memo.embed(["one"])
    assert inner.texts == ["two", "one"]
