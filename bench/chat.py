"""Chat benchmark: what the answer pipeline costs around the model.

    .venv/bin/python bench/chat.py                  # ~2 min on a fresh cache
    .venv/bin/python bench/chat.py --keep /tmp/quire-chat-bench --rounds 3
    .venv/bin/python bench/chat.py --chunks 50000   # the library padded to 50k chunks

Over the shared documents (Alice EPUB, the DMCA summary and the NAACL paper PDFs, the
Perplexity thread), each question is answered in-process through ``ChatEngine`` twice:
- **extractive** (no LLM): end to end, with the sentence scoring;
- **llm-fake**: the LLM is the fake Ollama of the test suite over real HTTP, answering
  instantly (tokens without delay), so the times are Quire's own overhead around a model:
  plan → retrieval → map (batches of ten) → filter → answer → verify.
Reported per mode: p50/p95 of time to the first answer token and of the whole answer, and the
median of each stage. No reranker model is installed here: the first hits are ordered by their
best sentence (synthesis/order.py), as a search that asks to rerank is without one.
Also reported: the size of each kind of prompt the LLM path sent (Quire's own token estimate,
``llm.base.estimate_tokens``, which is what ``num_ctx`` is sized from) and the ``num_ctx`` the
requests carried, for the model recommendations of docs/getting-started/ollama.md.
``--chunks N`` pads the library with synthetic documents (bench/retrieval.py's seeded Zipf
text, random unit vectors under the real embedder's name) until it holds N chunks, so that the
answer times are those of a library that size: every leg searches all of it, and the real
documents still hold the answers.
Results are appended to bench/results/chat.json.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from common import DOCS, RESULTS_DIR, append_record, build_library, machine_info  # noqa: E402
from quire.config import Settings  # noqa: E402
from quire.retrieval.options import RetrievalOptions  # noqa: E402
from quire.runtime import Runtime  # noqa: E402
from quire.synthesis.answer import ChatRequest  # noqa: E402
from quire.synthesis.engine import ChatEngine  # noqa: E402
from quire.synthesis.events import DoneEvent, ErrorEvent, TokenEvent  # noqa: E402

RESULTS = RESULTS_DIR / "chat.json"
FILES = [
    DOCS / "epub" / "alice-epub3.epub",
    DOCS / "pdf" / "dmca-summary.pdf",
    DOCS / "pdf" / "naacl06-shinyama.pdf",
    DOCS / "perplexity" / "pnw-states-multiturn.md",
]
QUESTIONS = [
    "What did the White Rabbit take out of its waistcoat-pocket?",
    "Why did Alice grow so large after drinking from the bottle?",
    "What are the conditions for the safe harbor for service providers?",
    "How does the DMCA treat circumvention of technological protection measures?",
    "What is preemptive information extraction?",
    "How are relations clustered in the NAACL paper?",
    "Which Pacific Northwest state has the largest population?",
    "What is the capital of Oregon?",
]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


async def answer(engine: ChatEngine, question: str, use_llm: bool) -> dict[str, Any]:
    # Each question as if asked first: the searcher's embedder remembers the vectors of
    # the texts it embedded (embed/cached.py), and the questions repeat over rounds.
    engine.searcher.embedder.forget()  # type: ignore[union-attr]
    t0 = time.perf_counter()
    request = ChatRequest(message=question, use_llm=use_llm, options=RetrievalOptions())
    prepared = await asyncio.to_thread(engine.prepare, request)
    first_token = None
    done: DoneEvent | None = None
    async for event in engine.stream(prepared):
        if isinstance(event, TokenEvent) and first_token is None:
            first_token = (time.perf_counter() - t0) * 1000
        elif isinstance(event, DoneEvent):
            done = event
        elif isinstance(event, ErrorEvent):
            raise RuntimeError(event.error.message)
    assert done is not None
    return {
        "first_token_ms": first_token,
        "total_ms": (time.perf_counter() - t0) * 1000,
        "stages": done.timings_ms,
        "mode": done.mode,
        "sources": len(done.citations),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    from tests.fakes.ollama import FakeOllama
    from tests.fakes.rag_model import RagModel

    data = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="quire-chat-"))
    results: dict[str, Any] = {}
    with FakeOllama(models=["llama3.2:latest"]) as fake:
        fake.responder = RagModel()
        settings = Settings(
            data_dir=data, llm_backends="ollama", ollama_url=fake.url, llm_retries=0
        )
        t0 = time.perf_counter()
        build_library(settings, FILES)
        results["ingest_s"] = round(time.perf_counter() - t0, 1)
        results["chunks"] = pad_library(settings, args.chunks)

        async def main() -> None:
            # No cross-encoder is installed here: reranking orders hits by best sentence.
            async with Runtime.open(settings, rerank=False) as rt:
                for mode, use_llm in (("extractive", False), ("llm-fake", True)):
                    await answer(rt.engine, QUESTIONS[0], use_llm)  # warm-up (mirror, caches)
                    runs = [
                        await answer(rt.engine, q, use_llm)
                        for _ in range(args.rounds)
                        for q in QUESTIONS
                    ]
                    assert all(r["mode"] == mode.split("-")[0] for r in runs), runs
                    stages = sorted({k for r in runs for k in r["stages"]})
                    results[mode] = {
                        "n": len(runs),
                        "first_token_p50": _pct([r["first_token_ms"] for r in runs], 0.5),
                        "first_token_p95": _pct([r["first_token_ms"] for r in runs], 0.95),
                        "total_p50": _pct([r["total_ms"] for r in runs], 0.5),
                        "total_p95": _pct([r["total_ms"] for r in runs], 0.95),
                        "stage_p50": {
                            k: round(statistics.median(r["stages"].get(k, 0.0) for r in runs), 1)
                            for k in stages
                        },
                        "cited_sources_mean": round(statistics.mean(r["sources"] for r in runs), 2),
                    }

        asyncio.run(main())
        results["llm_calls"] = len(fake.requests_to("/api/chat"))
        results["prompts"] = prompt_sizes([r.body for r in fake.requests_to("/api/chat")])
    return results


def pad_library(settings: Settings, target: int) -> int:
    """Add synthetic documents until the library holds ``target`` chunks (bench/retrieval.py's
    corpus and writer); returns the chunk count."""
    import numpy as np

    from quire.embed import make_embedder
    from quire.storage import vectors
    from quire.storage.migrate import open_database
    from retrieval import CHUNKS_PER_DOC, Corpus, unit_vectors, write_documents

    db = open_database(settings)
    embedder = make_embedder(settings)
    model = embedder.name
    embedder.close()
    with db.read() as conn:
        have = conn.exec_driver_sql("SELECT count(*) FROM page_chunks").scalar_one()
    rng = np.random.default_rng(1)
    corpus = Corpus(seed=1)
    first_doc = 1
    while have + CHUNKS_PER_DOC <= target:
        n = min(5_000, (target - have) // CHUNKS_PER_DOC * CHUNKS_PER_DOC)
        _, ids = write_documents(db, first_doc, corpus.texts(rng, n))
        with db.write() as conn:
            vectors.add(conn, model, ids, unit_vectors(rng, len(ids)))
        first_doc += n // CHUNKS_PER_DOC
        have += len(ids)
    db.dispose()
    return int(have)


def prompt_sizes(bodies: list[dict[str, Any]]) -> dict[str, Any]:
    """Per kind of prompt: calls, estimated tokens (p50, max) and the largest num_ctx sent;
    for answer prompts also the sources they listed."""
    from tests.fakes.rag_model import listed_facts, purpose_of

    from quire.llm.base import estimate_tokens

    by: dict[str, list[dict[str, Any]]] = {}
    for body in bodies:
        by.setdefault(purpose_of(body["messages"][-1]["content"]), []).append(body)
    out: dict[str, Any] = {}
    for purpose, calls in sorted(by.items()):
        tokens = [estimate_tokens(b["messages"]) for b in calls]
        out[purpose] = {
            "calls": len(calls),
            "tokens_p50": round(statistics.median(tokens)),
            "tokens_max": max(tokens),
            "num_ctx_max": max(b["options"]["num_ctx"] for b in calls),
        }
        if purpose == "answer":
            listed = [len(listed_facts(b["messages"][-1]["content"])) for b in calls]
            out[purpose]["sources_max"] = max(listed)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", help="data directory to reuse between runs")
    parser.add_argument("--rounds", type=int, default=2, help="passes over the questions")
    parser.add_argument("--chunks", type=int, default=0, help="pad the library to N chunks")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    results = run(args)
    print(f"library: {results['chunks']:,} chunks")
    print(f"{'mode':<12}{'n':>4}{'first token p50/p95 ms':>26}{'total p50/p95 ms':>22}")
    for mode in ("extractive", "llm-fake"):
        r = results[mode]
        first = f"{r['first_token_p50']:.0f} / {r['first_token_p95']:.0f}"
        total = f"{r['total_p50']:.0f} / {r['total_p95']:.0f}"
        print(f"{mode:<12}{r['n']:>4}{first:>26}{total:>22}")
        stages = ", ".join(f"{k} {v:.0f}" for k, v in r["stage_p50"].items())
        print(f"{'':<12}stage p50 ms: {stages}")
    print(f"\n{'prompt':<10}{'calls':>6}{'tokens p50':>12}{'tokens max':>12}{'num_ctx max':>13}")
    for purpose, p in results["prompts"].items():
        print(
            f"{purpose:<10}{p['calls']:>6}{p['tokens_p50']:>12}{p['tokens_max']:>12}"
            f"{p['num_ctx_max']:>13}"
        )
    entry = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine_info(load),
        "args": vars(args),
        "results": results,
    }
    append_record(RESULTS, entry, indent=1)
    print(f"appended to {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
