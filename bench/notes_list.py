"""The Notes list and export on a library of thousands of notes: ``GET /api/notes`` for the
first page, the last page and a search that finds one note far past the first 500, and
``GET /api/notes/export`` of every note in Quire's style and two CSL styles, through the real
app (in process, TestClient) on a library holding one PDF ingested by the real worker; the
notes are highlights with quotes, made through the storage layer.

    .venv/bin/python bench/notes_list.py [--notes 5000] [--runs 5]

Results are appended to bench/results/notes_list.json.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import select

from common import DOCS, RESULTS_DIR, append_record, machine_info  # bench/common.py
from quire.app import create_app
from quire.config import Settings
from quire.ingest.intake import add_file
from quire.ingest.worker import Worker
from quire.storage import notes
from quire.storage.schema import pages as pages_table

PDF = DOCS / "pdf" / "dmca-summary.pdf"
WORD = "kittiwake"  # the last note's; in no document
STYLES = ("quire", "apa", "chicago-author-date")


def _p50_ms(runs: int, call: Callable[[], Any]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 1)


def run(count: int, runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="quire-notes-list-bench-") as tmp:
        settings = Settings(data_dir=Path(tmp) / "data", llm_backends="none")
        worker = Worker(settings)
        doc = add_file(worker.db, settings.files_dir, PDF, PDF.name, max_bytes=10**9)
        worker.run(drain=True)
        doc_id = int(doc.document_id)
        with worker.db.read() as conn:
            query = select(pages_table.c.page).where(pages_table.c.document_id == doc_id)
            pages = conn.execute(query).scalars().all()
        with worker.db.write() as conn:
            for i in range(count):
                word = f" {WORD}" if i == count - 1 else ""
                fields = {
                    "document_id": doc_id,
                    "page": pages[i % len(pages)],
                    "quote": f"highlight {i} of the safe harbour{word}",
                    "body": f"note {i}",
                }
                notes.create(conn, fields, check_page=False)
        worker.close()
        out: dict[str, Any] = {"notes": count}
        with TestClient(create_app(settings)) as api:
            last = (count - 1) // 200 * 200
            out["first_page_ms"] = _p50_ms(runs, lambda: api.get("/api/notes").raise_for_status())
            out["last_page_ms"] = _p50_ms(
                runs, lambda: api.get("/api/notes", params={"offset": last}).raise_for_status()
            )
            found = api.get("/api/notes", params={"q": WORD}).json()
            assert found["total"] == 1, found
            out["search_ms"] = _p50_ms(
                runs, lambda: api.get("/api/notes", params={"q": WORD}).raise_for_status()
            )
            for style in STYLES:
                params = {"document_id": doc_id, "style": style}
                out[f"export_{style}_ms"] = _p50_ms(
                    runs, lambda p=params: api.get("/api/notes/export", params=p).raise_for_status()
                )
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    result = run(args.notes, args.runs)
    for key, value in result.items():
        print(f"{key:>30}: {value}")
    append_record(
        RESULTS_DIR / "notes_list.json",
        {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "runs": args.runs,
            "machine": machine_info(load),
            "result": result,
        },
    )


if __name__ == "__main__":
    main()
