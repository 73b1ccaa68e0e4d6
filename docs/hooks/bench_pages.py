"""The benchmark pages: one per results file in bench/results/, with what the benchmark measures,
how to reproduce it, and its runs newest first (bench_renderers.py).

A results file without an entry in ``BENCHES`` fails the build: add its title, command,
description and renderer here, and its page to the nav in mkdocs.yml.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bench_renderers as r
from bench_format import Lines


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
        "1,000–1,500 characters a chunk; seeded random unit vectors, which cost the dense leg "
        "what real ones cost), against rank-bm25 (`BM25Okapi`, the baseline the design names) "
        "in the same run. Each query has 3 rare words, 2 frequent ones and an identifier; top "
        "50, no reranker, the query's embedding excluded. *Warm*: after 200 other queries, so "
        "frequent words' scores are cached; *fresh terms*: 5 warm-ups, then no term of the query "
        "cached. `--keep` caches the corpus for later runs; rank-bm25 is skipped when its index "
        "would not fit in memory.",
        r.render_retrieval,
    ),
    "postgres": Bench(
        "SQLite and PostgreSQL",
        ".venv/bin/python bench/postgres.py --sizes 100000 --queries 100 --keep /tmp/qbpg",
        "The search-at-scale corpus built into both backends and measured side by side: 5 "
        "warm-up queries, 100 with fresh terms, the same 100 again (warm), top 50, no reranker. "
        "PostgreSQL is the test wheels' PostgreSQL 18 with pgvector, started by the bench unless "
        "`--database-url` names a server. The SQLite library gets its frequent terms' entries "
        "before it is searched, as the idle worker gives a real library. Compare the backends "
        "within one run: the machine's speed varies between runs.",
        r.render_postgres,
    ),
    "peers": Bench(
        "Against other systems",
        ".venv/bin/python bench/peers.py --setup   # once: the peers' own venv\n"
        ".venv/bin/python bench/peers.py --sizes 100000 --keep /tmp/qb",
        "The chunks, texts and vectors of the search-at-scale bench, searched by Quire and by "
        "other designs, each in its own process (the peers' packages live in `.venv-peers`, from "
        "`bench/peers-requirements.txt`, never in Quire's venv), warmed with the same 5 "
        "queries, top 50, query vectors given. An audit hook checks that no child opens a "
        "network connection. Chroma 1.5 fails `collection.get()` above 32,766 documents (too "
        "many SQL variables), so Open WebUI's design as written cannot search a library this "
        "big; the bench reads in pages of 30,000 to measure it. faiss runs one OpenMP thread: "
        "with two, a query waited a whole time slice whenever the other core was busy.",
        r.render_peers,
    ),
    "eval-scifact": Bench(
        "Retrieval quality (SciFact)",
        ".venv/bin/quire eval --dataset ../shared/data/ir/scifact --split both --json \\\n"
        "    > bench/results/eval-scifact.json",
        "nDCG@10, Recall@100 and MRR@10 of BM25 alone, dense alone and hybrid on the BEIR "
        "SciFact dataset, local models only, no LLM; times per query at the evaluation's depth of "
        "200 hits. The first run ingests and embeds 5,183 abstracts (10–20 minutes on 2 cores) "
        "into a cache under `$QUIRE_DATA_DIR/eval/`; later runs take about 1.5 minutes. Hybrid + "
        "rerank runs when the cross-encoder is installed. `quire eval --json` records no date or "
        "machine.",
        r.render_eval_scifact,
    ),
    "pageqa": Bench(
        "Page-exact answers (page-QA)",
        ".venv/bin/python bench/pageqa.py --fake-llm",
        "Questions over long documents whose answer is on a known page: the development set "
        "(`../shared/data/qa/pageqa-dev.jsonl`, 47 questions, tuned on) and the held-out set "
        "(`bench/pageqa/heldout.jsonl`, 38 questions, written before any tuning and only "
        "checked). Search: page hit@1/@5 and MRR@10. Answers: *contains* (it states the fact), "
        "*cited precision* (the share of cited sources on a right page), *first citation* on a "
        "right page. `extractive` answers without an LLM; `llm-fake` runs the real LLM path "
        "against a fake model that quotes, which measures the citation bookkeeping, not a real "
        "model's writing. `--sets dev-cjk heldout-cjk` runs the Japanese, Chinese and Arabic "
        "sets; `--set KEY=VALUE` changes a setting for one run.",
        r.render_pageqa,
    ),
    "ingest": Bench(
        "Ingest",
        ".venv/bin/python bench/ingest.py            # make bench\n"
        ".venv/bin/python bench/ingest.py --throughput --configs local:2 local-sint8:2",
        "Every shared document and a generated 1,000-page PDF through the real pipeline (worker "
        "code, extraction child, SQLite, the local embedder on one thread) into a fresh data "
        "directory; *overhead* is everything but OCR and the embedder. `--throughput` instead "
        "runs `quire ingest --wait --workers N` over the six longest documents per "
        "configuration, then each model alone on the same chunk texts: the limit the pipeline "
        "is compared with.",
        r.render_ingest,
    ),
    "webpages": Bench(
        "Saved web pages: main text",
        ".venv/bin/python bench/webpages.py",
        "The main text of the saved pages of `../shared/data/docs/office/html` against an "
        "oracle made by hand from each page's source (the article element, minus what a reader "
        "skips inside it: [Saved web pages](../sources/web.md)). Recall: the share of the "
        "oracle's words an extractor keeps; precision: the share of its words that belong to "
        "the oracle (word multisets, a CJK character a word). `quire` is what Quire indexes; "
        "trafilatura and readability-lxml alone are measured beside it (trafilatura is not a "
        "dependency: `pip install trafilatura` into the venv to run it).",
        r.render_webpages,
    ),
    "searchable": Bench(
        "Searchable before embedded",
        ".venv/bin/python bench/searchable.py",
        "Seconds from intake to the first BM25 hit and to `ready` for one PDF (Think "
        "Complexity, 244 pages of which 13 need OCR) and a query from its second half.",
        r.render_searchable,
    ),
    "notes": Bench(
        "Notes: saved and found",
        ".venv/bin/python bench/notes.py --runs 10",
        "`POST /api/notes` through the app on a library holding one PDF: a note of a sentence, "
        "of a page, and at the 100 KB limit (embedded by the worker, not in the request), each "
        "searched for by its own word right after (three legs, no reranker). See "
        "[Notes](../using/notes.md#measured).",
        r.render_notes,
    ),
    "notes_list": Bench(
        "Notes: listed and exported",
        ".venv/bin/python bench/notes_list.py --notes 5000 --runs 5",
        "`GET /api/notes` through the app on a library of thousands of highlights (made through "
        "the storage layer): the first page, the last page, a search that finds the last note; "
        "and `GET /api/notes/export` of all of them in Quire's style and two CSL styles. See "
        "[Notes](../using/notes.md#measured).",
        r.render_notes_list,
    ),
    "embed": Bench(
        "Embedding",
        ".venv/bin/python bench/embed.py --optimized --static",
        "all-MiniLM-L6-v2 on SciFact abstracts: chunks per second of the packaged int8 model "
        "(`packaged`, `QUIRE_EMBEDDER=local`), a dynamically quantised rebuild (`optimized`, not "
        "shipped) and the per-row int8 rebuild (`static`, `QUIRE_EMBEDDER=local-sint8`), by "
        "threads, batch size and the cap on padded tokens per run; and how close their vectors "
        "are to the packaged model's.",
        r.render_embed,
    ),
    "rerank": Bench(
        "Reranking",
        ".venv/bin/python bench/rerank.py",
        "The cost of the cross-encoder per (question, passage) pair: a model of "
        "ms-marco-MiniLM-L-6-v2's exact shape with random weights (the real weights could not be "
        "downloaded on the machine that ran it), fp32 and int8, by threads and tokens per pair.",
        r.render_rerank,
    ),
    "chat": Bench(
        "Answers",
        ".venv/bin/python bench/chat.py",
        "8 questions × 2 rounds over an EPUB, two PDFs and a Perplexity thread, in-process "
        "through the chat engine, no reranker. `extractive`: no LLM (the whole answer arrives at "
        "once). `llm-fake`: a fake LLM that answers instantly over HTTP, so the times are "
        "Quire's own cost around a model; a real model adds its generation time.",
        r.render_chat,
    ),
    "load": Bench(
        "Load",
        ".venv/bin/python bench/load.py --clients 4 --pages 80 --duration 90",
        "The stack as `make run` starts it (API, worker, nginx) under concurrent clients (80 % "
        "search, 20 % extractive chat read to the end): an idle phase with one client, a busy "
        "phase with all clients and nothing ingesting, then the same clients while the worker "
        'ingests a generated PDF. Errors and "database is locked" are counted in the responses '
        "and both logs. The busy phase tells CPU queueing (clients on two cores) from the "
        "ingest's own cost.",
        r.render_load,
    ),
    "mcp": Bench(
        "MCP under load",
        ".venv/bin/python bench/mcp_load.py",
        "The stack as `make run` starts it, and MCP clients of the official SDK calling "
        "`search` through nginx with the token: one client idle, then many while the worker "
        "ingests a PDF.",
        r.render_mcp,
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
        "To reproduce:",
        "",
        "```sh",
        bench.reproduce,
        "```",
        "",
        f"Generated from `bench/results/{name}.json` when the site is built, newest run first. "
        "The machine is a shared 2-core box: read each run with the load beside it.",
        "",
        *bench.render(data),
    ]
    return "\n".join(lines).rstrip() + "\n"


def render_all(results_dir: Path) -> dict[str, str]:
    """``benchmarks/<name>.md`` → its page, for every results file."""
    pages = {}
    for path in sorted(results_dir.glob("*.json")):
        if path.stem not in BENCHES:
            raise ValueError(f"{path} has no page: add it to BENCHES in {__file__}")
        pages[f"benchmarks/{path.stem}.md"] = render_page(path.stem, json.loads(path.read_text()))
    return pages
