"""One renderer per results file of bench/results/: its runs, newest first, as markdown lines.

The files differ in shape: most are a list of runs with ``date``, ``machine``, ``args`` and
``results``; embed.json and rerank.json say ``created``; postgres.json is a list of per-size runs
without a date; eval-scifact.json is one ``quire eval --json``. Older runs recorded less, so
every value is read with ``get`` and shown as ``–`` when missing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench_format import (
    Lines,
    Row,
    Run,
    command,
    get,
    newest_first,
    num,
    p50_p95,
    pair,
    ratio,
    run_header,
    table,
    when,
)

# -- search at scale (bench/retrieval.py) ---------------------------------------------------


def retrieval_row(size: str, result: dict[str, Any]) -> Row:
    quire, bm25 = result.get("quire") or {}, result.get("rank_bm25") or {}
    warm = get(quire, "e2e", "ex_embed") or get(quire, "e2e", "total")
    baseline = get(bm25, "query", "wall", "p50")
    legs = quire.get("legs") or {}
    return {
        "chunks": f"{int(size):,}",
        "end to end, fresh terms, p50 / p95 ms": p50_p95(get(quire, "e2e_fresh", "ex_embed")),
        "end to end, warm, p50 / p95 ms": p50_p95(warm),
        "BM25 leg, warm, p50 ms": num(get(legs, "bm25", "wall", "p50")),
        "BM25 leg, fresh terms, p50 ms": num(get(quire, "e2e_fresh", "bm25", "p50")),
        "BM25 ranked by FTS5 alone, p50 ms": num(get(legs, "bm25_no_cache", "wall", "p50")),
        "dense leg p50 ms": num(get(legs, "dense", "wall", "p50")),
        "exact leg p50 ms": num(get(legs, "exact", "wall", "p50")),
        "rank-bm25 p50 ms": "skipped" if bm25.get("skipped") else num(baseline),
        "rank-bm25 ÷ Quire (warm p50)": ratio(baseline, get(warm, "p50")),
        "disk MB": num(quire.get("disk_mb"), 0),
        "serving RSS growth MB": num(quire.get("rss_serving_growth_mb"), 0),
        "add 1,000 chunks, s": num(get(quire, "add", "s"), 2),
    }


def render_retrieval(data: list[Run]) -> Lines:
    runs = newest_first([r for r in data if "results" in r])
    newest: dict[int, tuple[Run, dict[str, Any]]] = {}
    for run in runs:
        for size, result in run["results"].items():
            newest.setdefault(int(size), (run, result))
    out = ["## Newest run at each size", ""]
    out += table(
        {"date": when(r), **retrieval_row(str(s), res)} for s, (r, res) in sorted(newest.items())
    )
    out += ["On disk by table, MB (the same runs):", ""]
    names = sorted({n for _, res in newest.values() for n in get(res, "quire", "table_mb") or {}})
    out += table(
        {"chunks": f"{s:,}", **{n: num(get(res, "quire", "table_mb", n), 0) for n in names}}
        for s, (_, res) in sorted(newest.items())
    )
    recall = newest_first([r for r in data if "dense_recall" in r])
    if recall:
        out += ["## Dense recall of the 4-bit scan on real vectors", ""]
        out += ["The 4-bit candidate scan against exact float32 search (`--dense-recall`).", ""]
        out += table(dense_recall_row(run) for run in recall)
    out += ["## Runs", ""]
    for run in runs:
        out += run_header(run, command("bench/retrieval.py", run.get("args")))
        out += table(retrieval_row(s, r) for s, r in run["results"].items())
        for target in run.get("targets") or []:
            mark = "✓" if target.get("pass") else "✗"
            out.append(f"- {mark} {target['target']}: {num(target.get('value'))}")
        out.append("")
    return out


def dense_recall_row(run: Run) -> Row:
    rec = run["dense_recall"]
    recall = [f"{k} {v['mean']:.3f} (min {v['min']:.3f})" for k, v in rec.items() if "@" in k]
    return {
        "date": when(run),
        "vectors": num(rec.get("vectors")),
        "in 4-bit blocks": num(rec.get("quantised_rows")),
        "queries": num(rec.get("queries")),
        "recall, mean (min)": ", ".join(recall),
    }


# -- SQLite and PostgreSQL (bench/postgres.py) -----------------------------------------------


BACKENDS = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}


def postgres_table(run: Run) -> Lines:
    backends = {b: run[b] for b in BACKENDS if b in run}
    rows: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
        ("hybrid, fresh terms, p50 / p95 ms", lambda b: p50_p95(get(b, "fresh", "hybrid"))),
        ("hybrid, warm, p50 / p95 ms", lambda b: p50_p95(get(b, "warm", "hybrid"))),
        ("BM25 leg, fresh, p50 / p95 ms", lambda b: p50_p95(get(b, "fresh", "bm25"))),
        ("dense leg, fresh, p50 / p95 ms", lambda b: p50_p95(get(b, "fresh", "dense"))),
        ("exact leg, fresh, p50 / p95 ms", lambda b: p50_p95(get(b, "fresh", "exact"))),
        ("build, s", lambda b: num(b.get("build_s"), 0)),
        ("of which rows, s", lambda b: num(b.get("build_rows_s"), 0)),
        ("reading the frequent terms' entries, s", lambda b: num(b.get("term_postings_s"))),
        ("add 1,000 chunks, s", lambda b: num(b.get("add_1000_s"), 2)),
        ("delete them, s", lambda b: num(b.get("delete_1000_s"), 2)),
        ("disk, MB", lambda b: num(b.get("disk_mb"), 0)),
        ("client RSS growth, MB", lambda b: num(b.get("client_rss_growth_mb"))),
        ("server RSS, MB", lambda b: num(b.get("server_rss_mb"), 0)),
    ]
    corner = f"{run['size']:,} chunks"
    return table(
        {corner: label, **{BACKENDS[b]: fn(stats) for b, stats in backends.items()}}
        for label, fn in rows
    )


def render_postgres(data: list[Run]) -> Lines:
    numbered = list(enumerate(data, 1))[::-1]  # no dates recorded: the file's order, newest last

    def title(number: int, run: Run) -> str:
        when_ = when(run) if "date" in run else f"Run {number} of {len(data)}"
        return f"{when_}: {run['size']:,} chunks"

    out = ["## Newest run at each size", ""]
    for size in sorted({r["size"] for r in data}):
        number, run = next((n, r) for n, r in numbered if r["size"] == size)
        out += [f"{title(number, run)}:", ""] + postgres_table(run)
    out += ["## Runs", "", "Runs without a date are numbered in the order they were recorded.", ""]
    for number, run in numbered:
        cmd = (
            f".venv/bin/python bench/postgres.py --sizes {run['size']}   # other args not recorded"
        )
        if "args" in run:
            cmd = command("bench/postgres.py", run["args"])
        out += run_header(run, cmd, title(number, run))
        if get(run, "server_settings", "shared_buffers"):
            out += [f"PostgreSQL `shared_buffers` {run['server_settings']['shared_buffers']}.", ""]
        out += postgres_table(run)
    return out


# -- against other systems (bench/peers.py) -------------------------------------------------

PEERS = {
    "quire": "Quire hybrid (excl. query embedding)",
    "bm25s_faiss": "bm25s + faiss exact, RRF (ids only)",
    "lancedb": "LanceDB hybrid, RRFReranker",
    "pagepiper": "Pagepiper design: rank-bm25 + sqlite-vec, RRF",
    "open_webui": "Open WebUI design: Chroma + BM25 rebuilt per query",
}


def peer_row(name: str, result: dict[str, Any]) -> Row:
    wall = result.get("ex_embed") if name == "quire" else result.get("wall")
    return {
        "system": PEERS.get(name, name),
        "index build s": num(get(result, "build", "total_s")),
        "query p50 / p95 ms": p50_p95(wall),
        "queries": num(get(wall, "n")),
        "serving RSS MB": num(result.get("rss_serving_mb"), 0),
        "skipped": str(result.get("skipped", "")),
    }


def render_peers(data: list[Run]) -> Lines:
    runs = newest_first(data)
    out = ["How the systems are run (notes recorded with the newest run):", ""]
    out += [f"- {note}" for note in runs[0].get("notes") or []] + [""]
    for run in runs:
        out += run_header(run, command("bench/peers.py", run.get("args"), skip={"peers_venv"}))
        for size, systems in run["results"].items():
            out += [f"{int(size):,} chunks:", ""]
            out += table(peer_row(name, result) for name, result in systems.items())
    return out


# -- retrieval quality (quire eval) ---------------------------------------------------------


def render_eval_scifact(data: Run | list[Run]) -> Lines:
    out: Lines = []
    for run in data if isinstance(data, list) else [data]:
        cmd = ".venv/bin/quire eval --dataset ../shared/data/ir/scifact --split both --json"
        out += run_header(run, cmd)
        index, settings = run.get("index") or {}, run.get("settings") or {}
        cached = "cached" if index.get("cached") else "built for this run"
        ingest = num(index.get("ingest_seconds"))
        out += [
            f"Index: {num(index.get('documents'))} documents, {num(index.get('chunks'))} chunks, "
            f"embedder `{index.get('embedder')}` ({cached}; ingest {ingest} s).",
            "",
            "Settings: " + ", ".join(f"`{k}` {v}" for k, v in settings.items()) + ".",
            "",
        ]
        out += table(
            {
                "split": f"{split} ({body.get('queries')} queries)",
                "variant": variant,
                "nDCG@10": num(res.get("ndcg@10"), 4),
                "Recall@100": num(res.get("recall@100"), 4),
                "MRR@10": num(res.get("mrr@10"), 4),
                "total p50 / p95 ms": p50_p95(get(res, "latency_ms", "total")),
                "CPU p50 / p95 ms": p50_p95(res.get("cpu_ms")),
            }
            for split, body in (run.get("splits") or {}).items()
            for variant, res in (body.get("variants") or {}).items()
        )
        stages = get(run, "splits", "test", "variants", "hybrid", "latency_ms") or {}
        out += ["Hybrid, test split, per stage:", ""] if stages else []
        out += table({"stage": s, "p50 / p95 ms": p50_p95(v, 2)} for s, v in stages.items())
    return out


# -- page-exact answers (bench/pageqa.py) ---------------------------------------------------


def pageqa_row(first: str, label: str, m: dict[str, Any]) -> Row:
    return {
        first: label,
        "questions": num(m.get("questions")),
        **{k: num(m.get(key), 3) for k, key in PAGEQA_METRICS.items()},
        "search p50 / p95 ms": p50_p95(m.get("search_ms")),
        "answer p50 / p95 ms": p50_p95(m.get("answer_ms")),
    }


PAGEQA_METRICS = {
    "hit@1": "hit@1",
    "hit@5": "hit@5",
    "MRR@10": "mrr@10",
    "contains": "containment",
    "cited precision": "cited_precision",
    "first citation": "first_citation",
}


def render_pageqa(data: list[Run]) -> Lines:
    out: Lines = []
    for number, run in enumerate(newest_first(data)):
        out += run_header(run, command("bench/pageqa.py", run.get("args")))
        results = run.get("results") or {}
        out += table(
            pageqa_row("set / answers", k, v.get("overall") or {}) for k, v in results.items()
        )
        for key, res in results.items():
            if res.get("problems"):
                out += [f"Problems in {key}: " + "; ".join(map(str, res["problems"])), ""]
        if number > 0:
            continue  # the breakdowns of the newest run only
        for key, res in results.items():
            for part, name in (("by_kind", "kind"), ("by_qtype", "question type")):
                if res.get(part) and key.endswith("/extractive"):
                    out += [f"{key}, by {name}:", ""]
                    out += table(pageqa_row(name, k, v) for k, v in res[part].items())
    return out


# -- ingest (bench/ingest.py) ---------------------------------------------------------------


def ingest_file_row(r: dict[str, Any]) -> Row:
    share = r.get("overhead_share")
    return {
        "file": r["file"],
        "pages": num(r.get("pages")),
        "OCR pages": num(r.get("ocr_pages")),
        "chunks": num(r.get("chunks")),
        "extract pages/s": num(r.get("extract_pages_per_s")),
        "OCR s/page": num(r.get("ocr_s_per_page"), 2),
        "LibreOffice rendition s": num(r.get("render_s"), 2),
        "embed chunks/s": num(r.get("embed_chunks_per_s")),
        "end to end pages/s": num(r.get("e2e_pages_per_s"), 2),
        "overhead": f"{share:.0%}" if share is not None else "–",
    }


def ingest_config_row(r: dict[str, Any]) -> Row:
    return {
        "embedder:workers": r["config"],
        "pages (OCR)": f"{num(r.get('pages'))} ({num(r.get('ocr_pages'))})",
        "chunks": num(r.get("chunks")),
        "wall s": num(r.get("wall_s")),
        "chunks/s": num(r.get("chunks_per_s")),
        "÷ packaged model, 1 thread": num(r.get("vs_packaged_1_thread"), 2),
        "÷ its model alone on all cores": num(r.get("vs_model_limit"), 2),
        "embed chunks/s in the worker": num(r.get("embed_chunks_per_s")),
        "peak RSS MB": num(r.get("peak_rss_mb")),
    }


def raw_model_row(r: dict[str, Any]) -> Row:
    return {
        "model alone": r["model"],
        "threads × processes": f"{r.get('threads')} × {r.get('processes')}",
        "chunks/s": num(r.get("chunks_per_s")),
        "RSS MB per process": num(r.get("rss_mb_per_process")),
    }


def render_ingest(data: list[Run]) -> Lines:
    out: Lines = []
    for run in newest_first(data):
        out += run_header(run, command("bench/ingest.py", run.get("args")))
        if run.get("mode") == "throughput":
            out += [f"Files: {', '.join(run.get('files') or [])}.", ""]
            out += table(ingest_config_row(r) for r in run.get("rows") or [])
            out += table(raw_model_row(r) for r in run.get("raw") or [])
        else:
            out += table(ingest_file_row(r) for r in run.get("rows") or [])
            share, rss = run.get("overhead_share"), get(run, "peak_rss_mb", "worker")
            overhead = f"{share:.1%}" if share is not None else "–"
            out += [f"Pipeline overhead, whole set: {overhead}; worker peak RSS {num(rss)} MB.", ""]
    return out


# -- embedding and reranking (bench/embed.py, bench/rerank.py) ------------------------------


def embed_row(r: dict[str, Any]) -> Row:
    return {
        "variant": r["variant"],
        "threads": num(r.get("threads")),
        "batch": num(r.get("batch")),
        "tokens per run, at most": num(r.get("max_batch_tokens"))
        if r.get("max_batch_tokens")
        else "no cap",
        "chunks/s": num(r.get("chunks_per_s")),
        "CPU ms per chunk": num(r.get("cpu_ms_per_chunk")),
        "peak RSS MB": num(r.get("peak_rss_mb"), 0),
    }


def embed_quality_row(variant: str, q: dict[str, Any]) -> Row:
    mixed = get(q, "batch_vs_single_mixed", variant) or {}
    cosine = q.get("cosine_to_packaged") or {}
    return {
        "variant": variant,
        "cosine to packaged, mean / min": " / ".join(
            num(cosine.get(k), 4) for k in ("mean", "min")
        ),
        "same vector alone and in a batch": num(mixed.get("bitwise_identical")),
        "largest difference": num(mixed.get("max_abs_diff"), 3),
        "top-10 agreement with packaged": num(get(q, "top10_agreement", "mean"), 3),
    }


def render_embed(data: list[Run]) -> Lines:
    out: Lines = []
    for run in newest_first(data):
        out += run_header(run, command("bench/embed.py", run.get("args")))
        out += [f"{run.get('dataset')}; median of {run.get('runs')} timed passes.", ""]
        out += table(embed_row(r) for r in run.get("results") or [])
        quality = run.get("quality") or {}
        if "cosine_to_packaged" in quality:  # the first run measured one variant, unnamed
            quality = {"optimized": quality}
        out += table(embed_quality_row(v, q) for v, q in quality.items())
    return out


def rerank_row(r: dict[str, Any]) -> Row:
    return {
        "variant": r["variant"],
        "threads": num(r.get("threads")),
        "tokens per pair": num(r.get("max_tokens")),
        "tokens per run, at most": num(r.get("max_batch_tokens"))
        if r.get("max_batch_tokens")
        else "no cap",
        "ms per pair": num(r.get("ms_per_pair")),
        "CPU ms per pair": num(r.get("cpu_ms_per_pair")),
        "pairs cut": num(r.get("truncated")),
        "peak RSS MB": num(r.get("peak_rss_mb"), 0),
    }


def render_rerank(data: Run | list[Run]) -> Lines:
    out: Lines = []
    for run in newest_first(data if isinstance(data, list) else [data]):
        out += run_header(run, command("bench/rerank.py", run.get("args")))
        model = run.get("model") or {}
        out += [
            f"{run.get('dataset')}; median of {run.get('runs')} timed calls. Model "
            f"`{model.get('recipe')}`: {model.get('num_hidden_layers')} layers, hidden "
            f"{model.get('hidden_size')}, random weights.",
            "",
        ]
        order = ("variant", "threads", "max_batch_tokens", "max_tokens")
        results = sorted(run.get("results") or [], key=lambda r: [r.get(k) or 0 for k in order])
        out += table(rerank_row(r) for r in results)
    return out


# -- answers, load, searchable, MCP (bench/chat.py, load.py, searchable.py, mcp_load.py) ----


def chat_row(mode: str, m: dict[str, Any]) -> Row:
    stages = m.get("stage_p50") or {}
    return {
        "answers": mode,
        "questions": num(m.get("n")),
        "first token p50 / p95 ms": pair(m, "first_token"),
        "total p50 / p95 ms": pair(m, "total"),
        "sources cited": num(m.get("cited_sources_mean"), 2),
        "stages, p50 ms": ", ".join(f"{k} {v:g}" for k, v in stages.items() if k != "total"),
    }


def render_chat(data: list[Run]) -> Lines:
    out: Lines = []
    for run in newest_first(data):
        out += run_header(run, command("bench/chat.py", run.get("args")))
        res = run.get("results") or {}
        out += table(
            chat_row(mode, res[mode]) for mode in ("extractive", "llm-fake") if res.get(mode)
        )
        out += [f"Ingest {num(res.get('ingest_s'))} s; {num(res.get('llm_calls'))} LLM calls.", ""]
        if res.get("prompts"):
            out += ["Prompts the LLM path sent (Quire's token estimate):", ""]
            out += table(prompt_row(kind, p) for kind, p in res["prompts"].items())
    return out


def prompt_row(kind: str, p: dict[str, Any]) -> Row:
    return {
        "prompt": kind,
        "calls": num(p.get("calls")),
        "tokens p50": num(p.get("tokens_p50")),
        "tokens max": num(p.get("tokens_max")),
        "num_ctx max": num(p.get("num_ctx_max")),
    }


LOAD_PHASES = {
    "idle": "idle, one client",
    "busy": "busy: the clients, no ingest",
    "load": "the clients during the ingest",
}


def load_row(phase: str, p: dict[str, Any], idle_p95: Any) -> Row:
    return {
        "phase": LOAD_PHASES[phase],
        "requests": num(p.get("requests")),
        "errors": num(p.get("errors")),
        '"database is locked"': num(p.get("locked")),
        "search p50 / p95 ms": pair(p, "search"),
        "search p95 ÷ idle": ratio(p.get("search_p95"), idle_p95),
        "chat p50 / p95 ms": pair(p, "chat"),
    }


def render_load(data: list[Run]) -> Lines:
    out: Lines = []
    for run in newest_first(data):
        out += run_header(run, command("bench/load.py", run.get("args")))
        res = run.get("results") or {}
        idle_p95 = get(res, "idle", "search_p95")
        out += table(load_row(p, res[p], idle_p95) for p in LOAD_PHASES if res.get(p))
        ingest = res.get("ingest") or {}
        out += [
            f"{num(res.get('clients'))} clients, {num(res.get('throughput_rps'))} requests/s "
            f"during the ingest. The {num(res.get('pages'))}-page PDF: "
            f"`{ingest.get('status_when_load_ended')}` when the load ended, "
            f"`{ingest.get('status')}` after {num(ingest.get('seconds'))} s. In the logs: "
            f'{num(res.get("locked_in_logs"))} "database is locked", '
            f"{num(res.get('tracebacks_in_logs'))} tracebacks.",
            "",
        ]
    return out


def webpages_cells(result: dict[str, Any], names: list[str]) -> dict[str, str]:
    """Each extractor's "recall / precision" on one page (or their means)."""
    return {
        f"{name} R / P": f"{num(result[name]['recall'], 3)} / {num(result[name]['precision'], 3)}"
        for name in names
        if name in result
    }


def render_webpages(data: list[Run]) -> Lines:
    out: Lines = []
    for run in newest_first(data):
        out += run_header(run, command("bench/webpages.py", run.get("args")))
        means = run.get("means") or {}
        names = list(means)
        out += table(
            [
                {"page": str(p["page"]), "words": num(p["oracle_words"], 0)}
                | webpages_cells(p, names)
                for p in run.get("pages") or []
            ]
            + [{"page": "mean", "words": ""} | webpages_cells(means, names)]
        )
    return out


def render_searchable(data: list[Run]) -> Lines:
    out: Lines = []
    for run in newest_first(data):
        runs = run.get("runs") or []
        args = {"file": run.get("file"), "query": run.get("query"), "runs": len(runs)}
        out += run_header(run, command("bench/searchable.py", run.get("args") or args))
        median = run.get("median") or {}
        out += table(
            [
                {
                    "file": str(run.get("file")),
                    "query": str(run.get("query")),
                    "searchable after, s": num(median.get("searchable_s"), 2),
                    "first BM25 hit after, s": num(median.get("first_bm25_hit_s"), 2),
                    "ready after, s": num(median.get("ready_s"), 2),
                    "runs": num(len(runs)),
                }
            ]
        )
    return out


def mcp_row(phase: str, clients: Any, p: dict[str, Any]) -> Row:
    return {
        "phase": phase,
        "clients": num(clients),
        "calls": num(p.get("calls")),
        "errors": num(p.get("errors")),
        "p50 ms": num(p.get("p50_ms")),
        "p95 ms": num(p.get("p95_ms")),
        "max ms": num(p.get("max_ms")),
        "calls/s": num(p.get("calls_per_s")),
    }


def render_mcp(data: list[Run]) -> Lines:
    out: Lines = []
    for run in newest_first(data):
        recorded = {"clients": run.get("clients"), "searches": run.get("searches_per_client")}
        args = run.get("args") or {**recorded, "pages": run.get("pages")}
        out += run_header(run, command("bench/mcp_load.py", args))
        during = f"load: the worker ingesting a {run.get('pages')}-page PDF"
        out += table(
            [
                mcp_row("idle", 1, run.get("idle") or {}),
                mcp_row(during, run.get("clients"), run.get("load") or {}),
            ]
        )
        out += [
            f"The PDF was `{get(run, 'ingest', 'status_when_load_ended')}` when the load ended. "
            f'In the logs: {num(run.get("locked_in_logs"))} "database is locked", '
            f"{num(run.get('tracebacks_in_logs'))} tracebacks.",
            "",
        ]
    return out


def render_notes(data: list[Run]) -> Lines:
    out: Lines = []
    for run in newest_first(data):
        out += run_header(run, command("bench/notes.py", {"runs": run.get("runs")}))
        out += table(
            {
                "note": name,
                "bytes": num(r.get("bytes")),
                "save p50, ms": num(r.get("save_ms_p50")),
                "save max, ms": num(r.get("save_ms_max")),
                "save CPU p50, ms": num(r.get("save_cpu_ms_p50")),
                "search p50, ms": num(r.get("search_ms_p50")),
                "found by the first search": str(r.get("found_first")),
            }
            for name, r in (run.get("results") or {}).items()
        )
    return out


def render_notes_list(data: list[Run]) -> Lines:
    out: Lines = []
    for run in newest_first(data):
        res = run.get("result") or {}
        flags = {"notes": res.get("notes"), "runs": run.get("runs")}
        out += run_header(run, command("bench/notes_list.py", flags))
        out += table(
            {"request": name.removesuffix("_ms").replace("_", " "), "p50, ms": num(value)}
            for name, value in res.items()
            if name.endswith("_ms")
        )
    return out
