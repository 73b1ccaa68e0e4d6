"""Query latency of Quire's hybrid search against peer designs, on the synthetic corpus that
bench/retrieval.py builds (same seed, same texts, same vectors), top 50, query vectors given.

    .venv/bin/python bench/peers.py --setup                     # once: the peers' own venv
    .venv/bin/python bench/peers.py --quick                     # 10k chunks, ~30 s
    .venv/bin/python bench/peers.py --sizes 100000 --keep /tmp/quire-bench   # reuse corpora
    .venv/bin/python bench/peers.py --quick --only quire,bm25s_faiss

The systems, each in its own child process (so RSS growth is each one's own):

* ``quire``: ``Searcher.search(q, SearchOptions(rerank=False, limit=50))`` on the corpus
  directory of bench/retrieval.py (``<keep>/quire-<size>``, built by its ``worker_build`` when
  missing), opened fresh in the child as after a restart. Wall per query, and the same less the
  query embedding (``RandomEmbedder``: random unit vectors, its own per query).
* ``bm25s_faiss``: a bm25s index (its English stopword tokenizer) and a faiss ``IndexFlatIP``
  (exact, one OpenMP thread) over the same vectors; the top 100 of each fused by reciprocal
  rank (k=60).
* ``lancedb``: one LanceDB table (text, vector), its native full-text index and no vector index
  (exact, brute-force search), ``query_type="hybrid"`` with its ``RRFReranker``, limit 50.
* ``pagepiper``: rank-bm25 ``BM25Okapi`` over all chunks (``get_scores`` per query, top 100 by
  argpartition) and a sqlite-vec ``vec0`` KNN (k=100) in a SQLite file that holds the chunk
  texts, fused by RRF; the top 50 texts read back from SQLite.
* ``open_webui``: the chunks and vectors in a Chroma collection (persistent client, HNSW, no
  embedding function: vectors are always given). Per query, as Open WebUI's hybrid search does,
  all the collection's documents are read (``collection.get()``) and a BM25 index is built over
  them (rank-bm25 ``BM25Okapi`` on ``str.split`` tokens, as LangChain's ``BM25Retriever``; past
  32,766 documents Chroma's ``get()`` fails, so it is paged by 30,000), then fused with
  Chroma's vector query by LangChain's ensemble (weighted RRF, 0.5 / 0.5, c=60), k=50 each.
  Seconds per query at 100k: only a few queries are measured.

The peers run under their own venv (``--peers-venv``, default .venv-peers, made by ``--setup``
from bench/peers-requirements.txt) so that their packages never touch the repo's venv; the
parent (this venv) writes the corpus once to ``<keep>/peers-<size>/`` (texts.json, vectors.npy,
the queries and their vectors) with bench/retrieval.py's own generator, checked against the
Quire corpus. Every system is warmed with the same 5 queries (``Corpus.queries(5, salt=8)``,
fewer if warming passes a quarter of ``--max-seconds``), then measures the queries of
``Corpus.queries(n)``; each query is timed with ``time.perf_counter()`` around the query call
only. Peers get the same seeded query vector per query; Quire's embedder draws its own (the
dense cost does not depend on the values). Index build time is reported on its own; indexes on
disk (LanceDB, Chroma, the Pagepiper SQLite file) are cached in ``--keep DIR`` with the build
time of the run that built them. Query loops stop at the deadline (``--max-seconds`` per system);
a child still running 60 s past it is killed. Children report any network connection attempt
(none is expected: nothing downloads a model). Results are appended to bench/results/peers.json.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from common import (  # bench/common.py (the script's folder)
    RESULTS_DIR,
    ROOT,
    append_record,
    run_json_child,
)
from retrieval import (  # bench/retrieval.py: the corpus and the measuring helpers
    CORPUS_VERSION,
    TOP_K,
    Corpus,
    log,
    machine_record,
    pair,
    rss_mb,
    summary,
)

RESULTS = RESULTS_DIR / "peers.json"
REQUIREMENTS = Path(__file__).resolve().parent / "peers-requirements.txt"
DEFAULT_VENV = ROOT / ".venv-peers"
SYSTEMS = ("quire", "bm25s_faiss", "lancedb", "pagepiper", "open_webui")
PEERS = SYSTEMS[1:]
N_WARM = 5
CANDIDATES = 100  # per leg, before fusion (bm25s_faiss, pagepiper)
RRF_K = 60
GRACE_S = 60.0
CHROMA_PAGE = 30_000  # documents per collection.get() (Chroma fails past 32,766 at once)
PEER_PACKAGES = (
    "bm25s",
    "faiss-cpu",
    "lancedb",
    "pyarrow",
    "chromadb",
    "rank-bm25",
    "sqlean.py",
    "sqlite-vec",
    "numpy",
)
_TOKEN = re.compile(r"\w+")

Vector = npt.NDArray[np.float32]
QueryFn = Callable[[str, Vector], tuple[int, dict[str, float]]]


# -- shared by the children -------------------------------------------------------------------
def rrf(rankings: Sequence[Sequence[int]], weights: Sequence[float] | None = None) -> list[int]:
    """Reciprocal rank fusion (k=60) of ranked id lists; the top 50 ids."""
    scores: dict[int, float] = {}
    for r, ranking in enumerate(rankings):
        w = 1.0 if weights is None else weights[r]
        for rank, doc in enumerate(ranking):
            scores[doc] = scores.get(doc, 0.0) + w / (RRF_K + rank + 1)
    return sorted(scores, key=lambda d: -scores[d])[:TOP_K]


def top_ids(scores: npt.NDArray[Any], k: int) -> list[int]:
    """Indices of the ``k`` highest scores, best first."""
    k = min(k, len(scores))
    top = np.argpartition(-scores, k - 1)[:k]
    return [int(i) for i in top[np.argsort(-scores[top])]]


def release_memory() -> None:
    """Collect garbage and hand freed heap back to the OS (so RSS shows what is still held)."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def network_guard() -> list[str]:
    """Record every network connection or name lookup the child attempts (none expected)."""
    seen: list[str] = []

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "socket.getaddrinfo":
            seen.append(f"getaddrinfo {args[0]}:{args[1]}")
        elif event == "socket.connect":
            addr = args[1]
            if not isinstance(addr, str | bytes):  # an AF_UNIX path is local
                seen.append(f"connect {addr}")

    sys.addaudithook(hook)
    return seen


def peers_dir(args: argparse.Namespace) -> Path:
    return Path(args.dir) / f"peers-{args.size}"


def load_queries(args: argparse.Namespace) -> tuple[list[str], list[str], Vector, Vector]:
    """The measured queries (the first ``--n-queries``), the warm-ups, and their vectors."""
    d = peers_dir(args)
    q = json.loads((d / "queries.json").read_text())
    n = args.n_queries
    qvecs = np.load(d / "query_vectors.npy")[:n]
    return q["queries"][:n], q["warmup"], qvecs, np.load(d / "warmup_vectors.npy")


def load_corpus(args: argparse.Namespace) -> tuple[list[str], Vector]:
    d = peers_dir(args)
    texts: list[str] = json.loads((d / "texts.json").read_text())
    return texts, np.load(d / "vectors.npy")


def measure(
    fn: QueryFn,
    warm: tuple[list[str], Vector],
    items: tuple[list[str], Vector],
    deadline: float,
    budget_s: float,
) -> dict[str, Any]:
    """Warm with the same queries as every system (at least one; stopping once warming takes a
    quarter of ``budget_s``), then time each query (wall and process CPU) until the deadline.
    ``fn`` returns the number of hits and any extra per-query timings (ms)."""
    out: dict[str, Any] = {}
    warm_wall: list[float] = []
    started = time.time()
    for q, v in zip(*warm, strict=True):
        if warm_wall and (time.time() - started > budget_s / 4 or time.time() > deadline):
            break
        t0 = time.perf_counter()
        fn(q, v)
        warm_wall.append((time.perf_counter() - t0) * 1000)
    out["warmups"] = len(warm_wall)
    out["first_query_ms"] = round(warm_wall[0], 1)
    wall, cpu, hits = [], [], []
    extra: dict[str, list[float]] = {}
    for q, v in zip(*items, strict=True):
        if time.time() > deadline:
            break
        t0, c0 = time.perf_counter(), time.process_time()
        n, more = fn(q, v)
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        hits.append(n)
        for k, x in more.items():
            extra.setdefault(k, []).append(x)
    out["wall"], out["cpu"] = summary(wall), summary(cpu)
    out["mean_hits"] = round(float(np.mean(hits)), 1) if hits else 0
    out.update({k: summary(v) for k, v in extra.items()})
    return out


def cached_build(marker: Path, build: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Build an on-disk index unless ``marker`` says it was built; its build stats."""
    if marker.is_file():
        return {**json.loads(marker.read_text()), "cached": True}
    stats = build()
    marker.write_text(json.dumps(stats))
    return {**stats, "cached": False}


def versions() -> dict[str, str]:
    out = {}
    for name in PEER_PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return out


# -- the children -----------------------------------------------------------------------------
def worker_quire_build(args: argparse.Namespace) -> dict[str, Any]:
    """bench/retrieval.py's own build (or its cached corpus), then the frequent terms'
    postings as the idle worker reads them (storage/term_postings.py), unless read already."""
    from quire.config import Settings
    from quire.storage.migrate import open_database
    from retrieval import read_term_postings, worker_build

    out = worker_build(args)
    settings = Settings(data_dir=Path(args.dir) / f"quire-{args.size}")
    db = open_database(settings)
    done = read_term_postings(db, settings)
    if done is not None:
        out["term_postings"] = done
    db.dispose()
    return out


def worker_quire(args: argparse.Namespace) -> dict[str, Any]:
    from quire.config import Settings
    from quire.retrieval.options import SearchOptions
    from quire.retrieval.search import Searcher
    from quire.storage.migrate import open_database
    from retrieval import RandomEmbedder

    queries, warm, qvecs, wvecs = load_queries(args)
    rss0 = rss_mb()
    settings = Settings(data_dir=Path(args.dir) / f"quire-{args.size}")
    db = open_database(settings)
    searcher = Searcher(db, settings, RandomEmbedder(args.seed))
    opts = SearchOptions(rerank=False, limit=TOP_K)

    def query(q: str, _v: Vector) -> tuple[int, dict[str, float]]:
        r = searcher.search(q, opts)
        t = r.timings_ms
        embed = t.get("embed", 0.0)
        return len(r.hits), {"search_total": t["total"], "ex_embed": t["total"] - embed}

    out = measure(query, (warm, wvecs), (queries, qvecs), args.deadline, args.max_seconds)
    out["build"] = {}
    out["rss_serving_mb"] = round(rss_mb() - rss0, 1)
    searcher.close()
    db.dispose()
    return out


def worker_bm25s_faiss(args: argparse.Namespace) -> dict[str, Any]:
    import bm25s
    import faiss

    queries, warm, qvecs, wvecs = load_queries(args)
    rss0 = rss_mb()
    texts, vecs = load_corpus(args)
    t0 = time.perf_counter()
    tokens = bm25s.tokenize(texts, stopwords="en", show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    t1 = time.perf_counter()
    # One thread per query: with OpenMP's two, a query waits a whole time slice (~16 ms)
    # whenever the other core is busy (a noisy 2-core machine); one thread is faster anyway.
    faiss.omp_set_num_threads(1)
    index = faiss.IndexFlatIP(vecs.shape[1])
    index.add(vecs)
    t2 = time.perf_counter()
    build = {
        "total_s": round(t2 - t0, 2),
        "bm25s_s": round(t1 - t0, 2),
        "faiss_s": round(t2 - t1, 2),
    }
    del tokens, vecs
    release_memory()
    rss_index = rss_mb() - rss0  # the texts are held too (the hits are returned with them)

    def query(q: str, v: Vector) -> tuple[int, dict[str, float]]:
        t0 = time.perf_counter()
        qt = bm25s.tokenize([q], stopwords="en", show_progress=False)
        docs, _ = retriever.retrieve(qt, k=CANDIDATES, show_progress=False)
        t1 = time.perf_counter()
        _, knn = index.search(v[None, :], CANDIDATES)
        t2 = time.perf_counter()
        top = rrf([docs[0].tolist(), knn[0].tolist()])
        ms = {"bm25_ms": (t1 - t0) * 1000, "vector_ms": (t2 - t1) * 1000}
        return len([texts[i] for i in top]), ms

    out = measure(query, (warm, wvecs), (queries, qvecs), args.deadline, args.max_seconds)
    out.update(build=build, rss_index_mb=round(rss_index, 1))
    out["rss_serving_mb"] = round(rss_mb() - rss0, 1)
    return out


def worker_lancedb(args: argparse.Namespace) -> dict[str, Any]:
    import lancedb
    import pyarrow as pa
    from lancedb.index import FTS
    from lancedb.rerankers import RRFReranker

    queries, warm, qvecs, wvecs = load_queries(args)
    path = peers_dir(args) / "lancedb"

    def build() -> dict[str, Any]:
        shutil.rmtree(path, ignore_errors=True)
        texts, vecs = load_corpus(args)
        t0 = time.perf_counter()
        table = pa.table(
            {
                "id": pa.array(np.arange(len(texts)), pa.int64()),
                "text": pa.array(texts, pa.string()),
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel()), vecs.shape[1]),
            }
        )
        tbl = lancedb.connect(path).create_table("chunks", data=table)
        t1 = time.perf_counter()
        tbl.create_index("text", config=FTS())
        t2 = time.perf_counter()
        return {
            "total_s": round(t2 - t0, 2),
            "table_s": round(t1 - t0, 2),
            "fts_s": round(t2 - t1, 2),
        }

    build_stats = cached_build(peers_dir(args) / "lancedb.json", build)
    release_memory()
    rss0 = rss_mb()  # serving only: the index was built (or cached) on disk
    tbl = lancedb.connect(path).open_table("chunks")
    reranker = RRFReranker(K=RRF_K)

    def query(q: str, v: Vector) -> tuple[int, dict[str, float]]:
        res = (
            tbl.search(query_type="hybrid")
            .vector(v)
            .text(q)
            .rerank(reranker)
            .limit(TOP_K)  # all columns: a select() would warn on every query (lancedb 0.40)
            .to_arrow()
        )
        return res.num_rows, {}

    out = measure(query, (warm, wvecs), (queries, qvecs), args.deadline, args.max_seconds)
    out["build"] = build_stats
    out["rss_serving_mb"] = round(rss_mb() - rss0, 1)
    return out


def worker_pagepiper(args: argparse.Namespace) -> dict[str, Any]:
    import sqlean as sqlite3
    import sqlite_vec
    from rank_bm25 import BM25Okapi

    queries, warm, qvecs, wvecs = load_queries(args)
    path = peers_dir(args) / "pagepiper.db"

    def connect() -> Any:
        conn = sqlite3.connect(str(path))
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
        return conn

    def build_db() -> dict[str, Any]:
        path.unlink(missing_ok=True)
        texts, vecs = load_corpus(args)
        t0 = time.perf_counter()
        conn = connect()
        with conn:
            conn.execute("CREATE TABLE chunks (id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
            conn.execute(
                f"CREATE VIRTUAL TABLE vec_chunks USING vec0(embedding float[{vecs.shape[1]}])"
            )
            conn.executemany("INSERT INTO chunks VALUES (?, ?)", enumerate(texts))
            conn.executemany(
                "INSERT INTO vec_chunks (rowid, embedding) VALUES (?, ?)",
                ((i, v.tobytes()) for i, v in enumerate(vecs)),
            )
        conn.close()
        return {"sqlite_vec_s": round(time.perf_counter() - t0, 2)}

    stats = cached_build(peers_dir(args) / "pagepiper.json", build_db)
    release_memory()
    rss0 = rss_mb()
    conn = connect()
    # At start-up: every chunk's text from SQLite into an in-memory BM25Okapi.
    t0 = time.perf_counter()
    bm = BM25Okapi(
        _TOKEN.findall(r[0].lower()) for r in conn.execute("SELECT text FROM chunks ORDER BY id")
    )
    stats["bm25_s"] = round(time.perf_counter() - t0, 2)
    stats["total_s"] = round(stats["sqlite_vec_s"] + stats["bm25_s"], 2)
    release_memory()
    rss_index = rss_mb() - rss0
    knn_sql = "SELECT rowid FROM vec_chunks WHERE embedding MATCH ? AND k = ?"

    def query(q: str, v: Vector) -> tuple[int, dict[str, float]]:
        lexical = top_ids(bm.get_scores(_TOKEN.findall(q.lower())), CANDIDATES)
        dense = [r[0] for r in conn.execute(knn_sql, (v.tobytes(), CANDIDATES))]
        top = rrf([lexical, dense])
        marks = ",".join("?" * len(top))
        rows = conn.execute(f"SELECT id, text FROM chunks WHERE id IN ({marks})", top).fetchall()
        return len(rows), {}

    out = measure(query, (warm, wvecs), (queries, qvecs), args.deadline, args.max_seconds)
    out.update(build=stats, rss_index_mb=round(rss_index, 1))
    out["rss_serving_mb"] = round(rss_mb() - rss0, 1)
    conn.close()
    return out


def worker_open_webui(args: argparse.Namespace) -> dict[str, Any]:
    import chromadb
    from chromadb.config import Settings as ChromaSettings
    from rank_bm25 import BM25Okapi

    queries, warm, qvecs, wvecs = load_queries(args)
    path = peers_dir(args) / "chroma"

    def client() -> Any:
        return chromadb.PersistentClient(
            path=str(path), settings=ChromaSettings(anonymized_telemetry=False)
        )

    def build() -> dict[str, Any]:
        shutil.rmtree(path, ignore_errors=True)
        texts, vecs = load_corpus(args)
        t0 = time.perf_counter()
        # No embedding function: Chroma must never fetch its default ONNX model.
        col = client().create_collection(
            "chunks", embedding_function=None, metadata={"hnsw:space": "cosine"}
        )
        step = 5_000  # under Chroma's max batch (5,461)
        for s in range(0, len(texts), step):
            col.add(
                ids=[str(i) for i in range(s, min(s + step, len(texts)))],
                documents=texts[s : s + step],
                embeddings=vecs[s : s + step],
            )
        return {"total_s": round(time.perf_counter() - t0, 2)}

    stats = cached_build(peers_dir(args) / "chroma.json", build)
    release_memory()
    rss0 = rss_mb()
    col = client().get_collection("chunks", embedding_function=None)
    weights = (0.5, 0.5)  # Open WebUI's default BM25 weight; LangChain's EnsembleRetriever
    total = col.count()

    def read_all() -> tuple[list[str], list[str]]:
        """What Open WebUI reads per hybrid query: ``collection.get()``, all documents and
        metadata. Past 32,766 documents that call fails in Chroma 1.5 ("too many SQL
        variables"), so a large collection is read in pages of 30,000."""
        if total <= CHROMA_PAGE:
            got = col.get()
            return got["documents"], got["ids"]
        docs: list[str] = []
        ids: list[str] = []
        for offset in range(0, total, CHROMA_PAGE):
            got = col.get(limit=CHROMA_PAGE, offset=offset)
            docs += got["documents"]
            ids += got["ids"]
        return docs, ids

    def query(q: str, v: Vector) -> tuple[int, dict[str, float]]:
        t0 = time.perf_counter()
        docs, ids = read_all()
        t1 = time.perf_counter()
        bm = BM25Okapi([d.split() for d in docs])  # LangChain BM25Retriever.from_texts
        scores = bm.get_scores(q.split())
        lexical = [ids[i] for i in np.argsort(scores)[::-1][:TOP_K]]  # rank_bm25.get_top_n
        t2 = time.perf_counter()
        res = col.query(query_embeddings=[v], n_results=TOP_K)
        t3 = time.perf_counter()
        names = {n: i for i, n in enumerate(dict.fromkeys(lexical + res["ids"][0]))}
        top = rrf([[names[n] for n in lexical], [names[n] for n in res["ids"][0]]], weights)
        ms = {"get_ms": t1 - t0, "bm25_ms": t2 - t1, "vector_ms": t3 - t2}
        return len(top), {k: round(x * 1000, 1) for k, x in ms.items()}

    out = measure(query, (warm, wvecs), (queries, qvecs), args.deadline, args.max_seconds)
    out["build"] = stats
    out["get_pages"] = -(-total // CHROMA_PAGE) if total > CHROMA_PAGE else 1
    out["rss_serving_mb"] = round(rss_mb() - rss0, 1)
    return out


WORKERS: dict[str, Callable[[argparse.Namespace], dict[str, Any]]] = {
    "quire_build": worker_quire_build,
    "quire": worker_quire,
    "bm25s_faiss": worker_bm25s_faiss,
    "lancedb": worker_lancedb,
    "pagepiper": worker_pagepiper,
    "open_webui": worker_open_webui,
}


def run_worker(args: argparse.Namespace) -> None:
    seen = network_guard()
    out: dict[str, Any] = {"load_avg_start": round(os.getloadavg()[0], 2)}
    out.update(WORKERS[args.worker](args))
    out["load_avg_end"] = round(os.getloadavg()[0], 2)
    out["network_attempts"] = seen[:10]
    out["versions"] = versions()
    print(json.dumps(out))


# -- the parent -------------------------------------------------------------------------------
def prepare_peer_corpus(args: argparse.Namespace, size: int, n_queries: int) -> None:
    """Write the texts and vectors of bench/retrieval.py's corpus (cached) and the queries and
    their vectors for the peers, who cannot import quire."""
    from retrieval import corpus_batches  # needs quire: this runs in the main venv

    d = Path(args.dir) / f"peers-{size}"
    d.mkdir(parents=True, exist_ok=True)
    corpus = Corpus(args.seed)
    marker = d / "corpus.json"
    meta = {"version": CORPUS_VERSION, "seed": args.seed, "size": size}
    if not (marker.is_file() and json.loads(marker.read_text()) == meta):
        for name in ("lancedb.json", "chroma.json", "pagepiper.json"):  # indexes of old texts
            (d / name).unlink(missing_ok=True)
        log(f"peers {size:,}: writing the corpus to {d}")
        texts: list[str] = []
        vecs = []
        for _, batch, batch_vecs in corpus_batches(corpus, size):  # build_quire's own data
            texts += batch
            vecs.append(batch_vecs)
        check_against_quire(Path(args.dir) / f"quire-{size}" / "quire.db", texts)
        (d / "texts.json").write_text(json.dumps(texts))
        np.save(d / "vectors.npy", np.concatenate(vecs))
        marker.write_text(json.dumps(meta))
    write_queries(d, corpus, n_queries)


def write_queries(d: Path, corpus: Corpus, n_queries: int) -> None:
    """The measured and warm-up queries of every system, and the peers' query vectors (seeded
    as worker_quire seeds its own; the warm-ups' from another seed)."""
    from retrieval import unit_vectors

    d.mkdir(parents=True, exist_ok=True)
    queries = {"queries": corpus.queries(n_queries), "warmup": corpus.queries(N_WARM, salt=8)}
    (d / "queries.json").write_text(json.dumps(queries))
    rng = np.random.default_rng
    np.save(d / "query_vectors.npy", unit_vectors(rng([corpus.seed, 3]), n_queries))
    np.save(d / "warmup_vectors.npy", unit_vectors(rng([corpus.seed, 8]), N_WARM))


def check_against_quire(db_path: Path, texts: list[str]) -> None:
    """The regenerated texts are those of the Quire corpus (when it is there)."""
    if not db_path.is_file():
        return
    import sqlean

    conn = sqlean.connect(f"file:{db_path}?mode=ro", uri=True)
    stored = conn.execute("SELECT count(*) FROM page_chunks").fetchone()[0]
    picks = sorted({0, len(texts) // 2, len(texts) - 1})
    rows = [
        conn.execute("SELECT text FROM page_chunks ORDER BY id LIMIT 1 OFFSET ?", (i,)).fetchone()[
            0
        ]
        for i in picks
    ]
    conn.close()
    if stored != len(texts) or rows != [texts[i] for i in picks]:
        raise SystemExit(f"the regenerated corpus differs from {db_path}")


def run_child(
    system: str, python: Path, size: int, n_queries: int, args: argparse.Namespace, deadline: float
) -> dict[str, Any]:
    """One worker in its own process; its JSON result, or the reason it has none."""
    cmd = [
        str(python),
        str(Path(__file__).resolve()),
        "--worker",
        system,
        "--size",
        str(size),
        "--dir",
        str(args.dir),
        "--seed",
        str(args.seed),
        "--n-queries",
        str(n_queries),
        "--deadline",
        str(deadline),
        "--max-seconds",
        str(args.max_seconds),
    ]
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "ANONYMIZED_TELEMETRY": "False",
        "TOKENIZERS_PARALLELISM": "false",
    }
    return run_json_child(cmd, deadline, GRACE_S, f"--max-seconds {args.max_seconds}", env)


def size_table(size: int, results: dict[str, Any]) -> str:
    head = (
        f"### {size:,} chunks\n\n| system | build s | first query ms | query p50 / p95 ms "
        "| CPU p50 ms | RSS growth MB | queries | notes |\n|" + "---|" * 8 + "\n"
    )
    lines = []
    for system, r in results.items():
        if "skipped" in r:
            lines.append(f"| {system} | – | – | – | – | – | 0 | {r['skipped']} |")
            continue
        b = r.get("build", {})
        build = f"{b.get('total_s', '–')}" + (" (cached)" if b.get("cached") else "")
        rss = f"{r.get('rss_serving_mb', '–')}"
        if "rss_index_mb" in r:
            rss += f" (index {r['rss_index_mb']})"
        notes = []
        if system == "quire":
            notes.append(f"excl. embed {pair(r.get('ex_embed'))}")
        for part in ("get_ms", "bm25_ms", "vector_ms"):
            if part in r:
                notes.append(f"{part[:-3]} p50 {r[part].get('p50', '–')}")
        if r.get("get_pages", 1) > 1:
            notes.append(f"get() in {r['get_pages']} pages")
        if r.get("network_attempts"):
            notes.append(f"NETWORK: {r['network_attempts']}")
        notes.append(f"load {r.get('load_avg_start')} / {r.get('load_avg_end')}")
        lines.append(
            f"| {system} | {build} | {r.get('first_query_ms', '–')} | {pair(r.get('wall'))} "
            f"| {r.get('cpu', {}).get('p50', '–')} | {rss} | {r.get('wall', {}).get('n', 0)} "
            f"(+{r.get('warmups', 0)} warm) | {', '.join(notes)} |"
        )
    return head + "\n".join(lines)


def setup(venv: Path) -> None:
    """Create the peers' venv and install bench/peers-requirements.txt into it."""
    if not (venv / "bin" / "python").exists():
        log(f"creating {venv}")
        subprocess.run(["python3", "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check"]
    subprocess.run([*pip, "--upgrade", "pip"], check=True)
    subprocess.run([*pip, "-r", str(REQUIREMENTS)], check=True)
    log(f"installed {REQUIREMENTS.name} into {venv}")


def query_count(system: str, args: argparse.Namespace) -> int:
    if system == "pagepiper":
        return min(int(args.queries), int(args.pagepiper_queries))
    if system == "open_webui":
        return min(int(args.queries), int(args.open_webui_queries))
    return int(args.queries)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--setup", action="store_true", help="create the peers' venv and exit")
    p.add_argument("--peers-venv", type=Path, default=DEFAULT_VENV, help="the peers' venv")
    p.add_argument("--sizes", default="100000", help="corpus sizes in chunks")
    p.add_argument("--quick", action="store_true", help="10k chunks only")
    p.add_argument("--queries", type=int, default=50, help="measured queries per system")
    p.add_argument("--pagepiper-queries", type=int, default=10, help="at most this many")
    p.add_argument("--open-webui-queries", type=int, default=3, help="at most this many")
    p.add_argument("--only", default=",".join(SYSTEMS), help="comma-separated systems")
    p.add_argument("--max-seconds", type=float, default=300, help="time limit per system")
    p.add_argument("--keep", type=Path, help="cache corpora and peer indexes here")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-save", action="store_true", help="do not append to the results")
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    p.add_argument("--size", type=int, help=argparse.SUPPRESS)
    p.add_argument("--dir", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--n-queries", type=int, help=argparse.SUPPRESS)
    p.add_argument("--deadline", type=float, help=argparse.SUPPRESS)
    args = p.parse_args()

    if args.worker:
        run_worker(args)
        return
    if args.setup:
        setup(args.peers_venv)
        return
    systems = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(systems) - set(SYSTEMS)
    if unknown:
        p.error(f"unknown systems {sorted(unknown)}; choose from {', '.join(SYSTEMS)}")
    peers_python = args.peers_venv / "bin" / "python"
    sizes = [10_000] if args.quick else [int(s) for s in args.sizes.split(",") if s.strip()]
    args.dir = args.keep or Path(tempfile.mkdtemp(prefix="quire-peers-"))
    args.dir.mkdir(parents=True, exist_ok=True)
    load_avg = os.getloadavg()[0]
    started = time.time()
    results: dict[str, Any] = {}
    try:
        for size in sizes:
            log(f"== {size:,} chunks (corpora in {args.dir})")
            res: dict[str, Any] = {}
            build: dict[str, Any] = {}
            if "quire" in systems:
                deadline = time.time() + args.max_seconds
                build = run_child("quire_build", Path(sys.executable), size, 0, args, deadline)
            if any(s in PEERS for s in systems):
                prepare_peer_corpus(args, size, args.queries)
            else:  # only Quire: the queries, no corpus copy
                write_queries(Path(args.dir) / f"peers-{size}", Corpus(args.seed), args.queries)
            for system in systems:
                if system == "quire" and "skipped" in build:
                    res[system] = build
                    continue
                if system != "quire" and not peers_python.exists():
                    res[system] = {"skipped": f"no {peers_python}: run with --setup"}
                    continue
                python = Path(sys.executable) if system == "quire" else peers_python
                n = query_count(system, args)
                log(f"{system} {size:,}: {n} queries")
                deadline = time.time() + args.max_seconds
                res[system] = run_child(system, python, size, n, args, deadline)
                if system == "quire" and "build" in build:
                    res[system]["build"] = {**build["build"], "cached": build["build_cached"]}
            results[str(size)] = res
            print("\n" + size_table(size, res) + "\n", flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(args.dir, ignore_errors=True)
    notes = [
        "query vectors given: the query embedding is not timed for the peers; Quire's "
        "'excl. embed' subtracts its RandomEmbedder call (random unit vectors, its own)",
        "vectors are synthetic seeded random unit vectors (float32, 384-d)",
        f"bm25s_faiss and pagepiper fuse the top {CANDIDATES} of each leg by RRF (k={RRF_K}); "
        "lancedb fuses its own two legs of 50 with RRFReranker; open_webui k=50 per leg, "
        "weighted RRF 0.5/0.5 and a BM25 rebuild from collection.get() per query",
        "Chroma's vector search is HNSW (approximate), as Open WebUI uses it; the others exact",
        "RSS growth: from after the imports to after the queries (serving); 'index' for systems "
        "built in the child (the input vectors freed, the texts kept for the hits)",
    ]
    for note in notes:
        print(f"note: {note}")
    if args.no_save:
        return
    record = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine_record(load_avg),
        "args": {
            k: (str(v) if isinstance(v, Path) else v)
            for k, v in vars(args).items()
            if k not in ("worker", "size", "deadline", "dir", "n_queries", "setup")
        },
        "sizes": sizes,
        "systems": systems,
        "wall_s": round(time.time() - started, 1),
        "notes": notes,
        "results": results,
    }
    append_record(args.out, record)
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
