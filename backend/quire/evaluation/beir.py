"""Retrieval quality on a BEIR-layout dataset: nDCG@10, Recall@100, MRR@10 and latency per stage.

A dataset directory holds ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl``
(``_id``, ``text``) and ``qrels/test.tsv`` (optionally ``qrels/train.tsv``; columns query-id,
corpus-id, score). The corpus is bulk-ingested once into a scratch data directory,
``<data_dir>/eval/<name>-<hash>``, whose hash covers what shapes the index (corpus file size and
mtime, embedder, chunk settings, :data:`INDEX_VERSION`); later runs reuse it. Retrieval settings
(weights, ``rrf_k``, fusion) are read per run, so they can be tuned without re-ingesting.

Each variant runs the real :class:`~quire.retrieval.search.Searcher`: BM25 only, dense only,
hybrid (every leg, the configured fusion) and hybrid + rerank: the cross-encoder when one is
installed, else the order by best sentence that searches get without one (synthesis/order.py).
Chunk hits map to corpus ids (a document's best rank); the metrics come from ``pytrec_eval``
(trec_eval), never from hand-written formulas.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np

from quire.config import Settings
from quire.embed import make_embedder
from quire.embed.base import Embedder
from quire.errors import InputError, ServiceUnavailable
from quire.ingest.bulk import Record, ingest_records
from quire.retrieval.options import ALL_LEGS, Leg, SearchOptions
from quire.retrieval.rerank import load_reranker, resolve_model_dir
from quire.retrieval.search import Searcher
from quire.storage.db import Database
from quire.storage.migrate import open_database, scratch_library
from quire.synthesis.order import SentenceOrder

log = logging.getLogger(__name__)

Variant = Literal["bm25", "dense", "hybrid", "rerank"]
VARIANTS: tuple[Variant, ...] = get_args(Variant)
STAGES = ("embed", "bm25", "dense", "exact", "fusion", "rerank", "total")
#: Chunks asked of every search and of every leg: Recall@100 is over documents, and a document
#: may own several chunks, so a depth of 100 chunks would understate it.
DEPTH = 200
#: Bump when ingest_records changes what it stores, so that old scratch indexes are not reused.
INDEX_VERSION = 1
MANIFEST = "manifest.json"

#: ``progress(task, done, total)``: task is "store", "embed" or "<split> · <variant>".
EvalProgress = Callable[[str, int, int], None]

_LEGS: dict[Variant, tuple[Leg, ...]] = {
    "bm25": ("bm25",),
    "dense": ("dense",),
    "hybrid": ALL_LEGS,
    "rerank": ALL_LEGS,
}

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]


@dataclass(frozen=True)
class Dataset:
    """A BEIR-layout dataset: where its corpus is, its queries and its judgements per split."""

    name: str
    root: Path
    corpus: Path
    queries: dict[str, str]
    qrels: dict[str, Qrels]


def _read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise InputError(f"{path}:{n}: not JSON ({e.msg})") from e
            if not isinstance(row, dict) or "_id" not in row:
                raise InputError(f"{path}:{n}: expected an object with an _id")
            yield row


def read_qrels(path: Path) -> Qrels:
    """query id -> corpus id -> relevance, from a BEIR ``qrels/*.tsv`` (header optional)."""
    qrels: Qrels = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        parts = line.split("\t")
        if not line.strip() or (n == 1 and parts[0] == "query-id"):
            continue
        if len(parts) < 3:
            raise InputError(f"{path}:{n}: expected query-id, corpus-id, score")
        try:
            rel = int(float(parts[2]))
        except ValueError as e:
            raise InputError(f"{path}:{n}: the score {parts[2]!r} is not a number") from e
        qrels.setdefault(parts[0], {})[parts[1]] = rel
    return qrels


def load_dataset(root: Path) -> Dataset:
    """Read a dataset directory's queries and qrels (the corpus is streamed when ingested)."""
    corpus = root / "corpus.jsonl"
    needed = ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv")
    missing = [name for name in needed if not (root / name).is_file()]
    if missing:
        raise InputError(f"{root} is not a BEIR dataset: {', '.join(missing)} missing")
    queries = {str(r["_id"]): str(r.get("text", "")) for r in _read_jsonl(root / "queries.jsonl")}
    qrels = {
        split: read_qrels(root / "qrels" / f"{split}.tsv")
        for split in ("test", "train")
        if (root / "qrels" / f"{split}.tsv").is_file()
    }
    return Dataset(root.resolve().name, root.resolve(), corpus, queries, qrels)


def read_corpus(path: Path) -> list[Record]:
    """The corpus as records keyed by corpus id."""
    return [
        Record(
            key=str(r["_id"]),
            title=str(r.get("title") or ""),
            text=str(r.get("text") or ""),
            meta={"corpus_id": str(r["_id"])},
        )
        for r in _read_jsonl(path)
    ]


def index_dir(settings: Settings, dataset: Dataset, embedder_name: str) -> Path:
    """The scratch data directory for this corpus, embedder and chunking."""
    st = dataset.corpus.stat()
    key = json.dumps(
        [
            INDEX_VERSION,
            st.st_size,
            st.st_mtime_ns,
            embedder_name,
            settings.chunk_chars,
            settings.chunk_overlap,
        ]
    )
    digest = hashlib.sha256(key.encode()).hexdigest()[:10]
    return settings.data_dir / "eval" / f"{dataset.name}-{digest}"


@dataclass
class Index:
    """An opened scratch index and how it came to be."""

    path: Path
    settings: Settings
    db: Database
    cached: bool
    manifest: dict[str, Any]

    def corpus_ids(self) -> dict[int, list[str]]:
        """Document id -> the corpus ids it stands for (duplicates share one document)."""
        with self.db.read() as conn:
            rows = conn.exec_driver_sql("SELECT id, source_key FROM documents").all()
        out: dict[int, list[str]] = {int(r[0]): [str(r[1])] for r in rows}
        for key, doc_id in self.manifest.get("stats", {}).get("duplicates", {}).items():
            out.setdefault(int(doc_id), []).append(str(key))
        return out


def open_index(
    settings: Settings,
    dataset: Dataset,
    embedder: Embedder,
    progress: EvalProgress | None = None,
) -> Index:
    """Open the scratch index of ``dataset``, ingesting the corpus first unless it is cached."""
    path = index_dir(settings, dataset, embedder.name)
    scratch, new = scratch_library(settings, path)
    scratch = scratch.model_copy(
        update={
            # Every leg as deep as the search, so that Recall@100 measures the ranking, not
            # the production candidate pool (50 fused, 40 dense).
            "dense_k": max(settings.dense_k, DEPTH),
            "pool_precise": max(settings.pool_precise, DEPTH),
            "pool_exhaustive": max(settings.pool_exhaustive, DEPTH),
        }
    )
    manifest_path = path / MANIFEST
    if new:
        manifest_path.unlink(missing_ok=True)  # its database is gone: build it again
    db = open_database(scratch)
    if manifest_path.is_file():
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        log.info("eval: reusing the index at %s", path)
        return Index(path, scratch, db, True, manifest)

    log.info("eval: ingesting %s into %s", dataset.corpus, path)
    records = read_corpus(dataset.corpus)
    t0 = time.monotonic()
    stats = ingest_records(db, scratch, embedder, records, progress=progress)
    manifest = {
        "dataset": dataset.name,
        "corpus": str(dataset.corpus),
        "documents": len(records),
        "embedder": embedder.name,
        "chunk_chars": scratch.chunk_chars,
        "chunk_overlap": scratch.chunk_overlap,
        "index_version": INDEX_VERSION,
        "ingest_seconds": round(time.monotonic() - t0, 1),
        "stats": asdict(stats),
    }
    with db.read() as conn:
        manifest["chunks"] = int(
            conn.exec_driver_sql("SELECT count(*) FROM page_chunks").scalar_one()
        )
    # Written last: its presence is what marks the index complete.
    tmp = manifest_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    tmp.replace(manifest_path)
    return Index(path, scratch, db, False, manifest)


def trec_measures() -> Any:
    """``pytrec_eval``, from the ``eval`` extra: it has no wheel for Linux on ARM, so a plain
    install of Quire does without it (docs/getting-started/install.md)."""
    try:
        import pytrec_eval
    except ImportError as e:
        raise ServiceUnavailable(
            "scoring a BEIR run needs trec_eval's measures: install them with "
            "`pip install 'quire[eval]'` (pytrec-eval-terrier)"
        ) from e
    return pytrec_eval


def score_run(qrels: Qrels, run: Run) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """Mean and per-query nDCG@10, Recall@100 and MRR@10 through pytrec_eval.

    Every judged query counts: one without results scores 0. MRR@10 is trec_eval's
    ``recip_rank`` over each ranking cut to its first 10 documents (trec_eval has no cutoff
    for it).
    """
    pytrec_eval = trec_measures()
    full = {qid: dict(run.get(qid, {})) for qid in qrels}
    top10 = {
        qid: dict(sorted(docs.items(), key=lambda kv: -kv[1])[:10]) for qid, docs in full.items()
    }
    deep = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100"}).evaluate(full)
    shallow = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(top10)
    names = {"ndcg@10": "ndcg_cut_10", "recall@100": "recall_100", "mrr@10": "recip_rank"}
    per_query = {
        qid: {
            ours: (shallow if ours == "mrr@10" else deep).get(qid, {}).get(theirs, 0.0)
            for ours, theirs in names.items()
        }
        for qid in qrels
    }
    means = {
        ours: pytrec_eval.compute_aggregated_measure(theirs, [q[ours] for q in per_query.values()])
        if per_query
        else 0.0
        for ours, theirs in names.items()
    }
    return means, per_query


def _percentiles(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {}
    arr = np.asarray(values, dtype=np.float64)
    return {
        "p50": round(float(np.percentile(arr, 50)), 2),
        "p95": round(float(np.percentile(arr, 95)), 2),
    }


def run_variant(
    searcher: Searcher,
    variant: Variant,
    queries: Sequence[tuple[str, str]],
    corpus_ids: dict[int, list[str]],
    *,
    progress: EvalProgress | None = None,
    task: str = "",
) -> tuple[Run, dict[str, list[float]]]:
    """Search every query; returns the run (corpus id scores, best first) and stage timings."""
    options = SearchOptions(legs=_LEGS[variant], rerank=variant == "rerank", limit=DEPTH)
    run: Run = {}
    timings: dict[str, list[float]] = defaultdict(list)
    for n, (qid, text) in enumerate(queries, start=1):
        result = searcher.search(text, options)
        ranked: dict[str, float] = {}
        for hit in result.hits:
            for cid in corpus_ids.get(hit.document_id, ()):
                if cid not in ranked:
                    # A score that falls with the document's best rank; pytrec_eval sorts by it.
                    ranked[cid] = 1.0 / (len(ranked) + 1)
        run[qid] = ranked
        for stage, ms in result.timings_ms.items():
            timings[stage].append(ms)
        timings["cpu"].append(result.cpu_ms)
        if progress:
            progress(task, n, len(queries))
    return run, timings


def _queries_for(dataset: Dataset, split: str, max_queries: int | None) -> list[tuple[str, str]]:
    judged = [q for q in dataset.qrels[split] if dataset.queries.get(q, "").strip()]
    missing = len(dataset.qrels[split]) - len(judged)
    if missing:
        log.warning("eval: %d judged %s queries have no text; left out", missing, split)
    judged = judged[:max_queries] if max_queries else judged
    return [(q, dataset.queries[q]) for q in judged]


def run_eval(
    settings: Settings,
    dataset_dir: Path,
    *,
    splits: Sequence[str] = ("test",),
    variants: Sequence[str] = VARIANTS,
    max_queries: int | None = None,
    embedder: Embedder | None = None,
    progress: EvalProgress | None = None,
) -> dict[str, Any]:
    """Evaluate the variants on the splits; returns the report (JSON-ready)."""
    trec_measures()  # before the corpus is indexed, not after
    dataset = load_dataset(dataset_dir)
    for split in splits:
        if split not in dataset.qrels:
            raise InputError(f"{dataset.root} has no qrels/{split}.tsv")
    unknown = set(variants) - set(VARIANTS)
    if unknown or not variants:
        raise InputError(
            f"unknown variant(s): {', '.join(sorted(unknown)) or 'none given'}; "
            f"choose from {', '.join(VARIANTS)}"
        )
    chosen = [v for v in VARIANTS if v in variants]
    own_embedder = embedder is None
    emb = embedder or make_embedder(settings)
    reranker = None
    if "rerank" in chosen:
        reranker = load_reranker(settings)  # the user's models, not the scratch directory's
    index = open_index(settings, dataset, emb, progress)
    # Without a cross-encoder, "rerank" is what a search gets then: the order by best sentence.
    searcher = Searcher(index.db, index.settings, emb, reranker, SentenceOrder(index.db, emb))
    try:
        corpus_ids = index.corpus_ids()
        report: dict[str, Any] = {
            "dataset": dataset.name,
            "index": {
                "path": str(index.path),
                "cached": index.cached,
                "documents": index.manifest.get("documents"),
                "chunks": index.manifest.get("chunks"),
                "embedder": emb.name,
                "ingest_seconds": index.manifest.get("ingest_seconds"),
            },
            "settings": {
                "fusion": settings.fusion,
                "rrf_k": settings.rrf_k,
                "weight_bm25": settings.weight_bm25,
                "weight_dense": settings.weight_dense,
                "weight_exact": settings.weight_exact,
                "chunk_chars": settings.chunk_chars,
                "chunk_overlap": settings.chunk_overlap,
                "depth": DEPTH,
                "reranker": getattr(reranker, "name", None)
                or f"none at {resolve_model_dir(settings)}: rerank orders by best sentence",
            },
            "splits": {},
        }
        for split in splits:
            queries = _queries_for(dataset, split, max_queries)
            qrels = {q: dataset.qrels[split][q] for q, _ in queries}
            out: dict[str, Any] = {"queries": len(queries), "variants": {}}
            for variant in chosen:
                run, timings = run_variant(
                    searcher,
                    variant,
                    queries,
                    corpus_ids,
                    progress=progress,
                    task=f"{split} · {variant}",
                )
                means, _ = score_run(qrels, run)
                out["variants"][variant] = {
                    **{k: round(v, 4) for k, v in means.items()},
                    "latency_ms": {s: _percentiles(v) for s, v in timings.items() if s != "cpu"},
                    "cpu_ms": _percentiles(timings["cpu"]),
                }
                log.info("eval %s %s: %s", split, variant, means)
            report["splits"][split] = out
        return report
    finally:
        searcher.close()
        index.db.dispose()
        if reranker is not None:
            reranker.close()
        if own_embedder:
            emb.close()
