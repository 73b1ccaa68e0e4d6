"""Ingest benchmark: extraction, OCR, embedding and end-to-end speed, peak RSS, pipeline overhead.

    .venv/bin/python bench/ingest.py [--pages 1000] [--runs 1] [--skip-big]

Each document is ingested by the real pipeline (worker code, child extraction process, SQLite)
into a fresh data directory. "overhead" is everything except OCR and the embedder: extraction
process start, parsing, cleaning, chunking, SQLite writes, job bookkeeping. Results are
appended to bench/results/ingest.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from common import DOCS, RESULTS_DIR, ROOT, append_record  # bench/common.py (the script's folder)
from quire.config import Settings
from quire.ingest.intake import add_file
from quire.ingest.worker import Worker

WORDS = (
    "the retrieval of passages from long documents depends on careful segmentation of pages "
    "into chunks that respect sentence boundaries while indexes over terms and vectors keep "
    "every citation exact enough for a reader to verify the claim on the page it names"
).split()


def make_big_pdf(path: Path, pages: int) -> Path:
    """A text PDF of ``pages`` pages, ~1,800 characters each (fpdf2, core font)."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.set_font("Helvetica", size=10)
    for n in range(pages):
        pdf.add_page()
        body = []
        for p in range(4):
            words = [WORDS[(n * 7 + p * 13 + i * 5) % len(WORDS)] for i in range(70)]
            body.append(f"Section {n + 1}.{p + 1}. " + " ".join(words).capitalize() + ".")
        pdf.multi_cell(0, 5, "\n\n".join(body))
    pdf.output(str(path))
    return path


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def ingest_once(path: Path, settings: Settings, worker: Worker) -> dict[str, Any]:
    intake = add_file(worker.db, settings.files_dir, path, path.name, max_bytes=10**10)
    t0 = time.perf_counter()
    worker.run(drain=True)
    wall = time.perf_counter() - t0
    with worker.db.read() as conn:
        row = conn.exec_driver_sql(
            "SELECT status, detail, error FROM ingest_jobs WHERE id = ?", (intake.job_id,)
        ).one()
    if row.status != "done":
        raise SystemExit(f"{path.name}: {row.status}: {row.error}")
    detail = json.loads(row.detail)
    t = detail["timings"]
    pages, chunks = detail["pages"], detail["chunks"]
    ocr_pages = detail.get("ocr_pages", 0)
    overhead = wall - t["embed"] - t["ocr"]
    return {
        "file": path.name,
        "pages": pages,
        "ocr_pages": ocr_pages,
        "chunks": chunks,
        "wall_s": round(wall, 3),
        "extract_pages_per_s": round((pages - ocr_pages) / t["extract"], 1)
        if t["extract"]
        else None,
        "ocr_s_per_page": round(t["ocr"] / ocr_pages, 2) if ocr_pages else None,
        "embed_chunks_per_s": round(chunks / t["embed"], 1) if t["embed"] else None,
        "e2e_pages_per_s": round(pages / wall, 2),
        "overhead_s": round(overhead, 3),
        "overhead_share": round(overhead / wall, 3),
        "timings": t,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=1000, help="pages of the generated PDF")
    ap.add_argument("--runs", type=int, default=1, help="runs per file (median reported)")
    ap.add_argument("--skip-big", action="store_true", help="only the shared documents")
    args = ap.parse_args()

    files = sorted(p for p in DOCS.rglob("*") if p.is_file())
    with tempfile.TemporaryDirectory(prefix="quire-bench-") as tmp:
        if not args.skip_big:
            big = make_big_pdf(Path(tmp) / f"generated-{args.pages}p.pdf", args.pages)
            files.append(big)
        rows = []
        for path in files:
            runs = []
            for i in range(args.runs):
                settings = Settings(data_dir=Path(tmp) / f"data-{path.stem}-{i}")
                worker = Worker(settings)
                worker.embedder.embed(["warm up"])
                runs.append(ingest_once(path, settings, worker))
                worker.db.dispose()
            row = dict(runs[0])
            for key in ("wall_s", "overhead_s", "overhead_share", "e2e_pages_per_s"):
                row[key] = round(statistics.median(r[key] for r in runs), 3)
            rows.append(row)
            print(f"  {path.name}: {row['wall_s']} s", flush=True)
    own = peak_rss_mb()

    header = (
        "file",
        "pages",
        "ocr",
        "chunks",
        "extract p/s",
        "OCR s/p",
        "embed c/s",
        "e2e p/s",
        "wall s",
        "overhead",
    )
    print()
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        cells = (
            r["file"],
            r["pages"],
            r["ocr_pages"],
            r["chunks"],
            r["extract_pages_per_s"],
            r["ocr_s_per_page"],
            r["embed_chunks_per_s"],
            r["e2e_pages_per_s"],
            r["wall_s"],
            f"{r['overhead_share']:.0%}",
        )
        print("| " + " | ".join("–" if c is None else str(c) for c in cells) + " |")
    total_wall = sum(r["wall_s"] for r in rows)
    total_over = sum(r["overhead_s"] for r in rows)
    print(
        f"\npipeline overhead (all but OCR and embedder): {total_over:.1f} s of "
        f"{total_wall:.1f} s = {total_over / total_wall:.0%}"
    )
    # Extraction children are forked by multiprocessing's forkserver, so they are not our
    # children and RUSAGE_CHILDREN does not see them: report the worker only.
    print(f"peak RSS of the worker process: {own:.0f} MB")

    out = RESULTS_DIR / "ingest.json"
    append_record(
        out,
        {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
            "args": vars(args),
            "rows": rows,
            "overhead_share": round(total_over / total_wall, 3),
            "peak_rss_mb": {"worker": round(own)},
        },
    )
    print(f"results appended to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
