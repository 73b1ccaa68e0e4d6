"""How soon a long document can be found: seconds from intake to its first BM25 hit (status
``searchable``), and to ``ready`` (every chunk embedded: the moment it was first found before
the searchable status), measured in one run on the real pipeline.

    .venv/bin/python bench/searchable.py [--file PATH] [--query WORDS] [--runs 1]
    .venv/bin/python bench/searchable.py --books --workers 1,2    # three books uploaded at once

A worker in a thread ingests the file into a fresh data directory while this script runs the
BM25 leg (the real FTS5 leg, ``Fts5Lexical.bm25``, with the real filter) every 0.1 s for a
phrase from deep in the document. Results are appended to bench/results/searchable.json.

``--books``: three books (a 244-page PDF, two EPUBs) queued at once, ingested by N real
``quire worker --drain`` processes (``--workers 1,2``: one run per count, in one sitting); the
seconds until each is ``searchable`` and ``ready``, and until all are.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from common import DOCS, RESULTS_DIR, append_record, machine_info  # bench/common.py
from quire.config import Settings
from quire.ingest.intake import add_file
from quire.ingest.worker import Worker
from quire.retrieval.filters import Filter
from quire.retrieval.lexical.fts5 import Fts5Lexical

DEFAULT_FILE = DOCS / "pdf" / "thinkcomplexity2.pdf"  # 244 pages
DEFAULT_QUERY = "Schelling segregation model"  # a chapter in the second half
BOOKS = [
    DEFAULT_FILE,
    DOCS / "epub" / "pg345-dracula-epub3.epub",
    DOCS / "epub" / "pg1228-origin-of-species-epub3.epub",
]


def once(path: Path, query: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="quire-searchable-") as tmp:
        settings = Settings(data_dir=Path(tmp) / "data", llm_backends="none")
        worker = Worker(settings)
        t0 = time.monotonic()
        intake = add_file(worker.db, settings.files_dir, path, path.name, max_bytes=10**10)
        thread = threading.Thread(target=worker.run, kwargs={"drain": True}, daemon=True)
        thread.start()
        first_hit = searchable = ready = None
        bm25 = Fts5Lexical()
        while ready is None and time.monotonic() - t0 < 1800:
            with worker.db.read() as conn:
                status = conn.exec_driver_sql(
                    "SELECT status FROM documents WHERE id = ?", (intake.document_id,)
                ).scalar_one()
                if first_hit is None and bm25.bm25(conn, query, limit=5, flt=Filter()):
                    first_hit = time.monotonic() - t0
            if status == "searchable" and searchable is None:
                searchable = time.monotonic() - t0
            if status == "ready":
                ready = time.monotonic() - t0
                searchable = searchable if searchable is not None else ready
            if status == "failed":
                raise SystemExit(f"{path.name} failed to ingest")
            time.sleep(0.1)
        thread.join(timeout=60)
        with worker.db.read() as conn:
            job = conn.exec_driver_sql(
                "SELECT detail FROM ingest_jobs ORDER BY id DESC LIMIT 1"
            ).scalar_one()
        worker.close()
        return {
            "searchable_s": round(searchable or 0.0, 2),
            "first_bm25_hit_s": round(first_hit or 0.0, 2),
            "ready_s": round(ready or 0.0, 2),
            "detail": job,
        }


def books(paths: list[Path], workers: int) -> dict[str, Any]:
    """``paths`` queued at once, then ``workers`` worker processes: seconds from the start of
    the workers until each document is searchable and ready."""
    with tempfile.TemporaryDirectory(prefix="quire-books-") as tmp:
        settings = Settings(data_dir=Path(tmp) / "data", llm_backends="none")
        worker = Worker(settings)  # migrates the library; its queue is run by the processes
        ids = {
            add_file(worker.db, settings.files_dir, p, p.name, max_bytes=10**10).document_id: p.name
            for p in paths
        }
        env = {**os.environ, "QUIRE_DATA_DIR": str(settings.data_dir), "QUIRE_WORKER_NICE": "0"}
        t0 = time.monotonic()
        procs = [
            subprocess.Popen([sys.executable, "-m", "quire", "worker", "--drain"], env=env)
            for _ in range(workers)
        ]
        searchable: dict[str, float] = {}
        ready: dict[str, float] = {}
        try:
            while len(ready) < len(ids) and time.monotonic() - t0 < 3600:
                with worker.db.read() as conn:
                    rows = conn.exec_driver_sql("SELECT id, status FROM documents").all()
                now = time.monotonic() - t0
                for doc_id, status in rows:
                    name = ids[doc_id]
                    if status == "failed":
                        raise SystemExit(f"{name} failed to ingest")
                    if status in ("searchable", "ready"):
                        searchable.setdefault(name, now)
                    if status == "ready":
                        ready.setdefault(name, now)
                time.sleep(0.2)
        finally:
            for proc in procs:
                proc.terminate()
                proc.wait(timeout=60)
            worker.close()
    return {
        "workers": workers,
        "searchable_s": {k: round(v, 1) for k, v in searchable.items()},
        "ready_s": {k: round(v, 1) for k, v in ready.items()},
        "all_searchable_s": round(max(searchable.values()), 1),
        "all_ready_s": round(max(ready.values()), 1),
    }


def main_books(counts: list[int], save: bool) -> None:
    runs = [books(BOOKS, n) for n in counts]
    print("\nThree books queued at once (" + ", ".join(p.name for p in BOOKS) + ")")
    print("| workers | all searchable | all ready | each searchable |")
    print("|---|---|---|---|")
    for r in runs:
        each = ", ".join(f"{v:.0f}" for v in r["searchable_s"].values())
        print(
            f"| {r['workers']} | {r['all_searchable_s']:.1f} s | {r['all_ready_s']:.1f} s "
            f"| {each} s |"
        )
    if save:
        append_record(
            RESULTS_DIR / "searchable.json",
            {
                "date": datetime.now(UTC).isoformat(timespec="seconds"),
                "machine": machine_info(os.getloadavg()[0]),
                "books": [p.name for p in BOOKS],
                "runs": runs,
            },
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--query", default=DEFAULT_QUERY)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--no-save", action="store_true")
    parser.add_argument("--books", action="store_true", help="three books queued at once")
    parser.add_argument("--workers", default="1,2", help="with --books: worker processes")
    args = parser.parse_args()
    if args.books:
        main_books([int(n) for n in args.workers.split(",")], not args.no_save)
        return
    runs = [once(args.file, args.query) for _ in range(args.runs)]
    med = {
        k: statistics.median(r[k] for r in runs)
        for k in ("searchable_s", "first_bm25_hit_s", "ready_s")
    }
    print(f"\n{args.file.name}: median of {len(runs)} run(s)")
    print("| searchable (status) | first BM25 hit | ready (all embedded) | ready ÷ first hit |")
    print("|---|---|---|---|")
    ratio = med["ready_s"] / med["first_bm25_hit_s"] if med["first_bm25_hit_s"] else 0.0
    print(
        f"| {med['searchable_s']:.1f} s | {med['first_bm25_hit_s']:.1f} s | "
        f"{med['ready_s']:.1f} s | {ratio:.1f}× |"
    )
    if not args.no_save:
        append_record(
            RESULTS_DIR / "searchable.json",
            {
                "date": datetime.now(UTC).isoformat(timespec="seconds"),
                "machine": machine_info(os.getloadavg()[0]),
                "file": args.file.name,
                "query": args.query,
                "median": med,
                "runs": runs,
            },
        )


if __name__ == "__main__":
    main()
