"""Ingest benchmark: extraction, OCR, embedding and end-to-end speed, peak RSS, pipeline overhead.

    .venv/bin/python bench/ingest.py [--pages 1000] [--runs 1] [--skip-big] [--subs office/html]
    .venv/bin/python bench/ingest.py --throughput [--configs local:1 local:2 local-sint8:2] [--big]

Each document is ingested by the real pipeline (worker code, child extraction process, SQLite)
into a fresh data directory. "overhead" is everything except OCR and the embedder: extraction
process start, parsing, cleaning, chunking, SQLite writes, job bookkeeping. Results are
appended to bench/results/ingest.json.

``--throughput`` measures against the limit: the real CLI (``quire ingest FILES --wait
--workers N``, one subprocess on a fresh data dir per configuration ``KIND:N``) over the long
shared documents, pages/s and chunks/s end to end and per stage (from ``ingest_jobs.detail``),
then, in the same run and on the same chunk texts, the embedder alone: the packaged model on one
thread (the baseline), and each model with every core (one process with intra-op threads =
cores, or one single-thread process per core on an equal share, run at once; the better is the
limit), so that the table shows pipeline / limit.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import quire

# bench/common.py (the script's folder)
from common import DOCS, RESULTS_DIR, ROOT, append_record, machine_info
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
    # OCR, the embedder and LibreOffice's rendition (Office files) are not the pipeline's own.
    overhead = wall - t["embed"] - t["ocr"] - t.get("render", 0.0)
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
        "render_s": t.get("render"),
        "embed_chunks_per_s": round(chunks / t["embed"], 1) if t["embed"] else None,
        "e2e_pages_per_s": round(pages / wall, 2),
        "overhead_s": round(overhead, 3),
        "overhead_share": round(overhead / wall, 3),
        "timings": t,
    }


# --- --throughput: the pipeline against the embedder's limit -------------------------------

#: The long shared documents (biggest first, so that the last file to start is a short one).
#: The document kinds `quire ingest` reads (chat exports and Zotero go through `quire import`).
SUBS = (
    "pdf",
    "epub",
    "perplexity",
    "office/docx",
    "office/odt",
    "office/pptx",
    "office/xlsx",
    "office/images",
    "office/html",
)
LONG_DOCS = (
    "pdf/thinkcomplexity2.pdf",
    "epub/pg345-dracula-epub3.epub",
    "pdf/ethereum-yellowpaper-shanghai.pdf",
    "epub/pg1228-origin-of-species-epub3.epub",
    "pdf/riscv-abi-spec-v1.0.pdf",
    "pdf/dmca-summary.pdf",
)
DEFAULT_CONFIGS = ("local:1", "local:2", "local-sint8:2")


def make_raw_embedder(kind: str, threads: int, cache_dir: Path) -> Any:
    """The embedder of ``kind`` ("local" or "local-sint8") with the pipeline's batch shape
    (64 texts, at most 512 padded tokens per ONNX run)."""
    from quire.embed.local import LocalEmbedder

    if kind == "local-sint8":
        from quire.embed.static import static_embedder

        return static_embedder(cache_dir, threads=threads, batch_size=64)
    return LocalEmbedder(threads=threads, batch_size=64)


def raw_worker(args: argparse.Namespace) -> None:
    """One raw-limit process: load, warm up, say ``ready``, wait for ``go`` on stdin, embed
    its share of the texts, print the wall-clock start and end (epoch seconds) as JSON."""
    texts = json.loads(Path(args.texts_file).read_text())
    share = texts[args.share :: args.of]
    embedder = make_raw_embedder(args.kind, args.threads, args.cache_dir)
    embedder.embed(sorted(share, key=len)[-64:])  # grows ORT's memory arena to full size
    print("ready", flush=True)
    sys.stdin.readline()
    start = time.time()
    embedder.embed(share)
    end = time.time()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"start": start, "end": end, "n": len(share), "rss_mb": rss}), flush=True)


def raw_limit(
    kind: str, threads: int, procs: int, texts_file: Path, n: int, cache_dir: Path
) -> dict[str, Any]:
    """``procs`` processes of ``threads`` intra-op threads each, on equal shares of the texts,
    started together after all have loaded; chunks/s over the first start to the last end."""
    cmd = [sys.executable, __file__, "--raw-worker", "--kind", kind]
    cmd += ["--threads", str(threads), "--texts-file", str(texts_file)]
    cmd += ["--cache-dir", str(cache_dir), "--of", str(procs)]
    children = [
        subprocess.Popen(
            [*cmd, "--share", str(i)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(procs)
    ]
    for child in children:  # all loaded and warmed up before any starts
        assert child.stdout is not None
        if child.stdout.readline().strip() != "ready":
            raise SystemExit(f"raw worker failed: {' '.join(cmd)}")
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    outs = []
    for child in children:
        out, _ = child.communicate()
        if child.returncode != 0:
            raise SystemExit(f"raw worker failed: {' '.join(cmd)}")
        outs.append(json.loads(out.strip().splitlines()[-1]))
    wall = max(o["end"] for o in outs) - min(o["start"] for o in outs)
    return {
        "model": kind,
        "threads": threads,
        "processes": procs,
        "texts": n,
        "wall_s": round(wall, 3),
        "chunks_per_s": round(n / wall, 2),
        "rss_mb_per_process": round(max(o["rss_mb"] for o in outs)),
    }


def run_cli(files: list[Path], kind: str, workers: int, data_dir: Path) -> dict[str, Any]:
    """``quire ingest FILES --wait --workers N`` in a subprocess on ``data_dir``; wall clock,
    peak RSS (the CLI process tree's largest, from wait4), and the jobs' details."""
    env = {
        **os.environ,
        "QUIRE_DATA_DIR": str(data_dir),
        "QUIRE_EMBEDDER": kind,
        "QUIRE_LLM_BACKENDS": "none",
        "QUIRE_EMBED_THREADS": "1",
    }
    cmd = [str(ROOT / ".venv" / "bin" / "quire"), "ingest", *map(str, files), "--wait"]
    cmd += ["--workers", str(workers)]
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)  # reaped here, for its own rusage
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd)} failed:\n{err.read().decode()[-3000:]}")
    con = sqlite3.connect(data_dir / "quire.db")
    jobs = [
        (status_, json.loads(detail))
        for status_, detail in con.execute("SELECT status, detail FROM ingest_jobs ORDER BY id")
    ]
    first, last = con.execute(
        "SELECT MIN(started_at), MAX(finished_at) FROM ingest_jobs WHERE kind = 'ingest'"
    ).fetchone()
    con.close()
    if any(s != "done" for s, _ in jobs):
        raise SystemExit(f"{kind}:{workers}: not every job is done: {[s for s, _ in jobs]}")
    stages = {k: round(sum(d["timings"][k] for _, d in jobs), 3) for k in STAGES}
    jobs_wall = (datetime.fromisoformat(last) - datetime.fromisoformat(first)).total_seconds()
    return {
        "config": f"{kind}:{workers}",
        "embedder": kind,
        "workers": workers,
        "files": len(jobs),
        "pages": sum(d["pages"] for _, d in jobs),
        "ocr_pages": sum(d.get("ocr_pages", 0) for _, d in jobs),
        "chunks": sum(d["chunks"] for _, d in jobs),
        "wall_s": round(wall, 3),
        "jobs_wall_s": round(jobs_wall, 3),
        "stage_s": stages,
        "peak_rss_mb": round(usage.ru_maxrss / 1024),
    }


STAGES = ("extract", "ocr", "chunk", "embed")


def fmt(x: float | None, digits: int = 1) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def throughput(args: argparse.Namespace) -> None:
    load_avg = os.getloadavg()[0]
    cores = os.cpu_count() or 1
    files = [DOCS / name for name in args.files]
    configs = [(kind, int(n)) for kind, _, n in (c.rpartition(":") for c in args.configs)]
    print(f"load avg at start {load_avg:.2f}, {cores} cores", flush=True)
    with tempfile.TemporaryDirectory(prefix="quire-bench-tp-") as tmp_s:
        tmp = Path(tmp_s)
        if args.big:
            files.append(make_big_pdf(tmp / f"generated-{args.pages}p.pdf", args.pages))
        cache = tmp / "models"
        if any(kind == "local-sint8" for kind, _ in configs) or args.raw_sint8:
            from quire.embed.static import build_static_model

            t0 = time.perf_counter()
            static = build_static_model(cache)  # once, outside every timed run
            print(f"per-row int8 model built in {time.perf_counter() - t0:.1f} s", flush=True)
        rows = []
        for i, (kind, workers) in enumerate(configs):
            data_dir = tmp / f"data-{i}"
            if kind == "local-sint8":  # the CLI finds it under data_dir/models: not rebuilt
                (data_dir / "models").mkdir(parents=True)
                shutil.copy(static, data_dir / "models" / static.name)
            row = run_cli(files, kind, workers, data_dir)
            rows.append(row)
            print(
                f"  {row['config']}: {row['pages']} pages, {row['chunks']} chunks, "
                f"{row['wall_s']:.1f} s",
                flush=True,
            )
        con = sqlite3.connect(tmp / "data-0" / "quire.db")
        texts = [t for (t,) in con.execute("SELECT text FROM page_chunks ORDER BY id")]
        con.close()
        if args.raw_texts and len(texts) > args.raw_texts:
            texts = random.Random(0).sample(texts, args.raw_texts)
        texts_file = tmp / "texts.json"
        texts_file.write_text(json.dumps(texts))
        shapes = [("local", 1, 1), ("local", cores, 1), ("local", 1, cores)]
        if args.raw_sint8 or any(k == "local-sint8" for k, _ in configs):
            shapes += [("local-sint8", 1, 1), ("local-sint8", cores, 1), ("local-sint8", 1, cores)]
        raw = []
        for kind, threads, procs in shapes:
            r = raw_limit(kind, threads, procs, texts_file, len(texts), cache)
            raw.append(r)
            print(
                f"  raw {kind} {procs} proc x {threads} thr: {r['chunks_per_s']:.1f} chunks/s",
                flush=True,
            )
    base = next(r for r in raw if r["model"] == "local" and r["threads"] == r["processes"] == 1)
    limits = {}
    for r in raw:
        if r["threads"] * r["processes"] == cores:
            best = limits.get(r["model"])
            if best is None or r["chunks_per_s"] > best["chunks_per_s"]:
                limits[r["model"]] = r
    for row in rows:
        s = row["stage_s"]
        row["chunks_per_s"] = round(row["chunks"] / row["wall_s"], 2)
        row["pages_per_s"] = round(row["pages"] / row["wall_s"], 2)
        row["extract_pages_per_s"] = (
            round((row["pages"] - row["ocr_pages"]) / s["extract"], 1) if s["extract"] else None
        )
        row["ocr_s_per_page"] = round(s["ocr"] / row["ocr_pages"], 2) if row["ocr_pages"] else None
        row["chunk_chunks_per_s"] = round(row["chunks"] / s["chunk"], 1) if s["chunk"] else None
        row["embed_chunks_per_s"] = round(row["chunks"] / s["embed"], 1) if s["embed"] else None
        row["vs_packaged_1_thread"] = round(row["chunks_per_s"] / base["chunks_per_s"], 2)
        limit = limits.get(row["embedder"])
        row["vs_model_limit"] = (
            round(row["chunks_per_s"] / limit["chunks_per_s"], 3) if limit else None
        )

    print(
        f"\n{len(files)} files ({', '.join(f.name for f in files)}); load avg at start "
        f"{load_avg:.2f}, {cores} cores\n"
    )
    header = (
        "configuration",
        "pages",
        "chunks",
        "wall s",
        "jobs s",
        "pages/s",
        "chunks/s",
        "÷ packaged 1 thread",
        "÷ limit of its model",
        "extract p/s",
        "OCR s/p",
        "chunk c/s",
        "embed c/s",
        "peak RSS MB",
    )
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        cells = (
            f"{r['embedder']}, {r['workers']} worker{'s' if r['workers'] > 1 else ''}",
            f"{r['pages']} ({r['ocr_pages']} OCR)",
            r["chunks"],
            fmt(r["wall_s"]),
            fmt(r["jobs_wall_s"]),
            fmt(r["pages_per_s"], 2),
            fmt(r["chunks_per_s"]),
            f"{r['vs_packaged_1_thread']:.2f}",
            "–" if r["vs_model_limit"] is None else f"{r['vs_model_limit']:.0%}",
            fmt(r["extract_pages_per_s"]),
            fmt(r["ocr_s_per_page"], 2),
            fmt(r["chunk_chunks_per_s"]),
            fmt(r["embed_chunks_per_s"]),
            r["peak_rss_mb"],
        )
        print("| " + " | ".join(str(c) for c in cells) + " |")
    ocr = "OCR: no page needed it. " if not any(r["ocr_pages"] for r in rows) else ""
    print(
        "\nwall: the whole `quire ingest --wait` process (start-up, model load, migrations "
        "included); jobs s: first job start to last job end. Stage rates are per "
        "worker-second (stage seconds summed over jobs). Write is inside chunk (chunks, FTS) "
        f"and embed (vectors): not timed separately. {ocr}Peak RSS: the largest process of "
        "the CLI's tree (wait4)."
    )
    print(f"\nraw limit: the embedder alone on {len(texts)} of the chunk texts, batch 64 x 512")
    print("\n| model | processes × threads | chunks/s | ÷ packaged 1 thread | RSS MB/process |")
    print("|---|---|---|---|---|")
    for r in raw:
        star = " (limit)" if limits.get(r["model"]) is r else ""
        print(
            f"| {r['model']} | {r['processes']} × {r['threads']} | {r['chunks_per_s']:.1f}{star} "
            f"| {r['chunks_per_s'] / base['chunks_per_s']:.2f} | {r['rss_mb_per_process']} |"
        )
    out = RESULTS_DIR / "ingest.json"
    append_record(
        out,
        {
            "mode": "throughput",
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "git_head": subprocess.run(
                ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True
            ).stdout.strip(),
            "quire_from": str(Path(quire.__file__).parent),  # PYTHONPATH may pin a snapshot
            "machine": machine_info(load_avg),
            "load_avg_at_end": os.getloadavg()[0],
            "args": {k: v for k, v in vars(args).items() if k not in RAW_ARGS},
            "files": [f.name for f in files],
            "rows": rows,
            "raw": raw,
            "raw_texts": len(texts),
            "limits": {k: v["chunks_per_s"] for k, v in limits.items()},
            "baseline_packaged_1_thread": base["chunks_per_s"],
        },
    )
    print(f"\nresults appended to {out.relative_to(ROOT)}")


RAW_ARGS = ("raw_worker", "kind", "threads", "texts_file", "share", "of", "cache_dir")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=1000, help="pages of the generated PDF")
    ap.add_argument("--runs", type=int, default=1, help="runs per file (median reported)")
    ap.add_argument("--skip-big", action="store_true", help="only the shared documents")
    ap.add_argument(
        "--subs",
        nargs="+",
        default=list(SUBS),
        help="folders of ../shared/data/docs to ingest (default: every kind `quire ingest` reads)",
    )
    ap.add_argument(
        "--throughput",
        action="store_true",
        help="the CLI on the long documents per --configs, against the embedder's raw limit",
    )
    ap.add_argument(
        "--configs",
        nargs="+",
        default=list(DEFAULT_CONFIGS),
        help="--throughput: EMBEDDER:WORKERS (default: local:1 local:2 local-sint8:2)",
    )
    ap.add_argument(
        "--files",
        nargs="+",
        default=list(LONG_DOCS),
        help="--throughput: documents under ../shared/data/docs (default: the long ones)",
    )
    ap.add_argument(
        "--big", action="store_true", help="--throughput: also the generated --pages PDF"
    )
    ap.add_argument(
        "--raw-texts",
        type=int,
        default=0,
        help="--throughput: raw limit on a seeded sample of this many chunk texts (0: all)",
    )
    ap.add_argument(
        "--raw-sint8",
        action="store_true",
        help="--throughput: raw limit of local-sint8 even if no configuration uses it",
    )
    ap.add_argument("--raw-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--kind", default="local", help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--texts-file", help=argparse.SUPPRESS)
    ap.add_argument("--share", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--of", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--cache-dir", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.raw_worker:
        raw_worker(args)
        return
    if args.throughput:
        throughput(args)
        return

    files = sorted(p for sub in args.subs for p in (DOCS / sub).glob("*"))
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
        "render s",
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
            r["render_s"],
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
            "args": {k: v for k, v in vars(args).items() if k not in RAW_ARGS},
            "rows": rows,
            "overhead_share": round(total_over / total_wall, 3),
            "peak_rss_mb": {"worker": round(own)},
        },
    )
    print(f"results appended to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
