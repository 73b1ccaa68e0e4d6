"""The cross-encoder reranker: raw logits from ONNX, ordering rules, time budget, loading.

Real ms-marco weights cannot be downloaded here, so a small randomly initialised BERT
classifier (one label, the real MiniLM WordPiece vocabulary and tokenizer) is built with
PyTorch and exported once per session; PyTorch is the reference the ONNX logits must match.
"""

from __future__ import annotations

import logging
import math
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import quire.retrieval.rerank as rr
from quire.config import Settings
from quire.retrieval.rerank import (
    PROBE_BATCH,
    CrossEncoderReranker,
    Logits,
    Reranker,
    find_model_file,
    load_reranker,
    rerank,
    resolve_model_dir,
)
from tests.retrieval.cross_encoder import Models

QUERY = "Does vitamin D supplementation reduce the risk of fractures in older adults?"
PASSAGES = [
    "Vitamin D and calcium supplements lowered hip fracture rates among elderly women.",
    "The mitochondrial genome is inherited maternally in most animals.",
    "Bone mineral density declines with age, and falls cause most fractures.",
    "SQLite FTS5 ranks passages with the bm25() function.",
    "Randomised trials of vitamin D found no effect on fracture risk in community dwellers.",
    "Glucocorticoid receptor signalling in T cells modulates thymic selection.",
    "A man is eating food.",
    "Older adults who took 800 IU of cholecalciferol daily had fewer non-vertebral fractures.",
]
# Long enough to be cut at any max_tokens used here.
LONG = " ".join(["the cohort was followed for fracture outcomes over ten years"] * 60)


def _torch_logits(
    models: Models, query: str, passages: Sequence[str], *, types: bool = True
) -> Logits:
    """The reference: PyTorch, one unpadded pair at a time, same tokenizer."""
    import torch
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(models.fp32_dir / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(256, strategy="only_second")
    out = []
    with torch.no_grad():
        for p in passages:
            enc = tok.encode(query, p)
            ids = torch.tensor([enc.ids])
            tt = torch.tensor([enc.type_ids]) if types else torch.zeros_like(ids)
            logits = models.torch_model(
                input_ids=ids, attention_mask=torch.ones_like(ids), token_type_ids=tt
            ).logits
            out.append(float(logits[0, 0]))
    return np.array(out, dtype=np.float32)


# --- the ONNX model: raw logits ------------------------------------------------------------


def test_onnx_logits_are_the_raw_pytorch_logits(models: Models, fp32: CrossEncoderReranker) -> None:
    got = fp32.score(QUERY, PASSAGES)  # one padded batch
    assert got.dtype == np.float32 and got.shape == (len(PASSAGES),)
    np.testing.assert_allclose(got, _torch_logits(models, QUERY, PASSAGES), atol=1e-4)
    # A pipeline's sigmoid/softmax over a one-label head gives 1.0 (or a squashed 0..1)
    # everywhere: these are raw, distinct, and not confined to (0, 1).
    assert not np.allclose(got, 1.0)
    assert np.ptp(got) > 0.05
    assert len(set(got.round(4).tolist())) == len(PASSAGES)
    assert ((got < 0) | (got > 1)).any()


def test_runs_and_order_do_not_change_a_pairs_logit(models: Models) -> None:
    want = _torch_logits(models, QUERY, PASSAGES)
    configs = [{"batch_size": 3}, {"max_batch_tokens": None}, {"max_batch_tokens": 64}]
    for kw in configs:
        with CrossEncoderReranker(models.fp32_dir, **kw) as r:  # type: ignore[arg-type]
            np.testing.assert_allclose(r.score(QUERY, PASSAGES), want, atol=1e-4)
            reversed_ = r.score(QUERY, PASSAGES[::-1])[::-1]
            np.testing.assert_allclose(reversed_, want, atol=1e-4)


def test_onnx_runs_are_capped_by_pairs_and_padded_tokens(models: Models) -> None:
    shapes: list[tuple[int, int]] = []
    with CrossEncoderReranker(models.fp32_dir, batch_size=4, max_batch_tokens=40) as r:
        real = r._session

        class Spy:
            def run(self, names: Any, feeds: dict[str, Any]) -> Any:
                shapes.append(feeds["input_ids"].shape)
                return real.run(names, feeds)

        r._session = Spy()
        r.score("q", ["a"] * 6 + ["a b c d e f g h i j k l m n"])
    # [CLS] q [SEP] a [SEP] is 5 tokens: 4 per run at most; the long pair (18) runs alone.
    assert shapes == [(4, 5), (2, 5), (1, 18)]


def test_graph_without_token_types_and_with_flat_logits(models: Models) -> None:
    with CrossEncoderReranker(models.lean_dir) as lean:
        got = lean.score(QUERY, PASSAGES[:4])
    want = _torch_logits(models, QUERY, PASSAGES[:4], types=False)
    np.testing.assert_allclose(got, want, atol=1e-4)


def test_empty_passages(fp32: CrossEncoderReranker) -> None:
    assert fp32.score(QUERY, []).shape == (0,)


def test_passages_are_cut_not_the_query(models: Models) -> None:
    with CrossEncoderReranker(models.fp32_dir, max_tokens=32) as r:
        base, cut = r.score_counted(QUERY, [LONG, "short passage"])
        tail, _ = r.score_counted(QUERY, [LONG + " unrelated words past the limit", "x"])
        assert cut == 1
        assert tail[0] == pytest.approx(base[0], abs=1e-6)  # only the cut-off part differs
        # A question longer than the whole limit is cut to half of it instead of failing.
        logits, _ = r.score_counted(LONG, [PASSAGES[0]])
    assert np.isfinite(logits).all()


def test_closed_reranker_refuses(models: Models) -> None:
    r = CrossEncoderReranker(models.fp32_dir)
    r.close()
    with pytest.raises(rr.RerankerUnavailable):
        r.score(QUERY, ["x"])


# --- rerank() end to end -------------------------------------------------------------------


def test_rerank_end_to_end_sorts_by_logit_above_threshold(fp32: CrossEncoderReranker) -> None:
    items = list(enumerate(PASSAGES, start=100))
    logits = fp32.score(QUERY, PASSAGES)
    threshold = float(np.median(logits))
    out = rerank(fp32, QUERY, items, top_n=10, min_logit=threshold)
    passing = sorted(
        (i for i in range(len(items)) if logits[i] >= threshold), key=lambda i: -logits[i]
    )
    assert out.order == [100 + i for i in passing]
    assert out.scores == pytest.approx({100 + i: float(v) for i, v in enumerate(logits)})
    assert (out.scored, out.skipped, out.fallback, out.truncated_tokens) == (8, 0, False, 0)
    assert out.model == fp32.name == "fp32/model.onnx"
    assert out.elapsed_ms > 0


def test_rerank_counts_truncated_passages(models: Models) -> None:
    items = [(1, LONG), (2, "short"), (3, LONG + " again"), (4, "also short")]
    with CrossEncoderReranker(models.fp32_dir, max_tokens=64) as r:
        out = rerank(r, QUERY, items, top_n=4, min_logit=-math.inf)
    assert out.truncated_tokens == 2
    assert "2 passages cut" in out.summary()


def test_zero_budget_scores_only_the_first_batch(fp32: CrossEncoderReranker) -> None:
    items = [(i, PASSAGES[i % len(PASSAGES)]) for i in range(30)]
    out = rerank(fp32, QUERY, items, top_n=30, min_logit=-math.inf, budget_ms=0)
    assert (out.scored, out.skipped) == (PROBE_BATCH, 30 - PROBE_BATCH)
    assert sorted(out.order[:PROBE_BATCH]) == list(range(PROBE_BATCH))
    assert out.order[PROBE_BATCH:] == list(range(PROBE_BATCH, 30))  # fusion order, kept
    assert set(out.scores) == set(range(PROBE_BATCH))
    assert "22 over the time budget" in out.summary()


# --- rerank() ordering rules, with a fake model and a fake clock ----------------------------


class FakeReranker:
    """Scores a passage by the number in it; each pair costs ``ms_per_pair`` of fake time."""

    name = "fake"

    def __init__(self, clock: list[float] | None = None, ms_per_pair: float = 0.0) -> None:
        self.clock = clock
        self.ms_per_pair = ms_per_pair
        self.calls: list[int] = []

    def score(self, query: str, passages: Sequence[str]) -> Logits:
        self.calls.append(len(passages))
        if self.clock is not None:
            self.clock[0] += self.ms_per_pair * len(passages) / 1000
        return np.array([float(p) for p in passages], dtype=np.float32)

    def close(self) -> None:
        pass


def _items(*logits: float) -> list[tuple[int, str]]:
    return [(i, str(v)) for i, v in enumerate(logits)]


def test_fake_satisfies_the_protocol() -> None:
    reranker: Reranker = FakeReranker()
    assert reranker.name == "fake"


def test_keeps_logits_at_or_above_threshold_sorted_desc() -> None:
    out = rerank(FakeReranker(), "q", _items(-6, 3, -5, 8, 3, -9), top_n=10, min_logit=-5.0)
    assert out.order == [3, 1, 4, 2]  # ties (1 and 4 at 3.0) keep fusion order
    assert out.scores == {0: -6, 1: 3, 2: -5, 3: 8, 4: 3, 5: -9}
    assert not out.fallback and out.truncated_tokens == 0


def test_top_n_caps_the_result() -> None:
    assert rerank(FakeReranker(), "q", _items(1, 5, 3, 4), top_n=2).order == [1, 3]


def test_none_pass_keeps_the_first_fallback_top_in_fusion_order() -> None:
    items = _items(*[-10] * 30)
    out = rerank(FakeReranker(), "q", items, top_n=35, fallback_top=20)
    assert out.fallback and out.order == list(range(20))
    assert rerank(FakeReranker(), "q", items, top_n=5, fallback_top=20).order == list(range(5))
    assert "none passed" in out.summary()


def test_nan_never_passes() -> None:
    assert rerank(FakeReranker(), "q", _items(float("nan"), 1), top_n=5).order == [1]


def test_batches_of_64_without_a_budget() -> None:
    fake = FakeReranker()
    out = rerank(fake, "q", _items(*range(150)), top_n=200)
    assert fake.calls == [64, 64, 22]
    assert out.order == list(range(149, -1, -1))[: len(out.order)]
    assert (out.scored, out.skipped) == (150, 0)


def test_budget_sizes_batches_to_fit_and_unscored_follow_in_fusion_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [0.0]
    monkeypatch.setattr(rr.time, "perf_counter", lambda: clock[0])
    fake = FakeReranker(clock, ms_per_pair=10)
    # 100 candidates at 10 ms each, 200 ms: the probe (8) measures 10 ms/pair, 12 more fit.
    logits = [-9.0] * 5 + [1.0] * 95
    out = rerank(fake, "q", _items(*logits), top_n=100, budget_ms=200)
    assert fake.calls == [PROBE_BATCH, 12]
    assert (out.scored, out.skipped) == (20, 80)
    assert out.order == list(range(5, 20)) + list(range(20, 100))  # failed ones dropped
    assert out.elapsed_ms == pytest.approx(200)


def test_budget_none_passing_falls_back_to_fusion_order(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [0.0]
    monkeypatch.setattr(rr.time, "perf_counter", lambda: clock[0])
    out = rerank(FakeReranker(clock, 10), "q", _items(*[-9.0] * 50), top_n=35, budget_ms=0)
    assert out.fallback and out.order == list(range(20)) and out.skipped == 50 - PROBE_BATCH


def test_duplicates_and_empty_input() -> None:
    out = rerank(FakeReranker(), "q", [(7, "1"), (7, "1"), (8, "2")], top_n=5)
    assert out.order == [8, 7] and out.scored == 2
    empty = rerank(FakeReranker(), "q", [], top_n=5)
    assert (empty.order, empty.scored, empty.fallback) == ([], 0, False)


def test_bad_arguments_and_bad_reranker() -> None:
    with pytest.raises(ValueError):
        rerank(FakeReranker(), "q", _items(1), top_n=0)
    with pytest.raises(ValueError):
        rerank(FakeReranker(), "q", _items(1), top_n=1, budget_ms=-1)

    class Short(FakeReranker):
        def score(self, query: str, passages: Sequence[str]) -> Logits:
            return np.zeros(len(passages) - 1, dtype=np.float32)

    with pytest.raises(ValueError, match="returned 1 scores for 2"):
        rerank(Short(), "q", _items(1, 2), top_n=2)


# --- loading -------------------------------------------------------------------------------


def test_missing_model_gives_none_and_one_notice(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    with caplog.at_level(logging.INFO, logger="quire.retrieval.rerank"):
        assert load_reranker(settings) is None
    expected = tmp_path / "data" / "models" / "cross-encoder" / "ms-marco-MiniLM-L-6-v2"
    records = [r for r in caplog.records if r.name == "quire.retrieval.rerank"]
    assert len(records) == 1 and records[0].levelno == logging.WARNING
    assert records[0].getMessage() == (
        f"reranker model not found at {expected}; the first hits are ordered by their best "
        "sentence instead (`quire models pull reranker` installs it)"
    )


def test_model_dir_setting_is_relative_to_the_models_folder(tmp_path: Path) -> None:
    s = Settings(data_dir=tmp_path, rerank_model_dir=Path("mine/ce"))
    assert resolve_model_dir(s) == tmp_path / "models" / "mine" / "ce"
    s = Settings(data_dir=tmp_path, rerank_model_dir=tmp_path / "elsewhere")
    assert resolve_model_dir(s) == tmp_path / "elsewhere"


def test_load_reranker_from_settings(models: Models, tmp_path: Path) -> None:
    s = Settings(data_dir=tmp_path, rerank_model_dir=models.fp32_dir, rerank_max_tokens=64)
    r = load_reranker(s)
    assert isinstance(r, CrossEncoderReranker) and r.max_tokens == 64
    r.close()


def test_unusable_model_gives_none_and_a_notice(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    broken = tmp_path / "models" / "broken"
    broken.mkdir(parents=True)
    (broken / "model.onnx").write_bytes(b"not a model")
    with caplog.at_level(logging.WARNING, logger="quire.retrieval.rerank"):
        assert load_reranker(Settings(data_dir=tmp_path, rerank_model_dir=Path("broken"))) is None
    assert "tokenizer.json not found" in caplog.text and "best sentence" in caplog.text


def test_model_file_preference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    onnx_dir = tmp_path / "onnx"
    onnx_dir.mkdir()
    names = ["model.onnx", "model_O4.onnx", "model_qint8_arm64.onnx", "model_quint8_avx2.onnx"]
    for n in names:
        (onnx_dir / n).touch()
    monkeypatch.setattr(rr.platform, "machine", lambda: "x86_64")
    assert find_model_file(tmp_path) == onnx_dir / "model_quint8_avx2.onnx"
    monkeypatch.setattr(rr.platform, "machine", lambda: "aarch64")
    assert find_model_file(tmp_path) == onnx_dir / "model_qint8_arm64.onnx"
    (tmp_path / "model_quantized.onnx").touch()
    assert find_model_file(tmp_path) == tmp_path / "model_quantized.onnx"
    for n in names[2:]:
        (onnx_dir / n).unlink()
    (tmp_path / "model_quantized.onnx").unlink()
    assert find_model_file(tmp_path) == onnx_dir / "model.onnx"
    assert find_model_file(tmp_path / "nothing") is None


# --- int8 ----------------------------------------------------------------------------------


def test_int8_is_preferred_and_ranks_like_fp32(models: Models, fp32: CrossEncoderReranker) -> None:
    with CrossEncoderReranker(models.both_dir) as int8:
        assert int8.model_path.name == "model_quantized.onnx"
        assert int8.name == "both/model_quantized.onnx"
        passages = PASSAGES + [f"{p} {q}" for p, q in zip(PASSAGES, PASSAGES[3:], strict=False)]
        passages += [LONG[: 40 * k] for k in range(1, 8)]
        q8 = int8.score(QUERY, passages)
    f32 = fp32.score(QUERY, passages)
    assert len(passages) >= 20
    assert not np.array_equal(q8, f32)  # really the quantised graph
    assert np.corrcoef(q8, f32)[0, 1] > 0.9
    ranks = [np.argsort(np.argsort(v)) for v in (q8, f32)]
    assert np.corrcoef(ranks[0], ranks[1])[0, 1] > 0.9  # Spearman


# --- no PyTorch at run time ----------------------------------------------------------------


def test_runtime_imports_neither_torch_nor_transformers(models: Models) -> None:
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from quire.retrieval.rerank import CrossEncoderReranker\n"
        "CrossEncoderReranker(Path(sys.argv[1])).score('q', ['a passage'])\n"
        "bad = [m for m in ('torch', 'transformers') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code, str(models.fp32_dir)], check=True, timeout=60)
