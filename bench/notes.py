"""How long saving a note takes, and when it is found: ``POST /api/notes`` through the real app
(in process, TestClient) on a library holding one PDF ingested by the real worker, for notes of
a sentence, a page of Markdown and the 100 KB limit; each note's word searched at once with
``POST /api/search`` (all three legs, no reranker). CPU time is reported next to wall time.

    .venv/bin/python bench/notes.py [--runs 20]

Results are appended to bench/results/notes.json.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from common import DOCS, RESULTS_DIR, append_record, machine_info  # bench/common.py
from quire.app import create_app
from quire.config import Settings
from quire.ingest.intake import add_file
from quire.ingest.worker import Worker
from quire.storage.notes import MAX_BODY_BYTES

PDF = DOCS / "pdf" / "dmca-summary.pdf"
SIZES = {
    "sentence": 120,
    "page": 3_000,
    "limit": MAX_BODY_BYTES - 1_000,
}


def _body(word: str, size: int) -> str:
    filler = "The safe harbour protects a service provider that acts on a notice. "
    return f"{word} " + (filler * (size // len(filler) + 1))[: size - len(word) - 1]


def run(runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="quire-notes-bench-") as tmp:
        settings = Settings(data_dir=Path(tmp) / "data", llm_backends="none")
        worker = Worker(settings)
        doc = add_file(worker.db, settings.files_dir, PDF, PDF.name, max_bytes=10**9)
        worker.run(drain=True)
        worker.close()
        out: dict[str, Any] = {}
        with TestClient(create_app(settings)) as api:
            for name, size in SIZES.items():
                save_ms, cpu_ms, found_ms, found = [], [], [], 0
                for i in range(runs):
                    word = f"zq{name}{i}marker"
                    w0, c0 = time.perf_counter(), time.process_time()
                    r = api.post(
                        "/api/notes",
                        json={"document_id": doc.document_id, "page": 1, "body": _body(word, size)},
                    )
                    save_ms.append((time.perf_counter() - w0) * 1000)
                    cpu_ms.append((time.process_time() - c0) * 1000)
                    assert r.status_code == 201, r.text
                    s0 = time.perf_counter()
                    hits = api.post(
                        "/api/search", json={"query": word, "kinds": ["note"], "rerank": False}
                    ).json()["hits"]
                    found_ms.append((time.perf_counter() - s0) * 1000)
                    found += bool(hits and word in hits[0]["text"])
                out[name] = {
                    "bytes": size,
                    "save_ms_p50": round(statistics.median(save_ms), 1),
                    "save_ms_max": round(max(save_ms), 1),
                    "save_cpu_ms_p50": round(statistics.median(cpu_ms), 1),
                    "search_ms_p50": round(statistics.median(found_ms), 1),
                    "found_first": f"{found}/{runs}",
                }
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    result = run(args.runs)
    print(
        f"{'note':<10} {'bytes':>7} {'save p50':>9} {'max':>8} {'cpu p50':>8} {'search':>8} found"
    )
    for name, r in result.items():
        print(
            f"{name:<10} {r['bytes']:>7} {r['save_ms_p50']:>7} ms {r['save_ms_max']:>5} ms "
            f"{r['save_cpu_ms_p50']:>5} ms {r['search_ms_p50']:>5} ms {r['found_first']}"
        )
    append_record(
        RESULTS_DIR / "notes.json",
        {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "runs": args.runs,
            "machine": machine_info(load),
            "results": result,
        },
    )


if __name__ == "__main__":
    main()
