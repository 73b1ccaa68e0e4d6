"""The two backends side by side on bench/retrieval.py's synthetic corpus, in one run: build
time, adding and deleting 1,000 chunks, disk, memory, and search latency (BM25, dense, exact,
hybrid) with fresh terms after 5 warm-up queries and warm, top 50, query vectors given.

PostgreSQL: the server at --database-url (a database ``quire_bench_<size>`` is created on
it), or a local one started from the test wheels (tests/pg.py) when none is given.

    .venv/bin/python bench/postgres.py --sizes 100000 --keep /tmp/qbpg
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import psutil

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).parent)]

from common import RESULTS_DIR, append_record  # noqa: E402 - bench/common.py
from retrieval import (  # noqa: E402 - the corpus and its writers (bench/retrieval.py)
    ADD_CHUNKS,
    BATCH_CHUNKS,
    CHUNKS_PER_DOC,
    DIM,
    MODEL,
    TOP_K,
    Corpus,
    RandomEmbedder,
    corpus_batches,
    log,
    machine_record,
    read_term_postings,
    summary,
    unit_vectors,
    write_documents,
    write_vectors,
)

RESULTS = RESULTS_DIR / "postgres.json"
WARMUP = 5


def build(db: Any, corpus: Corpus, size: int, memory: str) -> dict[str, float]:
    """Write the corpus through the storage layer (rows and lexical index, then vectors); on
    PostgreSQL as a bulk load (``Database.bulk_load``: the costly indexes built once at the
    end, as ``quire migrate-to-postgres`` does)."""
    from quire.storage import vectors

    with db.write() as conn:
        vectors.ensure(conn, MODEL, DIM)
    t0 = time.perf_counter()
    rows_s = 0.0

    def built(name: str, done: int, total: int) -> None:
        log(f"  {db.name}: index {name} ({done}/{total}, {time.perf_counter() - t0:.0f} s)")

    with db.bulk_load(memory, progress=built):
        for start, texts, vecs in corpus_batches(corpus, size):
            _, ids = write_documents(db, start // CHUNKS_PER_DOC + 1, texts)
            write_vectors(db, ids, vecs)
            if (start // BATCH_CHUNKS) % 10 == 9:
                done = start + len(texts)
                log(f"  {db.name}: {done:,} chunks ({time.perf_counter() - t0:.0f} s)")
        rows_s = time.perf_counter() - t0
    with db.write() as conn:
        vectors.mark_ready(conn, MODEL)
    total = time.perf_counter() - t0
    return {"build_s": round(total, 1), "build_rows_s": round(rows_s, 1)}


def chunk_count(db: Any) -> int:
    with db.read() as conn:
        return int(conn.exec_driver_sql("SELECT count(*) FROM page_chunks").scalar_one())


def add_and_delete(db: Any, corpus: Corpus, size: int) -> dict[str, float]:
    """Add 1,000 chunks (10 documents) to the library and delete them again, timed."""
    from quire.storage import documents

    rng = np.random.default_rng([corpus.seed, 5, size])
    texts = corpus.texts(rng, ADD_CHUNKS)
    t0 = time.perf_counter()
    doc_ids, ids = write_documents(db, 10_000_000 + size, texts)
    write_vectors(db, ids, unit_vectors(rng, len(ids)))
    added = time.perf_counter() - t0
    t0 = time.perf_counter()
    for doc in doc_ids:
        documents.delete_document(db, doc)
    return {"add_1000_s": round(added, 2), "delete_1000_s": round(time.perf_counter() - t0, 2)}


def disk_mb(db: Any, data_dir: Path) -> float:
    if db.name == "postgresql":
        with db.read() as conn:
            size = conn.exec_driver_sql("SELECT pg_database_size(current_database())").scalar()
        return round(int(size or 0) / 2**20, 1)
    return round(sum(p.stat().st_size for p in data_dir.glob("quire*.db*")) / 2**20, 1)


def server_rss_mb() -> float:
    """RSS of the local PostgreSQL processes (postmaster and backends), MB."""
    total = 0
    for p in psutil.process_iter(["name", "memory_info"]):
        if p.info["name"] in ("postgres", "postmaster") and p.info["memory_info"]:
            total += p.info["memory_info"].rss
    return round(total / 2**20, 1)


def measure(db: Any, settings: Any, corpus: Corpus, n: int, seed: int) -> dict[str, Any]:
    """Search latency: every query's terms fresh (after WARMUP queries), then the same again."""
    from quire.retrieval.options import SearchOptions
    from quire.retrieval.search import Searcher

    proc = psutil.Process()
    rss0 = proc.memory_info().rss
    searcher = Searcher(db, settings, RandomEmbedder(seed))
    options = SearchOptions(rerank=False, limit=TOP_K)
    for q in corpus.queries(WARMUP, salt=8):
        searcher.search(q, options)
    out: dict[str, Any] = {}
    for label in ("fresh", "warm"):
        totals: list[float] = []
        legs: dict[str, list[float]] = {"bm25": [], "dense": [], "exact": []}
        for q in corpus.queries(n):
            t0 = time.perf_counter()
            result = searcher.search(q, options)
            totals.append((time.perf_counter() - t0) * 1000)
            for leg, values in legs.items():
                if leg in result.timings_ms:
                    values.append(float(result.timings_ms[leg]))
        out[label] = {"hybrid": summary(totals), **{k: summary(v) for k, v in legs.items()}}
    out["client_rss_growth_mb"] = round((proc.memory_info().rss - rss0) / 2**20, 1)
    searcher.close()
    return out


def run_size(args: argparse.Namespace, size: int, url: str) -> dict[str, Any]:
    from quire.config import Settings
    from quire.storage.migrate import open_database, scratch_library

    corpus = Corpus(args.seed)
    record: dict[str, Any] = {"size": size}
    base = Settings(data_dir=args.keep / "base", database_url=url)
    for backend in args.backends.split(","):
        data_dir = args.keep / f"{backend}-{size}"
        if backend == "sqlite":
            settings = Settings(data_dir=data_dir)
        else:
            settings, _ = scratch_library(base, data_dir)
        db = open_database(settings)
        got: dict[str, Any] = {}
        have = chunk_count(db)
        if have not in (0, size):
            raise SystemExit(f"{data_dir} holds {have} chunks, not {size}: remove it")
        built = data_dir / "build.json"
        if have == 0:
            log(f"{backend}: building {size:,} chunks")
            made = build(db, corpus, size, args.index_memory)
            made["load_avg_after_build"] = round(os.getloadavg()[0], 2)
            built.parent.mkdir(parents=True, exist_ok=True)
            built.write_text(json.dumps(made))
        if built.exists():  # the build time of a corpus built by an earlier run
            got.update(json.loads(built.read_text()))
        if args.build_only:
            db.dispose()
            continue
        db.settle()  # what autovacuum does after a bulk load, done now
        # What the idle worker gives a library after a load (storage/term_postings.py).
        t0 = time.perf_counter()
        if read_term_postings(db, settings) is not None:  # None: read by an earlier run
            got["term_postings_s"] = round(time.perf_counter() - t0, 1)
        got.update(add_and_delete(db, corpus, size))
        got["disk_mb"] = disk_mb(db, data_dir)
        log(f"{backend}: searching")
        got.update(measure(db, settings, corpus, args.queries, args.seed))
        if backend == "postgresql":
            got["server_rss_mb"] = server_rss_mb()
        db.dispose()
        record[backend] = got
    return record


def table(record: dict[str, Any]) -> str:
    def ms(s: dict[str, Any]) -> str:
        return f"{s['p50']:.1f} / {s['p95']:.1f}" if s.get("n") else "–"

    def build_s(r: dict[str, Any]) -> str:
        if "build_s" not in r:
            return "–"
        rows = f" (rows {r['build_rows_s']})" if "build_rows_s" in r else ""
        return f"{r['build_s']}{rows}"

    cells: list[tuple[str, Any]] = [
        ("hybrid, fresh terms p50 / p95 ms", lambda r: ms(r["fresh"]["hybrid"])),
        ("hybrid, warm p50 / p95 ms", lambda r: ms(r["warm"]["hybrid"])),
        ("BM25 leg, fresh p50 / p95 ms", lambda r: ms(r["fresh"]["bm25"])),
        ("dense leg, fresh p50 / p95 ms", lambda r: ms(r["fresh"]["dense"])),
        ("exact leg, fresh p50 / p95 ms", lambda r: ms(r["fresh"]["exact"])),
        ("build s (of which rows, before the index builds)", build_s),
        ("add 1,000 chunks s", lambda r: str(r["add_1000_s"])),
        ("delete them s", lambda r: str(r["delete_1000_s"])),
        ("disk MB", lambda r: str(r["disk_mb"])),
        (
            "serving RSS growth MB (client; server)",
            lambda r: f"{r['client_rss_growth_mb']}; {r.get('server_rss_mb', '–')}",
        ),
    ]
    backends = [b for b in ("sqlite", "postgresql") if b in record]
    names = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}
    lines = [
        f"| {record['size']:,} chunks | " + " | ".join(names[b] for b in backends) + " |",
        "| --- |" + " --- |" * len(backends),
        *(
            f"| {label} | " + " | ".join(cell(record[b]) for b in backends) + " |"
            for label, cell in cells
        ),
    ]
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sizes", default="100000", help="corpus sizes in chunks")
    p.add_argument("--queries", type=int, default=100, help="measured queries per protocol")
    p.add_argument("--database-url", help="a PostgreSQL server (default: start a local one)")
    p.add_argument("--keep", type=Path, default=Path("/tmp/quire-bench-pg"))
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--backends", default="sqlite,postgresql", help="which, in this order")
    p.add_argument(
        "--build-only",
        action="store_true",
        help="build the corpora and stop (a later run measures them; two builds can run "
        "side by side, one per backend)",
    )
    p.add_argument(
        "--index-memory", default="2GB", help="maintenance_work_mem for the bulk index builds"
    )
    p.add_argument(
        "--shared-buffers",
        default="4GB",
        help="the local server's shared_buffers (PostgreSQL's default is 128MB; a team server "
        "on this 24 GB machine would give it a quarter of the memory or so)",
    )
    p.add_argument("--no-save", action="store_true")
    args = p.parse_args()
    args.keep.mkdir(parents=True, exist_ok=True)
    server = None
    url = args.database_url
    if url is None and "postgresql" in args.backends:
        from tests.pg import PgServer

        server = PgServer.start(args.keep / "pg")
        server.configure(shared_buffers=args.shared_buffers, effective_cache_size="12GB")
        url = server.url("postgres")
    load = os.getloadavg()[0]
    recorded = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}
    recorded["database_url"] = "…" if args.database_url else None  # it may hold a password
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            record = run_size(args, size, url)
            # The date and the command of each run, for the site's benchmark page.
            date = datetime.now(UTC).isoformat(timespec="seconds")
            record.update(date=date, args={**recorded, "sizes": str(size)})
            record["machine"] = machine_record(load)
            if args.build_only:
                continue
            record["server_settings"] = {"shared_buffers": args.shared_buffers}
            print(table(record), flush=True)
            if not args.no_save:
                append_record(RESULTS, record)
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
