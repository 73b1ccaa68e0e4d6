"""The optional dynamic-int8 variant built from the packaged model (needs `onnx`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx  # noqa: E402 - the dev extra installs it (optimize.py needs it at build time)
import pytest

from quire.embed.local import MODEL_NAME, LocalEmbedder, default_model_path
from quire.embed.optimize import (
    OPTIMIZED_NAME,
    build_optimized_model,
    fold_int8_weights,
    optimized_embedder,
    optimized_model_path,
)

TEXTS = [
    "A man is eating food.",
    "Glucocorticoid receptor signalling in T cells modulates thymic selection.",
    "SQLite FTS5 ranks passages with bm25().",
]


@pytest.fixture(scope="module")
def packaged() -> Iterator[LocalEmbedder]:
    with LocalEmbedder() as e:
        yield e


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


def test_folding_keeps_the_model_exact(packaged: LocalEmbedder, tmp_path: Path) -> None:
    model = onnx.load(str(default_model_path()))
    assert fold_int8_weights(model) == 38  # 2 embedding tables + 6 layers x 6 matrices
    assert not any(n.op_type == "Cast" and n.input[0].endswith("_q") for n in model.graph.node)
    path = tmp_path / "fp32.onnx"
    onnx.save(model, str(path))
    with LocalEmbedder(model_path=path, name="test:fp32") as fp32:
        np.testing.assert_allclose(fp32.embed(TEXTS), packaged.embed(TEXTS), atol=1e-5)


def test_optimized_model_is_close_and_named_apart(packaged: LocalEmbedder, cache_dir: Path) -> None:
    with optimized_embedder(cache_dir) as opt:
        assert opt.name == OPTIMIZED_NAME != MODEL_NAME  # never mixed in one index
        assert opt.dim == 384
        got = opt.embed(TEXTS)
    cosines = (got * packaged.embed(TEXTS)).sum(axis=1)
    assert cosines.min() > 0.98, cosines
    assert cosines.min() < 0.99999  # really a different (quantised) model


def test_build_is_cached(cache_dir: Path) -> None:
    path = build_optimized_model(cache_dir)
    assert path == optimized_model_path(cache_dir)
    stamp = path.stat().st_mtime_ns
    assert build_optimized_model(cache_dir).stat().st_mtime_ns == stamp
    assert [p.name for p in cache_dir.iterdir()] == [path.name]  # no temp files left behind
