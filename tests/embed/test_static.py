"""The per-row int8 variant (embed/static.py): built from the packaged weights, batch-independent,
close to the packaged model, chosen by QUIRE_EMBEDDER=local-sint8 under its own name."""

from __future__ import annotations

import collections
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest

from quire.config import Settings
from quire.embed import embedder_name, make_embedder
from quire.embed.local import MODEL_NAME, LocalEmbedder, default_model_path
from quire.embed.optimize import fold_int8_weights
from quire.embed.static import (
    ASYMMETRY,
    STATIC_NAME,
    build_static_model,
    drop_nan_guards,
    quantize_rows,
    static_embedder,
    static_model_path,
)
from quire.errors import EmbedderUnavailable
from tests.conftest import SCIFACT

pytestmark = pytest.mark.slow  # the packaged MiniLM rebuilt with int8 activations

QUERIES = [
    "0-dimensional biomaterials show inductive properties.",
    "ALDH1 expression is associated with poorer prognosis for breast cancer primary tumors.",
    "Aspirin lowers myocardial infarction risk.",
    "bm25",
]


def passages(n: int = 20) -> list[str]:
    """The first ``n`` SciFact abstracts as ``title\\ntext`` (most run to the 256-token cap)."""
    out = []
    with (SCIFACT / "corpus.jsonl").open(encoding="utf-8") as f:
        for line, _ in zip(f, range(n), strict=False):
            doc = json.loads(line)
            out.append(f"{doc['title']}\n{doc['text']}")
    return out


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def packaged() -> Iterator[LocalEmbedder]:
    with LocalEmbedder() as e:
        yield e


@pytest.fixture(scope="module")
def sint8(cache_dir: Path) -> Iterator[LocalEmbedder]:
    with static_embedder(cache_dir) as e:
        yield e


def test_rewrite_quantises_every_dense_product_and_drops_the_nan_guards() -> None:
    model = onnx.load(str(default_model_path()))
    fold_int8_weights(model)
    assert drop_nan_guards(model) == 6  # one per layer's softmax
    assert quantize_rows(model, asymmetric=ASYMMETRY) == 36  # 6 x (q, k, v, out, ffn in/out)
    ops = collections.Counter(n.op_type for n in model.graph.node)
    assert ops["MatMulInteger"] == 36 and ops["MatMul"] == 12  # attention stays fp32
    assert ops["ReduceMin"] == 6  # a zero point per row at the 6 feed-forward outputs only
    assert ops["IsNaN"] == 0 and ops["DynamicQuantizeLinear"] == 0  # no per-tensor scale


def test_dropping_the_nan_guards_changes_no_bit(packaged: LocalEmbedder, tmp_path: Path) -> None:
    model = onnx.load(str(default_model_path()))
    drop_nan_guards(model)
    path = tmp_path / "unguarded.onnx"
    onnx.save(model, str(path))
    texts = passages(6) + QUERIES
    with LocalEmbedder(model_path=path, name="test:unguarded") as unguarded:
        assert np.array_equal(unguarded.embed(texts), packaged.embed(texts))


def test_close_to_the_packaged_model_on_real_passages(
    packaged: LocalEmbedder, sint8: LocalEmbedder
) -> None:
    texts = passages(20)
    cosines = (sint8.embed(texts) * packaged.embed(texts)).sum(axis=1)
    assert cosines.min() >= 0.99, cosines
    assert cosines.mean() >= 0.995, cosines
    assert cosines.max() < 0.99999  # really a different (quantised) model


def test_a_text_gets_the_same_vector_alone_or_in_a_padded_mixed_batch(cache_dir: Path) -> None:
    texts = passages(12) + QUERIES  # 4-token queries beside 256-token abstracts
    path = build_static_model(cache_dir)
    with (
        LocalEmbedder(batch_size=1, model_path=path, name=STATIC_NAME) as one,
        LocalEmbedder(
            batch_size=16, max_batch_tokens=None, model_path=path, name=STATIC_NAME
        ) as run,  # all 16 texts in one ONNX run, padded to the longest
    ):
        alone = one.embed(texts)
        together = run.embed(texts)
        reversed_half = run.embed(texts[::2])
    assert np.abs(together - alone).max() <= 1e-6
    assert np.abs(reversed_half - alone[::2]).max() <= 1e-6


def test_make_embedder_picks_it_from_the_setting_under_its_own_name(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", embedder="local-sint8")
    assert embedder_name(settings) == STATIC_NAME != MODEL_NAME  # never mixed in one index
    embedder = make_embedder(settings)
    try:
        assert isinstance(embedder, LocalEmbedder)
        assert embedder.name == STATIC_NAME and embedder.dim == 384
        assert embedder.model_path == static_model_path(tmp_path / "data" / "models")
        assert embedder.model_path.is_file()
    finally:
        embedder.close()
    assert embedder_name(Settings(data_dir=tmp_path / "data")) == MODEL_NAME  # the default


def test_it_does_not_apply_to_a_model_folder(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, embedder="local-sint8", embed_model_dir=tmp_path)
    with pytest.raises(EmbedderUnavailable, match="local-sint8"):
        make_embedder(settings)


def test_build_is_cached(cache_dir: Path) -> None:
    path = build_static_model(cache_dir)
    assert path == static_model_path(cache_dir)
    stamp = path.stat().st_mtime_ns
    assert build_static_model(cache_dir).stat().st_mtime_ns == stamp
    assert [p.name for p in cache_dir.iterdir()] == [path.name]  # no temp files left behind
