"""Benchmark the local embedder: chunks/s by threads and batch size on SciFact abstracts.

    .venv/bin/python bench/embed.py                 # packaged model, 1/2 threads x batches
    .venv/bin/python bench/embed.py --optimized     # also the dynamic-int8 variant + cosine

A configuration is ``BATCH:CAP``: at most BATCH texts and at most CAP padded tokens per ONNX
run (``none``: no token cap; ``64:512`` is the embedder's default). Each one runs in its own
process (so peak RSS and thread pools are its own): one untimed warm-up batch, then ``--runs``
timed passes over the first ``--n`` abstracts (``title\\ntext``, truncated by the embedder at
256 tokens); the table shows the median.
CPU seconds are printed next to wall time because this machine is shared.
Results go to bench/results/embed.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from common import RESULTS_DIR, ROOT, SCIFACT, machine_info

RESULTS = RESULTS_DIR / "embed.json"
DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "quire" / "models"


def load_abstracts(n: int) -> list[str]:
    """The first ``n`` SciFact corpus entries as ``title\\ntext``."""
    docs: list[str] = []
    with (SCIFACT / "corpus.jsonl").open(encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            docs.append(f"{d.get('title', '')}\n{d['text']}".strip())
            if len(docs) >= n:
                break
    return docs


def load_queries(n: int) -> list[str]:
    """The first ``n`` SciFact queries (empty if the file is missing)."""
    path = SCIFACT / "queries.jsonl"
    if not path.is_file():
        return []
    with path.open(encoding="utf-8") as f:
        return [json.loads(line)["text"] for line, _ in zip(f, range(n), strict=False)]


def make(variant: str, threads: int, batch: int, cap: int | None, cache_dir: Path) -> Any:
    """Build the embedder for ``variant`` ("packaged" or "optimized")."""
    from quire.embed.local import LocalEmbedder

    if variant == "optimized":
        from quire.embed.optimize import OPTIMIZED_NAME, build_optimized_model

        path = build_optimized_model(cache_dir)
        return LocalEmbedder(
            threads=threads,
            batch_size=batch,
            max_batch_tokens=cap,
            model_path=path,
            name=OPTIMIZED_NAME,
        )
    return LocalEmbedder(threads=threads, batch_size=batch, max_batch_tokens=cap)


def parse_config(spec: str) -> tuple[int, int | None]:
    """``"64:512"`` -> (64, 512); ``"32:none"`` -> (32, None)."""
    batch, _, cap = spec.partition(":")
    return int(batch), None if cap in ("", "none") else int(cap)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def worker_speed(args: argparse.Namespace) -> dict[str, Any]:
    """Time one configuration (runs inside a fresh process)."""
    docs = load_abstracts(args.n)
    t0 = time.perf_counter()
    batch, cap = parse_config(args.config)
    embedder = make(args.variant, args.threads, batch, cap, args.cache_dir)
    load_s = time.perf_counter() - t0
    longest = sorted(docs, key=len)[-batch:]
    embedder.embed(longest)  # warm-up: grows ORT's memory arena to full size
    runs = []
    for _ in range(args.runs):
        w, c = time.perf_counter(), time.process_time()
        embedder.embed(docs)
        runs.append({"wall_s": time.perf_counter() - w, "cpu_s": time.process_time() - c})
    tokens = [len(e.ids) for e in embedder.tokenize(docs)]
    return {
        "model": embedder.name,
        "load_s": load_s,
        "runs": runs,
        "mean_tokens": float(np.mean(tokens)),
        "peak_rss_mb": peak_rss_mb(),
    }


def worker_quality(args: argparse.Namespace) -> dict[str, Any]:
    """Cosine of the optimised model to the packaged one, batch stability, top-10 agreement."""
    docs = load_abstracts(args.n)
    batch, cap = parse_config(args.config)
    base = make("packaged", args.threads, batch, cap, args.cache_dir)
    opt = make("optimized", args.threads, batch, cap, args.cache_dir)
    vb, vo = base.embed(docs), opt.embed(docs)
    cos = (vb * vo).sum(axis=1)
    k = min(32, len(docs))
    singles_o = np.stack([opt.embed([d])[0] for d in docs[:k]])
    singles_b = np.stack([base.embed([d])[0] for d in docs[:k]])
    out: dict[str, Any] = {
        "cosine_to_packaged": {
            "mean": float(cos.mean()),
            "min": float(cos.min()),
            "p05": float(np.percentile(cos, 5)),
        },
        "batch_vs_single_cosine_min": {
            "packaged": float((singles_b * vb[:k]).sum(axis=1).min()),
            "optimized": float((singles_o * vo[:k]).sum(axis=1).min()),
        },
    }
    queries = load_queries(args.queries)
    if queries:
        qb, qo = base.embed(queries), opt.embed(queries)
        top_b = np.argsort(-(qb @ vb.T), axis=1)[:, :10]
        top_o = np.argsort(-(qo @ vo.T), axis=1)[:, :10]
        overlap = [len(set(a) & set(b)) / 10 for a, b in zip(top_b, top_o, strict=True)]
        out["top10_agreement"] = {
            "queries": len(queries),
            "docs": len(docs),
            "mean": float(np.mean(overlap)),
        }
    return out


def spawn(mode: str, args: argparse.Namespace, **extra: Any) -> dict[str, Any]:
    """Run one worker in a fresh interpreter and return its JSON."""
    cmd = [
        sys.executable,
        __file__,
        "--worker",
        mode,
        "--n",
        str(args.n),
        "--runs",
        str(args.runs),
        "--cache-dir",
        str(args.cache_dir),
        "--queries",
        str(args.queries),
    ]
    for key, value in extra.items():
        cmd += [f"--{key}", str(value)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"worker failed: {' '.join(cmd)}\n{proc.stderr}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--n", type=int, default=512, help="abstracts to embed (default 512)")
    p.add_argument("--runs", type=int, default=3, help="timed passes per configuration")
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument(
        "--configs",
        nargs="+",
        default=["32:none", "64:none", "64:512"],
        help="BATCH:CAP per run (default: 32:none 64:none 64:512)",
    )
    p.add_argument("--optimized", action="store_true", help="also bench the dynamic-int8 model")
    p.add_argument("--queries", type=int, default=100, help="queries for top-10 agreement")
    p.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--worker", choices=["speed", "quality"], help=argparse.SUPPRESS)
    p.add_argument("--variant", default="packaged", help=argparse.SUPPRESS)
    p.add_argument("--config", default="64:512", help=argparse.SUPPRESS)
    args = p.parse_args()

    if args.worker:
        args.threads = args.threads[0]
        fn = worker_speed if args.worker == "speed" else worker_quality
        print(json.dumps(fn(args)))
        return

    if not (SCIFACT / "corpus.jsonl").is_file():
        raise SystemExit(f"SciFact corpus not found at {SCIFACT}")
    load_avg = os.getloadavg()[0]
    variants = ["packaged", "optimized"] if args.optimized else ["packaged"]
    if args.optimized:  # build once, outside the timed workers
        from quire.embed.optimize import build_optimized_model

        t0 = time.perf_counter()
        path = build_optimized_model(args.cache_dir)
        print(f"optimised model: {path} ({time.perf_counter() - t0:.1f} s)")

    rows = []
    header = (
        f"{'model':31} {'thr':>3} {'batch':>5} {'tok/run':>7} {'chunks/s':>8} {'min..max':>11} "
        f"{'CPU ms/chunk':>12} {'peak RSS MB':>11}"
    )
    print(f"SciFact first {args.n} abstracts, median of {args.runs} runs, load avg {load_avg:.2f}")
    print(header)
    print("-" * len(header))
    for variant in variants:
        for threads in args.threads:
            for config in args.configs:
                batch, cap = parse_config(config)
                r = spawn("speed", args, variant=variant, config=config, threads=threads)
                rates = [args.n / run["wall_s"] for run in r["runs"]]
                cpu_ms = statistics.median(run["cpu_s"] for run in r["runs"]) / args.n * 1000
                row = {
                    "variant": variant,
                    "threads": threads,
                    "batch": batch,
                    "max_batch_tokens": cap,
                    "chunks_per_s": statistics.median(rates),
                    "cpu_ms_per_chunk": cpu_ms,
                    "rates": rates,
                    **r,
                }
                rows.append(row)
                print(
                    f"{r['model']:31} {threads:>3} {batch:>5} {cap or '-':>7} "
                    f"{row['chunks_per_s']:>8.1f} {min(rates):>5.1f}..{max(rates):<5.1f} "
                    f"{cpu_ms:>12.1f} {r['peak_rss_mb']:>11.0f}",
                    flush=True,
                )

    quality = None
    if args.optimized:
        quality = spawn("quality", args, config="64:512", threads=1)
        c = quality["cosine_to_packaged"]
        print(
            f"\noptimised vs packaged cosine over {args.n} abstracts: mean {c['mean']:.4f}, "
            f"p05 {c['p05']:.4f}, min {c['min']:.4f}"
        )
        b = quality["batch_vs_single_cosine_min"]
        print(
            f"batched (64:512) vs one-at-a-time, min cosine: packaged {b['packaged']:.6f}, "
            f"optimised {b['optimized']:.6f}"
        )
        if "top10_agreement" in quality:
            t = quality["top10_agreement"]
            print(
                f"top-10 agreement ({t['queries']} queries x {t['docs']} abstracts): "
                f"{t['mean']:.3f}"
            )

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "dataset": f"SciFact corpus, first {args.n} (title\\ntext)",
                "runs": args.runs,
                "machine": machine_info(load_avg),
                "results": rows,
                "quality": quality,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"\nwrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")


if __name__ == "__main__":
    main()
