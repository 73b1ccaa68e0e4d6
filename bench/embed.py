"""Benchmark the local embedder: chunks/s by threads and batch size on SciFact abstracts.

    .venv/bin/python bench/embed.py                 # packaged model, 1/2 threads x batches
    .venv/bin/python bench/embed.py --optimized     # also the dynamic-int8 variant + cosine
    .venv/bin/python bench/embed.py --static        # also the per-row int8 variant (sint8)

A configuration is ``BATCH:CAP``: at most BATCH texts and at most CAP padded tokens per ONNX
run (``none``: no token cap; ``64:512`` is the embedder's default). Each one runs in its own
process (so peak RSS and thread pools are its own): one untimed warm-up batch, then ``--runs``
timed passes over the first ``--n`` abstracts (``title\\ntext``, truncated by the embedder at
256 tokens); the table shows the median.
CPU seconds are printed next to wall time because this machine is shared.
Each extra variant is compared with the packaged model over the same abstracts: cosine, top-10
agreement, and batch independence (each of the first ``--single`` abstracts embedded alone vs.
inside one padded run of 16 mixed-length texts: abstracts and short queries; max |difference|).
Results are appended to bench/results/embed.json.
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

from common import RESULTS_DIR, ROOT, SCIFACT, append_record, machine_info

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
    """Build the embedder for ``variant`` ("packaged", "optimized" or "static")."""
    from quire.embed.local import LocalEmbedder

    if variant == "static":
        from quire.embed.static import STATIC_NAME, build_static_model

        return LocalEmbedder(
            threads=threads,
            batch_size=batch,
            max_batch_tokens=cap,
            model_path=build_static_model(cache_dir),
            name=STATIC_NAME,
        )
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


def mixed_batches(texts: list[str], queries: list[str], size: int = 16) -> list[list[int]]:
    """Groups of ``size`` indices into ``texts + queries``: each text of ``texts`` once, with
    texts of other lengths (short queries, other abstracts) so that one run pads it."""
    rng = np.random.default_rng(0)
    n, pool = len(texts), len(texts) + len(queries)
    groups = []
    for start in range(0, n, size // 2):
        own = list(range(start, min(start + size // 2, n)))
        others = [int(i) for i in rng.permutation(pool) if int(i) not in own][: size - len(own)]
        groups.append(own + others)
    return groups


def batch_independence(
    variant: str, texts: list[str], queries: list[str], cache_dir: Path
) -> dict[str, Any]:
    """Max |alone - inside a padded mixed run| over the vectors of ``texts``."""
    every = texts + queries
    one = make(variant, 1, 1, None, cache_dir)
    alone = one.embed(texts)  # batch 1: each text in its own run, unpadded
    run = make(variant, 1, 16, None, cache_dir)  # 16 texts, no token cap: one padded run
    worst, identical, cos_min = 0.0, True, 1.0
    for group in mixed_batches(texts, queries):
        vecs = run.embed([every[i] for i in group])
        for row, i in enumerate(group):
            if i < len(texts):
                worst = max(worst, float(np.abs(vecs[row] - alone[i]).max()))
                identical = identical and bool(np.array_equal(vecs[row], alone[i]))
                cos_min = min(cos_min, float(vecs[row] @ alone[i]))
    return {"max_abs_diff": worst, "bitwise_identical": identical, "cosine_min": cos_min}


def worker_quality(args: argparse.Namespace) -> dict[str, Any]:
    """Cosine of ``args.variant`` to the packaged model, batch independence, top-10
    agreement."""
    docs = load_abstracts(args.n)
    batch, cap = parse_config(args.config)
    base = make("packaged", args.threads, batch, cap, args.cache_dir)
    opt = make(args.variant, args.threads, batch, cap, args.cache_dir)
    vb, vo = base.embed(docs), opt.embed(docs)
    cos = (vb * vo).sum(axis=1)
    k = min(32, len(docs))
    singles_o = np.stack([opt.embed([d])[0] for d in docs[:k]])
    singles_b = np.stack([base.embed([d])[0] for d in docs[:k]])
    queries = load_queries(args.queries)
    single = docs[: args.single]
    out: dict[str, Any] = {
        "cosine_to_packaged": {
            "mean": float(cos.mean()),
            "min": float(cos.min()),
            "p05": float(np.percentile(cos, 5)),
        },
        "batch_vs_single_cosine_min": {
            "packaged": float((singles_b * vb[:k]).sum(axis=1).min()),
            args.variant: float((singles_o * vo[:k]).sum(axis=1).min()),
        },
        "batch_vs_single_mixed": {
            "texts": len(single),
            "packaged": batch_independence("packaged", single, queries, args.cache_dir),
            args.variant: batch_independence(args.variant, single, queries, args.cache_dir),
        },
    }
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
        "--single",
        str(args.single),
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
    p.add_argument("--static", action="store_true", help="also bench the per-row int8 model")
    p.add_argument("--queries", type=int, default=100, help="queries for top-10 agreement")
    p.add_argument(
        "--single", type=int, default=200, help="abstracts checked alone vs. in mixed runs"
    )
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
    extra = [v for v, on in (("optimized", args.optimized), ("static", args.static)) if on]
    variants = ["packaged", *extra]
    if args.optimized:  # build once, outside the timed workers
        from quire.embed.optimize import build_optimized_model

        t0 = time.perf_counter()
        path = build_optimized_model(args.cache_dir)
        print(f"optimised model: {path} ({time.perf_counter() - t0:.1f} s)")
    if args.static:
        from quire.embed.static import build_static_model

        t0 = time.perf_counter()
        path = build_static_model(args.cache_dir)
        print(f"per-row int8 model: {path} ({time.perf_counter() - t0:.1f} s)")

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

    best = {}
    for variant in variants:
        for threads in args.threads:
            mine = [r for r in rows if r["variant"] == variant and r["threads"] == threads]
            top = max(mine, key=lambda r: r["chunks_per_s"])
            best[f"{variant}/{threads}"] = top
    print("\nbest configuration per variant and threads (ratio: to packaged, same threads)")
    for key, top in best.items():
        variant, threads = key.split("/")
        ref = best[f"packaged/{threads}"]["chunks_per_s"]
        print(
            f"  {variant:10} {threads} thr  {top['batch']}:{top['max_batch_tokens'] or 'none'}"
            f"  {top['chunks_per_s']:6.1f} chunks/s  x{top['chunks_per_s'] / ref:.2f}"
        )

    quality: dict[str, Any] = {}
    for variant in extra:
        q = quality[variant] = spawn("quality", args, variant=variant, config="64:512", threads=1)
        c = q["cosine_to_packaged"]
        print(
            f"\n{variant} vs packaged cosine over {args.n} abstracts: mean {c['mean']:.4f}, "
            f"p05 {c['p05']:.4f}, min {c['min']:.4f}"
        )
        b = q["batch_vs_single_cosine_min"]
        print(
            f"batched (64:512) vs one-at-a-time, min cosine: packaged {b['packaged']:.6f}, "
            f"{variant} {b[variant]:.6f}"
        )
        m = q["batch_vs_single_mixed"]
        for name in ("packaged", variant):
            r = m[name]
            print(
                f"alone vs. in padded mixed runs of 16 ({m['texts']} abstracts), {name}: "
                f"max |diff| {r['max_abs_diff']:.3g}, bitwise identical {r['bitwise_identical']}"
            )
        if "top10_agreement" in q:
            t = q["top10_agreement"]
            print(
                f"top-10 agreement ({t['queries']} queries x {t['docs']} abstracts): "
                f"{t['mean']:.3f}"
            )

    append_record(
        args.out,
        {
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "dataset": f"SciFact corpus, first {args.n} (title\\ntext)",
            "runs": args.runs,
            "machine": machine_info(load_avg),
            "results": rows,
            "best": {
                k: {n: r[n] for n in ("batch", "max_batch_tokens", "chunks_per_s")}
                for k, r in best.items()
            },
            "quality": quality or None,
        },
    )
    print(f"\nwrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")


if __name__ == "__main__":
    main()
