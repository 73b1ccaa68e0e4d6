"""`quire eval` on a tiny BEIR dataset written by the test: metrics, cache, CLI output."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from quire.config import Settings
from quire.embed.base import Vectors, l2_normalise
from quire.errors import InputError, ServiceUnavailable
from quire.evaluation import beir as evaluation
from tests.e2e.helpers import quire

TOPICS = [
    ("Glacier retreat in the Andes", "Andean glaciers lost mass quickly over three decades."),
    ("Coral bleaching events", "Warm water anomalies bleach reef-building corals."),
    ("Sourdough fermentation", "Wild yeasts and lactobacilli leaven sourdough bread."),
    ("Bicycle gear ratios", "Chainring and sprocket teeth set the gear ratio of a bicycle."),
    ("Volcanic ash and aviation", "Ash clouds damage jet engines and close airspace."),
    ("Honeybee navigation", "Foragers use the waggle dance to signal flower direction."),
    ("Medieval castle sieges", "Trebuchets hurled stones against curtain walls."),
    ("Tidal energy turbines", "Underwater rotors convert tidal currents into electricity."),
    ("Octopus camouflage", "Chromatophores let cephalopods change skin colour in milliseconds."),
    ("Jazz improvisation", "Soloists improvise over chord changes in bebop standards."),
    ("Desert irrigation", "Drip lines deliver water straight to the roots of date palms."),
    ("Comet tails", "Solar wind pushes dust and ions into a comet's twin tails."),
    ("Origami engineering", "Folding patterns let satellites deploy large solar panels."),
    ("Sleep and memory", "Slow-wave sleep consolidates declarative memories."),
    ("Antibiotic resistance", "Plasmids spread resistance genes among bacteria."),
]
# Each query quotes the distinctive words of one document; doc 0 is judged for the train split.
QUERIES = {
    "q1": ("Do chromatophores let cephalopods change skin colour?", "8"),
    "q2": ("trebuchets hurled stones against curtain walls", "6"),
    "q3": ("waggle dance of honeybee foragers", "5"),
    "q4": ("plasmids spread resistance genes", "14"),
    "q5": ("drip lines water date palms", "10"),
    "t1": ("Andean glaciers lost mass", "0"),
}


def write_dataset(root: Path) -> Path:
    (root / "qrels").mkdir(parents=True)
    with (root / "corpus.jsonl").open("w") as fh:
        for i, (title, body) in enumerate(TOPICS):
            fh.write(json.dumps({"_id": str(i), "title": title, "text": body}) + "\n")
    with (root / "queries.jsonl").open("w") as fh:
        for qid, (text, _) in QUERIES.items():
            fh.write(json.dumps({"_id": qid, "text": text}) + "\n")
    test = [f"{q}\t{d}\t1" for q, (_, d) in QUERIES.items() if q.startswith("q")]
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "\n".join(test))
    (root / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\nt1\t0\t1\n")
    return root


class HashEmbedder:
    """Deterministic unit vectors from a text hash: fast, and enough to exercise the dense leg."""

    name = "test:hash-16"
    dim = 16

    def embed(self, texts: Sequence[str]) -> Vectors:
        rows = [np.frombuffer(hashlib.sha256(t.encode()).digest()[:16], np.uint8) for t in texts]
        return l2_normalise(np.asarray(rows, dtype=np.float32) - 127.5)

    def close(self) -> None:
        pass


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    return write_dataset(tmp_path / "tiny")


def test_score_run_through_pytrec_eval_on_a_constructed_run() -> None:
    qrels = {"a": {"d1": 1}, "b": {"d2": 1}, "c": {"d3": 1}, "d": {"d4": 1}}
    far = {f"x{i}": 1.0 / (i + 1) for i in range(10)}
    run = {
        "a": {"d1": 2.0, "x": 1.0},  # relevant at rank 1
        "b": {"x": 2.0, "d2": 1.0},  # relevant at rank 2
        "c": {**far, "d3": 0.01},  # relevant at rank 11: outside @10, inside @100
        # "d" retrieved nothing: it still counts, as 0
    }
    means, per_query = evaluation.score_run(qrels, run)
    assert per_query["a"] == {"ndcg@10": 1.0, "recall@100": 1.0, "mrr@10": 1.0}
    assert per_query["b"]["ndcg@10"] == pytest.approx(1 / np.log2(3))
    assert per_query["b"]["mrr@10"] == pytest.approx(0.5)
    assert per_query["c"] == {"ndcg@10": 0.0, "recall@100": 1.0, "mrr@10": 0.0}
    assert per_query["d"] == {"ndcg@10": 0.0, "recall@100": 0.0, "mrr@10": 0.0}
    assert means["recall@100"] == pytest.approx(0.75)
    assert means["mrr@10"] == pytest.approx(1.5 / 4)


def test_bm25_finds_quoted_documents_and_the_second_run_skips_ingest(
    settings: Settings, dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    emb = HashEmbedder()
    first = evaluation.run_eval(settings, dataset, splits=["test", "train"], embedder=emb)
    assert first["index"]["cached"] is False
    assert first["index"]["documents"] == first["index"]["chunks"] == len(TOPICS)
    test = first["splits"]["test"]
    assert test["queries"] == 5 and first["splits"]["train"]["queries"] == 1
    bm25 = test["variants"]["bm25"]
    # Every query quotes its only relevant document: BM25 ranks it first.
    assert (bm25["ndcg@10"], bm25["mrr@10"], bm25["recall@100"]) == (1.0, 1.0, 1.0)
    assert set(bm25["latency_ms"]) >= {"bm25", "fusion", "total"}
    assert "embed" not in bm25["latency_ms"] and "embed" in test["variants"]["dense"]["latency_ms"]
    assert test["variants"]["hybrid"]["recall@100"] == 1.0
    # No cross-encoder: "rerank" orders the first hits by their best sentence, and says so.
    assert "best sentence" in first["settings"]["reranker"]
    assert (
        test["variants"]["rerank"]["recall@100"] == 1.0
        and "rerank" in test["variants"]["rerank"]["latency_ms"]
    )

    def no_ingest(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the cached index was ingested again")

    monkeypatch.setattr(evaluation, "ingest_records", no_ingest)
    second = evaluation.run_eval(settings, dataset, variants=["bm25"], embedder=emb)
    assert second["index"]["cached"] is True
    assert second["index"]["path"] == first["index"]["path"]
    assert second["splits"]["test"]["variants"]["bm25"]["ndcg@10"] == 1.0
    assert list(second["splits"]["test"]["variants"]) == ["bm25"]


def test_the_index_key_follows_chunking_embedder_and_corpus(
    settings: Settings, dataset: Path
) -> None:
    ds = evaluation.load_dataset(dataset)
    base = evaluation.index_dir(settings, ds, "m1")
    assert base.parent == settings.data_dir / "eval" and base.name.startswith("tiny-")
    assert evaluation.index_dir(settings, ds, "m1") == base
    assert evaluation.index_dir(settings, ds, "m2") != base
    other = settings.model_copy(update={"chunk_chars": 900})
    assert evaluation.index_dir(other, ds, "m1") != base
    with (dataset / "corpus.jsonl").open("a") as fh:
        fh.write(json.dumps({"_id": "99", "title": "New", "text": "A new document."}) + "\n")
    assert evaluation.index_dir(settings, ds, "m1") != base


def test_bad_datasets_and_options_are_input_errors(settings: Settings, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="corpus.jsonl, queries.jsonl, qrels/test.tsv missing"):
        evaluation.load_dataset(tmp_path)
    ds = write_dataset(tmp_path / "d")
    (ds / "qrels" / "train.tsv").unlink()
    with pytest.raises(InputError, match="train"):
        evaluation.run_eval(settings, ds, splits=["train"], embedder=HashEmbedder())
    with pytest.raises(InputError, match="unknown variant"):
        evaluation.run_eval(settings, ds, variants=["bm25", "colbert"], embedder=HashEmbedder())


@pytest.mark.slow  # the quire command indexes a corpus
def test_cli_json_output_shape(tmp_path: Path, dataset: Path) -> None:
    r = quire(tmp_path / "data", "eval", "--dataset", str(dataset), "--json", "--split", "both")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["dataset"] == "tiny" and report["index"]["cached"] is False
    assert report["index"]["embedder"].startswith("local:")
    assert set(report["splits"]) == {"test", "train"}
    variants = report["splits"]["test"]["variants"]
    assert list(variants) == ["bm25", "dense", "hybrid", "rerank"]
    for row in variants.values():
        assert {"ndcg@10", "recall@100", "mrr@10", "latency_ms", "cpu_ms"} <= set(row)
        assert all(0.0 <= row[m] <= 1.0 for m in ("ndcg@10", "recall@100", "mrr@10"))
        assert set(row["latency_ms"]["total"]) == {"p50", "p95"}
    assert variants["bm25"]["ndcg@10"] == 1.0
    assert "best sentence" in report["settings"]["reranker"]

    again = quire(
        tmp_path / "data", "eval", "--dataset", str(dataset), "--variants", "bm25", COLUMNS="160"
    )
    assert again.returncode == 0, again.stderr
    assert "nDCG@10" in again.stdout and "bm25" in again.stdout
    assert "ingesting" not in again.stderr  # cached

    bad = quire(tmp_path / "data", "eval", "--dataset", str(dataset), "--variants", "nope")
    assert bad.returncode == 1 and "unknown variant" in bad.stderr


def test_without_trec_eval_the_extra_is_named_before_any_indexing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """pytrec-eval-terrier is the ``eval`` extra (no wheel for Linux on ARM): a plain install
    says how to get it at once, not after indexing a corpus."""
    monkeypatch.setitem(sys.modules, "pytrec_eval", None)  # makes `import pytrec_eval` fail
    with pytest.raises(ServiceUnavailable, match=r"pip install 'quire\[eval\]'"):
        evaluation.run_eval(Settings(data_dir=tmp_path / "data"), tmp_path / "no-such-dataset")
    assert not (tmp_path / "data").exists()
