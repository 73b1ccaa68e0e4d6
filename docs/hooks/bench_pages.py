"""The benchmark pages, rendered from bench/results/*.json: one page per results file, its runs
newest first, each with the command that made it and the machine it ran on.

The files have different shapes (most are a list of runs with ``date``, ``machine``, ``args``
and ``results``; postgres.json is a list of per-size runs; eval-scifact.json is one
``quire eval --json``), so each has its own small renderer below. A results file without a
renderer fails the build: add one to ``BENCHES``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

Run = dict[str, Any]
Lines = list[str]

# -- formatting ---------------------------------------------------------------------------


def get(data: Any, *keys: str) -> Any:
    """``data[k1][k2]…``, or None where a key is missing (older runs recorded less)."""
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def num(value: Any, digits: int = 1) -> str:
    """A number for a table: thousands separated, ``–`` when not measured."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return str(value)


def p50_p95(stats: Any, digits: int = 1) -> str:
    """``p50 / p95`` of a ``{"p50": …, "p95": …}`` record."""
    if not isinstance(stats, dict) or stats.get("p50") is None:
        return "–"
    return f"{num(stats.get('p50'), digits)} / {num(stats.get('p95'), digits)}"


def ratio(a: Any, b: Any) -> str:
    """``a ÷ b`` as ``12.3×``."""
    if not isinstance(a, int | float) or not isinstance(b, int | float) or not b:
        return "–"
    return f"{a / b:.1f}×"


def table(header: list[str], rows: Iterable[list[str]]) -> Lines:
    """A markdown table (cells are escaped for ``|``)."""
    esc = [[c.replace("|", "\\|") for c in row] for row in rows]
    return [
        "| " + " | ".join(header) + " |",
        "| " + " | ".join("---" for _ in header) + " |",
        *("| " + " | ".join(row) + " |" for row in esc),
        "",
    ]


def when(run: Run) -> str:
    """The run's date as ``2026-12-02 01:30 UTC`` (``date`` or ``created``)."""
    stamp = run.get("date") or run.get("created")
    if not stamp:
        return "date not recorded"
    return datetime.fromisoformat(stamp).strftime("%Y-%m-%d %H:%M UTC")


def machine_line(machine: Any) -> str:
    """CPUs, load average, platform and versions, as recorded."""
    if not isinstance(machine, dict):
        return f"Machine: {machine or 'not recorded'} (CPU count and load not recorded)."
    parts = []
    if machine.get("cpus"):
        parts.append(f"{machine['cpus']} CPUs")
    load = machine.get("load_avg_at_start")
    if load is not None:
        end = machine.get("load_avg_at_end")
        parts.append(f"load {load:.2f} at start" + (f", {end:.2f} at end" if end else ""))
    if machine.get("memory_gb"):
        parts.append(f"{machine['memory_gb']} GB memory")
    parts += [str(machine[k]) for k in ("platform",) if machine.get(k)]
    parts += [f"Python {machine['python']}"] if machine.get("python") else []
    parts += [f"ONNX Runtime {machine['onnxruntime']}"] if machine.get("onnxruntime") else []
    return "Machine: " + " · ".join(parts) + "."


def command(script: str, args: dict[str, Any] | None, skip: Iterable[str] = ()) -> str:
    """The command line the recorded argparse arguments stand for."""
    if args is None:
        return f".venv/bin/python {script}   # arguments not recorded"
    parts = [".venv/bin/python", script]
    for key, value in args.items():
        if key in {"out", "no_save", *skip} or value is None or value is False:
            continue
        flag = "--" + key.replace("_", "-")
        if value is True:
            parts.append(flag)
        elif isinstance(value, list):
            parts += [flag, *(str(v) for v in value)]
        elif isinstance(value, dict):
            parts += [f"--{key} {k}={v}" for k, v in value.items()]
        elif isinstance(value, float) and value.is_integer():
            parts += [flag, str(int(value))]
        elif isinstance(value, str) and (" " in value or not value):
            parts += [flag, json.dumps(value)]
        else:
            parts += [flag, str(value)]
    return " ".join(parts)


def run_header(run: Run, title: str, cmd: str) -> Lines:
    """A run's heading, command and machine."""
    return [f"### {title}", "", "```sh", cmd, "```", "", machine_line(run.get("machine")), ""]


def newest_first(runs: list[Run]) -> list[Run]:
    """Runs by date, newest first; undated runs keep their order (appended = newer)."""
    return sorted(
        reversed(runs), key=lambda r: r.get("date") or r.get("created") or "", reverse=True
    )


# -- one renderer per results file ----------------------------------------------------------


def retrieval_row(size: str, result: dict[str, Any]) -> list[str]:
    quire, bm25 = result.get("quire") or {}, result.get("rank_bm25") or {}
    warm = get(quire, "e2e", "ex_embed") or get(quire, "e2e", "total")
    baseline = get(bm25, "query", "wall", "p50")
    legs = quire.get("legs") or {}
    return [
        f"{int(size):,}",
        p50_p95(get(quire, "e2e_fresh", "ex_embed")),
        p50_p95(warm),
        num(get(legs, "bm25", "wall", "p50")),
        num(get(quire, "e2e_fresh", "bm25", "p50")),
        num(get(legs, "bm25_no_cache", "wall", "p50")),
        num(get(legs, "dense", "wall", "p50")),
        num(get(legs, "exact", "wall", "p50")),
        num(baseline) if baseline is not None else "skipped" if bm25.get("skipped") else "–",
        ratio(baseline, get(warm, "p50")),
        num(quire.get("disk_mb"), 0),
        num(quire.get("rss_serving_growth_mb"), 0),
        num(get(quire, "add", "s"), 2),
    ]


RETRIEVAL_HEADER = [
    "chunks",
    "end to end, fresh terms, p50 / p95 ms",
    "end to end, warm, p50 / p95 ms",
    "BM25 leg, warm, p50 ms",
    "BM25 leg, fresh terms, p50 ms",
    "BM25 ranked by FTS5 alone, p50 ms",
    "dense leg p50 ms",
    "exact leg p50 ms",
    "rank-bm25 p50 ms",
    "rank-bm25 ÷ Quire (warm p50)",
    "disk MB",
    "serving RSS growth MB",
    "add 1,000 chunks, s",
]


def render_retrieval(data: Any) -> Lines:
    runs = newest_first([r for r in data if "results" in r])
    newest: dict[str, tuple[Run, dict[str, Any]]] = {}
    for run in runs:
        for size, result in run["results"].items():
            newest.setdefault(size, (run, result))
    out = ["## Newest run at each size", ""]
    out += table(
        ["date", *RETRIEVAL_HEADER],
        (
            [when(r), *retrieval_row(s, res)]
            for s, (r, res) in sorted(newest.items(), key=lambda x: int(x[0]))
        ),
    )
    out += ["On disk by table, MB (newest run at each size):", ""]
    names = sorted({n for _, res in newest.values() for n in get(res, "quire", "table_mb") or {}})
    out += table(
        ["chunks", *names],
        (
            [f"{int(s):,}", *(num(get(res, "quire", "table_mb", n), 0) for n in names)]
            for s, (_, res) in sorted(newest.items(), key=lambda x: int(x[0]))
        ),
    )
    recall = [r for r in data if "dense_recall" in r]
    if recall:
        out += ["## Dense recall of the 4-bit scan on real vectors", ""]
        out += [
            "Recall@k of the 4-bit candidate scan against exact float32 search "
            "(`bench/retrieval.py --dense-recall DATA_DIR --dense-recall-queries QUERIES`).",
            "",
        ]
        rows = []
        for run in newest_first(recall):
            rec = run["dense_recall"]
            ks = [k for k in rec if k.startswith("recall@")]
            rows.append(
                [
                    when(run),
                    num(rec.get("vectors")),
                    num(rec.get("quantised_rows")),
                    num(rec.get("queries")),
                    ", ".join(f"{k} {rec[k]['mean']:.3f} (min {rec[k]['min']:.3f})" for k in ks),
                ]
            )
        out += table(["date", "vectors", "in 4-bit blocks", "queries", "recall, mean (min)"], rows)
    out += ["## Runs", ""]
    for run in runs:
        out += run_header(run, when(run), command("bench/retrieval.py", run.get("args")))
        out += table(RETRIEVAL_HEADER, (retrieval_row(s, r) for s, r in run["results"].items()))
        for target in run.get("targets") or []:
            mark = "✓" if target.get("pass") else "✗"
            out.append(f"- {mark} {target['target']}: {num(target.get('value'))}")
        out.append("")
    return out


POSTGRES_ROWS: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
    ("hybrid, fresh terms, p50 / p95 ms", lambda b: p50_p95(get(b, "fresh", "hybrid"))),
    ("hybrid, warm, p50 / p95 ms", lambda b: p50_p95(get(b, "warm", "hybrid"))),
    ("BM25 leg, fresh, p50 / p95 ms", lambda b: p50_p95(get(b, "fresh", "bm25"))),
    ("dense leg, fresh, p50 / p95 ms", lambda b: p50_p95(get(b, "fresh", "dense"))),
    ("exact leg, fresh, p50 / p95 ms", lambda b: p50_p95(get(b, "fresh", "exact"))),
    (
        "build, s (of which rows)",
        lambda b: f"{num(b.get('build_s'), 0)} ({num(b.get('build_rows_s'), 0)})",
    ),
    ("reading the frequent terms' entries, s", lambda b: num(b.get("term_postings_s"))),
    ("add 1,000 chunks, s", lambda b: num(b.get("add_1000_s"), 2)),
    ("delete them, s", lambda b: num(b.get("delete_1000_s"), 2)),
    ("disk, MB", lambda b: num(b.get("disk_mb"), 0)),
    ("client RSS growth, MB", lambda b: num(b.get("client_rss_growth_mb"), 1)),
    ("server RSS, MB", lambda b: num(b.get("server_rss_mb"), 0)),
]


def postgres_table(run: Run) -> Lines:
    backends = [b for b in ("sqlite", "postgresql") if b in run]
    names = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}
    return table(
        [f"{run['size']:,} chunks", *(names[b] for b in backends)],
        ([label, *(fn(run[b]) for b in backends)] for label, fn in POSTGRES_ROWS),
    )


def render_postgres(data: Any) -> Lines:
    runs = list(enumerate(data, 1))[::-1]  # no dates recorded: the file's order, newest last
    out = ["## Newest run at each size", ""]
    for size in sorted({r["size"] for _, r in runs}):
        number, run = next((i, r) for i, r in runs if r["size"] == size)
        out += [f"Run {number} of {len(runs)}:", ""] + postgres_table(run)
    out += [
        "## Runs",
        "",
        "These records carry no date: they are numbered in the order they were appended.",
        "",
    ]
    for number, run in runs:
        title = f"Run {number} of {len(runs)}: {run['size']:,} chunks"
        cmd = f".venv/bin/python bench/postgres.py --sizes {run['size']}   # other arguments not recorded"
        if "args" in run:
            cmd = command("bench/postgres.py", run["args"])
        out += run_header(
            run, title if "date" not in run else f"{when(run)}: {run['size']:,} chunks", cmd
        )
        buffers = get(run, "server_settings", "shared_buffers")
        if buffers:
            out += [f"PostgreSQL `shared_buffers` {buffers}.", ""]
        out += postgres_table(run)
    return out


PEERS = {
    "quire": "Quire hybrid (excl. query embedding)",
    "bm25s_faiss": "bm25s + faiss exact, RRF (ids only)",
    "lancedb": "LanceDB hybrid, RRFReranker",
    "pagepiper": "Pagepiper design: rank-bm25 + sqlite-vec, RRF",
    "open_webui": "Open WebUI design: Chroma + BM25 rebuilt per query",
}


def render_peers(data: Any) -> Lines:
    runs = newest_first(data)
    out = ["How the systems are run (notes recorded with the newest run):", ""]
    out += [f"- {note}" for note in runs[0].get("notes") or []] + [""]
    for run in runs:
        out += run_header(
            run, when(run), command("bench/peers.py", run.get("args"), skip={"peers_venv"})
        )
        for size, systems in run["results"].items():
            rows = []
            for name, res in systems.items():
                wall = res.get("ex_embed") if name == "quire" else res.get("wall")
                rows.append(
                    [
                        PEERS.get(name, name),
                        num(get(res, "build", "total_s")),
                        p50_p95(wall),
                        num(get(wall, "n")),
                        num(res.get("rss_serving_mb"), 0),
                        str(res.get("skipped", "")),
                    ]
                )
            out += [f"{int(size):,} chunks:", ""]
            out += table(
                [
                    "system",
                    "index build s",
                    "query p50 / p95 ms",
                    "queries",
                    "serving RSS MB",
                    "skipped",
                ],
                rows,
            )
    return out


def render_eval_scifact(data: Any) -> Lines:
    out: Lines = []
    for run in data if isinstance(data, list) else [data]:
        cmd = ".venv/bin/quire eval --dataset ../shared/data/ir/scifact --split both --json > bench/results/eval-scifact.json"
        out += run_header(run, when(run), cmd)
        index = run.get("index") or {}
        out += [
            f"Index: {num(index.get('documents'))} documents, {num(index.get('chunks'))} chunks, "
            f"embedder `{index.get('embedder')}`, ingested in {num(index.get('ingest_seconds'), 0)} s "
            f"({'cached' if index.get('cached') else 'built for this run'}).",
            "",
            "Settings: "
            + ", ".join(f"`{k}` {v}" for k, v in (run.get("settings") or {}).items())
            + ".",
            "",
        ]
        rows = []
        for split, body in (run.get("splits") or {}).items():
            for variant, res in (body.get("variants") or {}).items():
                rows.append(
                    [
                        f"{split} ({body.get('queries')} q)",
                        variant,
                        num(res.get("ndcg@10"), 4),
                        num(res.get("recall@100"), 4),
                        num(res.get("mrr@10"), 4),
                        p50_p95(get(res, "latency_ms", "total")),
                        p50_p95(res.get("cpu_ms")),
                        str(res.get("skipped", "")),
                    ]
                )
        out += table(
            [
                "split",
                "variant",
                "nDCG@10",
                "Recall@100",
                "MRR@10",
                "total p50 / p95 ms",
                "CPU p50 / p95 ms",
                "skipped",
            ],
            rows,
        )
        stages = get(run, "splits", "test", "variants", "hybrid", "latency_ms") or {}
        if stages:
            out += ["Hybrid, test split, per stage:", ""]
            out += table(["stage", "p50 / p95 ms"], ([s, p50_p95(v, 2)] for s, v in stages.items()))
    return out


PAGEQA_HEADER = [
    "set / answers",
    "questions",
    "hit@1",
    "hit@5",
    "MRR@10",
    "contains",
    "cited precision",
    "first citation",
    "search p50 / p95 ms",
    "answer p50 / p95 ms",
]


def pageqa_row(label: str, m: dict[str, Any]) -> list[str]:
    return [
        label,
        num(m.get("questions")),
        *(
            num(m.get(k), 3)
            for k in (
                "hit@1",
                "hit@5",
                "mrr@10",
                "containment",
                "cited_precision",
                "first_citation",
            )
        ),
        p50_p95(m.get("search_ms")),
        p50_p95(m.get("answer_ms")),
    ]


def render_pageqa(data: Any) -> Lines:
    out: Lines = []
    for number, run in enumerate(newest_first(data)):
        out += run_header(run, when(run), command("bench/pageqa.py", run.get("args")))
        results = run.get("results") or {}
        rows = (pageqa_row(k, v.get("overall") or {}) for k, v in results.items())
        out += table(PAGEQA_HEADER, rows)
        for key, res in results.items():
            if res.get("problems"):
                out += [f"Problems in {key}: " + "; ".join(map(str, res["problems"])), ""]
        if number > 0:
            continue  # the breakdowns of the newest run only
        for key, res in results.items():
            for part, name in (("by_kind", "kind"), ("by_qtype", "question type")):
                if res.get(part) and key.endswith("/extractive"):
                    out += [f"{key}, by {name}:", ""]
                    rows = (pageqa_row(k, v) for k, v in res[part].items())
                    out += table([name, *PAGEQA_HEADER[1:]], rows)
    return out


def render_ingest(data: Any) -> Lines:
    out: Lines = []
    for run in newest_first(data):
        out += run_header(run, when(run), command("bench/ingest.py", run.get("args")))
        if run.get("mode") == "throughput":
            out += [f"Files: {', '.join(run.get('files') or [])}.", ""]
            rows = [
                [
                    r["config"],
                    num(r.get("pages")),
                    num(r.get("ocr_pages")),
                    num(r.get("chunks")),
                    num(r.get("wall_s")),
                    num(r.get("chunks_per_s")),
                    num(r.get("vs_packaged_1_thread"), 2),
                    num(r.get("vs_model_limit"), 2),
                    num(r.get("embed_chunks_per_s")),
                    num(r.get("peak_rss_mb")),
                ]
                for r in run.get("rows") or []
            ]
            out += table(
                [
                    "embedder:workers",
                    "pages",
                    "OCR pages",
                    "chunks",
                    "wall s",
                    "chunks/s",
                    "÷ packaged model, 1 thread",
                    "÷ its model on all cores",
                    "embed chunks/s in the worker",
                    "peak RSS MB",
                ],
                rows,
            )
            raw = [
                [
                    r["model"],
                    num(r.get("threads")),
                    num(r.get("processes")),
                    num(r.get("chunks_per_s")),
                    num(r.get("rss_mb_per_process")),
                ]
                for r in run.get("raw") or []
            ]
            out += ["Each model alone on the same chunk texts:", ""]
            out += table(["model", "threads", "processes", "chunks/s", "RSS MB per process"], raw)
        else:
            rows = [
                [
                    r["file"],
                    num(r.get("pages")),
                    num(r.get("ocr_pages")),
                    num(r.get("chunks")),
                    num(r.get("extract_pages_per_s")),
                    num(r.get("ocr_s_per_page"), 2),
                    num(r.get("embed_chunks_per_s")),
                    num(r.get("e2e_pages_per_s"), 2),
                    f"{r['overhead_share']:.0%}" if r.get("overhead_share") is not None else "–",
                ]
                for r in run.get("rows") or []
            ]
            out += table(
                [
                    "file",
                    "pages",
                    "OCR pages",
                    "chunks",
                    "extract pages/s",
                    "OCR s/page",
                    "embed chunks/s",
                    "end to end pages/s",
                    "overhead",
                ],
                rows,
            )
            share, rss = run.get("overhead_share"), get(run, "peak_rss_mb", "worker")
            out += [
                f"Pipeline overhead over the whole set: {num(share and 100 * share)} %; "
                f"peak RSS of the worker: {num(rss)} MB.",
                "",
            ]
    return out


def render_embed(data: Any) -> Lines:
    out: Lines = []
    for run in newest_first(data if isinstance(data, list) else [data]):
        out += run_header(run, when(run), command("bench/embed.py", run.get("args")))
        out += [
            f"{run.get('dataset')}; {run.get('runs')} timed passes per configuration, median.",
            "",
        ]
        rows = [
            [
                r["variant"],
                num(r.get("threads")),
                num(r.get("batch")),
                num(r.get("max_batch_tokens")) if r.get("max_batch_tokens") else "none",
                num(r.get("chunks_per_s")),
                num(r.get("cpu_ms_per_chunk")),
                num(r.get("peak_rss_mb"), 0),
            ]
            for r in run.get("results") or []
        ]
        out += table(
            [
                "variant",
                "threads",
                "batch",
                "tokens per run, at most",
                "chunks/s",
                "CPU ms per chunk",
                "peak RSS MB",
            ],
            rows,
        )
        quality = run.get("quality") or {}
        if "cosine_to_packaged" in quality:  # the first runs measured one variant
            quality = {"optimized": quality}
        rows = []
        for variant, q in quality.items():
            mixed = get(q, "batch_vs_single_mixed", variant) or {}
            rows.append(
                [
                    variant,
                    f"{num(get(q, 'cosine_to_packaged', 'mean'), 4)} / {num(get(q, 'cosine_to_packaged', 'min'), 4)}",
                    num(mixed.get("bitwise_identical")) if mixed else "–",
                    num(mixed.get("max_abs_diff"), 3) if mixed else "–",
                    num(get(q, "top10_agreement", "mean"), 3),
                ]
            )
        if rows:
            out += table(
                [
                    "variant",
                    "cosine to packaged, mean / min",
                    "same vector alone and in a batch",
                    "largest difference",
                    "top-10 agreement with packaged",
                ],
                rows,
            )
    return out


def render_rerank(data: Any) -> Lines:
    out: Lines = []
    for run in newest_first(data if isinstance(data, list) else [data]):
        out += run_header(run, when(run), command("bench/rerank.py", run.get("args")))
        model = run.get("model") or {}
        out += [
            f"{run.get('dataset')}. Model: `{model.get('recipe')}` ({model.get('num_hidden_layers')} layers, "
            f"hidden {model.get('hidden_size')}, random weights: the shape of ms-marco-MiniLM-L-6-v2); "
            f"{run.get('runs')} timed calls per configuration.",
            "",
        ]
        results = sorted(
            run.get("results") or [],
            key=lambda r: (
                r["variant"],
                r["threads"],
                r.get("max_batch_tokens") or 0,
                r["max_tokens"],
            ),
        )
        rows = [
            [
                r["variant"],
                num(r.get("threads")),
                num(r.get("max_tokens")),
                num(r.get("max_batch_tokens")) if r.get("max_batch_tokens") else "none",
                num(r.get("ms_per_pair")),
                num(r.get("cpu_ms_per_pair")),
                num(r.get("truncated")),
                num(r.get("peak_rss_mb"), 0),
            ]
            for r in results
        ]
        out += table(
            [
                "variant",
                "threads",
                "tokens per pair",
                "tokens per run, at most",
                "ms per pair",
                "CPU ms per pair",
                "pairs cut",
                "peak RSS MB",
            ],
            rows,
        )
    return out


def render_chat(data: Any) -> Lines:
    out: Lines = []
    for run in newest_first(data):
        out += run_header(run, when(run), command("bench/chat.py", run.get("args")))
        res = run.get("results") or {}
        rows = []
        for mode in ("extractive", "llm-fake"):
            m = res.get(mode)
            if not m:
                continue
            stages = m.get("stage_p50") or {}
            rows.append(
                [
                    mode,
                    num(m.get("n")),
                    p50_p95({"p50": m.get("first_token_p50"), "p95": m.get("first_token_p95")}),
                    p50_p95({"p50": m.get("total_p50"), "p95": m.get("total_p95")}),
                    num(m.get("cited_sources_mean"), 2),
                    ", ".join(f"{k} {v:g}" for k, v in stages.items() if k != "total"),
                ]
            )
        out += table(
            [
                "answers",
                "questions",
                "first token p50 / p95 ms",
                "total p50 / p95 ms",
                "sources cited",
                "stages, p50 ms",
            ],
            rows,
        )
        out += [
            f"Library ingested in {num(res.get('ingest_s'))} s; {num(res.get('llm_calls'))} LLM calls.",
            "",
        ]
    return out


def render_load(data: Any) -> Lines:
    out: Lines = []
    for run in newest_first(data):
        out += run_header(run, when(run), command("bench/load.py", run.get("args")))
        res = run.get("results") or {}
        idle95 = get(res, "idle", "search_p95")
        rows = []
        for phase in ("idle", "busy", "load"):
            p = res.get(phase)
            if not p:
                continue
            rows.append(
                [
                    {
                        "idle": "idle, one client",
                        "busy": "busy: the clients, no ingest",
                        "load": "the clients during the ingest",
                    }[phase],
                    num(p.get("requests")),
                    num(p.get("errors")),
                    num(p.get("locked")),
                    p50_p95({"p50": p.get("search_p50"), "p95": p.get("search_p95")}),
                    ratio(p.get("search_p95"), idle95),
                    p50_p95({"p50": p.get("chat_p50"), "p95": p.get("chat_p95")}),
                ]
            )
        out += table(
            [
                "phase",
                "requests",
                "errors",
                '"database is locked"',
                "search p50 / p95 ms",
                "search p95 ÷ idle",
                "chat p50 / p95 ms",
            ],
            rows,
        )
        ingest = res.get("ingest") or {}
        out += [
            f"{num(res.get('clients'))} clients, {num(res.get('throughput_rps'))} requests/s during the ingest; "
            f"the {num(res.get('pages'))}-page PDF was `{ingest.get('status_when_load_ended')}` when the load ended "
            f"and `{ingest.get('status')}` after {num(ingest.get('seconds'))} s; "
            f'"database is locked" in the logs: {num(res.get("locked_in_logs"))}, tracebacks: {num(res.get("tracebacks_in_logs"))}.',
            "",
        ]
    return out


def render_searchable(data: Any) -> Lines:
    out: Lines = []
    for run in newest_first(data):
        args = run.get("args") or {
            "file": run.get("file"),
            "query": run.get("query"),
            "runs": len(run.get("runs") or []),
        }
        out += run_header(run, when(run), command("bench/searchable.py", args))
        median = run.get("median") or {}
        out += table(
            [
                "file",
                "query",
                "searchable after, s",
                "first BM25 hit after, s",
                "ready after, s",
                "runs",
            ],
            [
                [
                    str(run.get("file")),
                    str(run.get("query")),
                    num(median.get("searchable_s"), 2),
                    num(median.get("first_bm25_hit_s"), 2),
                    num(median.get("ready_s"), 2),
                    num(len(run.get("runs") or [])),
                ]
            ],
        )
    return out


def render_mcp(data: Any) -> Lines:
    out: Lines = []
    for run in newest_first(data):
        args = run.get("args") or {
            "clients": run.get("clients"),
            "searches": run.get("searches_per_client"),
            "pages": run.get("pages"),
        }
        out += run_header(run, when(run), command("bench/mcp_load.py", args))
        rows = []
        for phase, clients in (("idle", 1), ("load", run.get("clients"))):
            p = run.get(phase) or {}
            label = (
                "idle"
                if phase == "idle"
                else f"load: the worker ingesting a {run.get('pages')}-page PDF"
            )
            rows.append(
                [
                    label,
                    num(clients),
                    num(p.get("calls")),
                    num(p.get("errors")),
                    num(p.get("p50_ms")),
                    num(p.get("p95_ms")),
                    num(p.get("max_ms")),
                    num(p.get("calls_per_s")),
                ]
            )
        out += table(
            ["phase", "clients", "calls", "errors", "p50 ms", "p95 ms", "max ms", "calls/s"], rows
        )
        out += [
            f'"database is locked" in the logs: {num(run.get("locked_in_logs"))}, tracebacks: {num(run.get("tracebacks_in_logs"))}; '
            f"the PDF was `{get(run, 'ingest', 'status_when_load_ended')}` when the load ended.",
            "",
        ]
    return out


# -- the pages ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Bench:
    title: str
    reproduce: str
    about: str
    render: Callable[[Any], Lines]


BENCHES: dict[str, Bench] = {
    "retrieval": Bench(
        "Search at scale",
        ".venv/bin/python bench/retrieval.py --sizes 10000,100000,300000 --keep /tmp/qb",
        "Quire's search on synthetic libraries of 10k to 1M chunks (a Zipf vocabulary, "
        "1,000–1,500 characters a chunk, seeded random unit vectors, which cost the dense leg what "
        "real ones cost), against rank-bm25 (`BM25Okapi`, the baseline the design names) in the "
        "same run. Each query has 3 rare words, 2 frequent ones and an identifier; top 50, no "
        "reranker, the query's embedding excluded. *Warm*: after 200 other queries, so frequent "
        "words' scores are cached; *fresh terms*: 5 warm-ups, then no term of the query cached. "
        "`--keep` caches the corpus for later runs; rank-bm25 is skipped when its index would not "
        "fit in memory.",
        render_retrieval,
    ),
    "postgres": Bench(
        "SQLite and PostgreSQL",
        ".venv/bin/python bench/postgres.py --sizes 100000 --queries 100 --keep /tmp/qbpg",
        "The same synthetic corpus as the search-at-scale bench, built into both backends and "
        "measured side by side: 5 warm-up queries, 100 with fresh terms, the same 100 again (warm), "
        "top 50, no reranker. PostgreSQL is the test wheels' PostgreSQL 18 with pgvector, started "
        "by the bench unless `--database-url` names a server. The SQLite library gets its frequent "
        "terms' entries before it is searched, as the idle worker gives a real library. Compare "
        "the backends within one run: the machine's speed varies between runs.",
        render_postgres,
    ),
    "peers": Bench(
        "Against other systems",
        ".venv/bin/python bench/peers.py --setup && .venv/bin/python bench/peers.py --sizes 100000 --keep /tmp/qb",
        "The same chunks, texts and vectors as the search-at-scale bench, searched by Quire and by "
        "other designs, each in its own process (the peers' packages live in `.venv-peers`, from "
        "`bench/peers-requirements.txt`, never in Quire's venv), warmed with the same 5 queries, "
        "top 50, query vectors given. An audit hook checks that no child opens a network "
        "connection.",
        render_peers,
    ),
    "eval-scifact": Bench(
        "Retrieval quality (SciFact)",
        ".venv/bin/quire eval --dataset ../shared/data/ir/scifact --split both --json > bench/results/eval-scifact.json",
        "nDCG@10, Recall@100 and MRR@10 of BM25 alone, dense alone and hybrid on the BEIR SciFact "
        "dataset, local models only, no LLM; times per query at the evaluation's depth of 200 hits. "
        "The first run ingests and embeds 5,183 abstracts (10–20 minutes on 2 cores) into a cache "
        "under `$QUIRE_DATA_DIR/eval/`; later runs take about 1.5 minutes. Hybrid + rerank is "
        "skipped where the cross-encoder is not installed. `quire eval --json` records no date or "
        "machine.",
        render_eval_scifact,
    ),
    "pageqa": Bench(
        "Page-exact answers (page-QA)",
        ".venv/bin/python bench/pageqa.py --fake-llm",
        "Questions over long documents whose answer is on a known page: the development set "
        "(`../shared/data/qa/pageqa-dev.jsonl`, 47 questions, tuned on) and the held-out set "
        "(`bench/pageqa/heldout.jsonl`, 38 questions, written before any tuning and only checked). "
        "Search page hit@1/@5 and MRR@10; then the answer: *contains* (it states the fact), "
        "*cited precision* (share of cited sources on a right page), *first citation* on a right "
        "page. `extractive` answers without an LLM; `llm-fake` runs the real LLM path against a "
        "fake model that quotes, which measures the citation bookkeeping, not a real model's "
        "writing. `--sets dev-cjk heldout-cjk` runs the Japanese, Chinese and Arabic sets; "
        "`--set KEY=VALUE` changes a setting for one run.",
        render_pageqa,
    ),
    "ingest": Bench(
        "Ingest",
        ".venv/bin/python bench/ingest.py",
        "Every shared document and a generated 1,000-page PDF through the real pipeline (worker "
        "code, extraction child, SQLite, the local embedder on one thread) into a fresh data "
        "directory. *Overhead* is everything but OCR and the embedder. `--throughput --configs "
        "local:2 local-sint8:2` instead runs `quire ingest --wait --workers N` over the six longest "
        "documents per configuration, then each model alone on the same chunk texts: the limit the "
        "pipeline is compared with.",
        render_ingest,
    ),
    "searchable": Bench(
        "Searchable before embedded",
        ".venv/bin/python bench/searchable.py",
        "Seconds from intake to the first BM25 hit and to `ready` for one PDF (Think Complexity, "
        "244 pages of which 13 need OCR) and a query from its second half.",
        render_searchable,
    ),
    "embed": Bench(
        "Embedding",
        ".venv/bin/python bench/embed.py --optimized --static",
        "all-MiniLM-L6-v2 on SciFact abstracts: chunks per second of the packaged int8 model "
        "(`local`), the dynamically quantised rebuild (`optimized`, not shipped) and the per-row "
        "int8 rebuild (`static`, `QUIRE_EMBEDDER=local-sint8`), by threads, batch size and the "
        "cap on padded tokens per run; and how close their vectors are to the packaged model's.",
        render_embed,
    ),
    "rerank": Bench(
        "Reranking",
        ".venv/bin/python bench/rerank.py",
        "The cost of the cross-encoder per (question, passage) pair: a model of "
        "ms-marco-MiniLM-L-6-v2's exact shape with random weights (the real weights cannot be "
        "downloaded on the machine that ran it), fp32 and int8, by threads and tokens per pair.",
        render_rerank,
    ),
    "chat": Bench(
        "Answers",
        ".venv/bin/python bench/chat.py",
        "8 questions × 2 rounds over an EPUB, two PDFs and a Perplexity thread, in-process through "
        "the chat engine, no reranker. `extractive`: no LLM (the whole answer arrives at once). "
        "`llm-fake`: a fake LLM that answers instantly over HTTP, so the times are Quire's own cost "
        "around a model; a real model adds its generation time.",
        render_chat,
    ),
    "load": Bench(
        "Load",
        ".venv/bin/python bench/load.py --clients 4 --pages 80 --duration 90",
        "The stack as `make run` starts it (API, worker, nginx) under concurrent clients (80 % "
        "search, 20 % extractive chat read to the end): an idle phase with one client, a busy phase "
        "with all clients and nothing ingesting, then the same clients while the worker ingests a "
        'generated PDF. Errors and "database is locked" are counted in the responses and both '
        "logs. The busy column tells CPU queueing (clients on two cores) from the ingest's cost.",
        render_load,
    ),
    "mcp": Bench(
        "MCP under load",
        ".venv/bin/python bench/mcp_load.py",
        "The stack as `make run` starts it, MCP clients of the official SDK calling `search` through "
        "nginx with the token: one client idle, then many while the worker ingests a PDF.",
        render_mcp,
    ),
}


def render_page(name: str, data: Any) -> str:
    """One benchmark's page."""
    bench = BENCHES[name]
    lines = [
        f"# {bench.title}",
        "",
        bench.about,
        "",
        "Reproduce:",
        "",
        "```sh",
        bench.reproduce,
        "```",
        "",
        f"Generated from `bench/results/{name}.json` when the site is built; newest run first. "
        "The machine is a shared 2-core box, so read each run with the load beside it.",
        "",
        *bench.render(data),
    ]
    return "\n".join(lines).rstrip() + "\n"


def render_all(results_dir: Path) -> dict[str, str]:
    """``benchmarks/<name>.md`` → its page, for every results file."""
    pages = {}
    for path in sorted(results_dir.glob("*.json")):
        if path.stem not in BENCHES:
            raise ValueError(f"{path} has no renderer: add one to BENCHES in {__file__}")
        pages[f"benchmarks/{path.stem}.md"] = render_page(path.stem, json.loads(path.read_text()))
    return pages
