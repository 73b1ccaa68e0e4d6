"""Page-QA: the development set and the held-out set, searched and answered over real documents.

    python bench/pageqa.py                       # both sets, extractive answers
    python bench/pageqa.py --fake-llm            # and through map/filter/answer (see below)
    python bench/pageqa.py --set weight_window=0 # an idea switched off, for its effect

Each set runs ``quire eval --pageqa``'s code (quire.evaluation.pageqa) over a library cached
under ``--data`` (built on the first run: the real intake and worker). The development set is
../shared/data/qa/pageqa-dev.jsonl (tune on it); bench/pageqa/heldout.jsonl was written over
../shared/data/docs before any tuning and is only for checking; bench/pageqa/second.jsonl
likewise, written before the answer work of issue 33. ``--fake-llm`` answers through
the LLM path with tests/fakes' Ollama server (over HTTP) and a model that quotes the closest
sentence it is given and cites its number: no chat model can run here, so what that row
measures is Quire's citation bookkeeping on the LLM path, not a model's answers.

Prints a table and appends the run to bench/results/pageqa.json.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from common import DATA, DOCS, RESULTS_DIR, append_record, machine_info  # noqa: E402
from quire.config import Settings  # noqa: E402
from quire.evaluation.pageqa import run_pageqa  # noqa: E402

RESULTS = RESULTS_DIR / "pageqa.json"
SETS = {
    "dev": DATA / "qa" / "pageqa-dev.jsonl",
    "heldout": ROOT / "bench" / "pageqa" / "heldout.jsonl",
    "dev-cjk": DATA / "qa" / "pageqa-dev-cjk.jsonl",
    "heldout-cjk": ROOT / "bench" / "pageqa" / "heldout-cjk.jsonl",
    # Written by hand from the documents before the answers were tuned (issue 33), with 17
    # table or key-value answers; kept aside like the held-out set (bench/pageqa/README.md).
    "second": ROOT / "bench" / "pageqa" / "second.jsonl",
    # Office files, web pages and page images (issue 34), and ten Office questions of our own
    # written before the readers were tuned (bench/pageqa/README.md).
    "office": DATA / "qa" / "pageqa-dev-office.jsonl",
    "office-own": ROOT / "bench" / "pageqa" / "office-own.jsonl",
}
COLUMNS = [
    ("hit@1", "hit@1"),
    ("hit@5", "hit@5"),
    ("mrr@10", "MRR@10"),
    ("containment", "contains"),
    ("cited_precision", "cited prec."),
    ("first_citation", "1st cited"),
    ("mean_sources_cited", "sources"),
]


def overrides(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key not in Settings.model_fields:
            raise SystemExit(f"--set {pair!r}: not a setting=value (see README: settings)")
        out[key] = value
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    load = os.getloadavg()[0]
    base = overrides(args.set)
    results: dict[str, Any] = {}
    modes = ["extractive"] + (["llm-fake"] if args.fake_llm else [])
    with ExitStack() as stack:
        llm: dict[str, Any] = {}
        if args.fake_llm:
            from tests.fakes.ollama import FakeOllama
            from tests.fakes.rag_model import QuotingModel

            fake = stack.enter_context(FakeOllama(models=["llama3.2:latest"]))
            fake.responder = QuotingModel()
            llm = {"llm_backends": "ollama", "ollama_url": fake.url, "llm_retries": 0}
        for name in args.sets:
            for mode in modes:
                values = {**base, **(llm if mode == "llm-fake" else {})}
                settings = Settings(data_dir=args.data, **values)
                report = run_pageqa(settings, SETS[name], docs=DOCS, use_llm=mode == "llm-fake")
                results[f"{name}/{mode}"] = {
                    "overall": report["overall"],
                    "by_kind": report["by_kind"],
                    "by_qtype": report["by_qtype"],
                    "problems": report["problems"],
                    "library_cached": report["library"]["cached"],
                }
    info = machine_info(load) | {"load_avg_at_end": round(os.getloadavg()[0], 2)}
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": info,
        "args": {"sets": args.sets, "fake_llm": args.fake_llm, "set": base},
        "results": results,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", choices=sorted(SETS), default=["dev", "heldout"])
    parser.add_argument("--fake-llm", action="store_true", help="also answer through the LLM path")
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="a setting, e.g. rrf_k=30"
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=Path(tempfile.gettempdir()) / "quire-bench-pageqa",
        help="where the cached libraries live (kept between runs)",
    )
    parser.add_argument("--no-save", action="store_true", help="do not append to the results")
    args = parser.parse_args()
    record = run(args)
    head = f"{'set / answers':<22}{'n':>4}" + "".join(f"{label:>12}" for _, label in COLUMNS)
    print(head + f"{'search p50/p95 ms':>20}{'answer p50/p95 ms':>20}")
    for key, r in record["results"].items():
        o = r["overall"]
        cells = "".join(f"{o[k]:>12}" for k, _ in COLUMNS)
        s, a = o["search_ms"], o["answer_ms"]
        timing = f"{s['p50']:>11}/{s['p95']:<8}{a['p50']:>11}/{a['p95']:<8}"
        print(f"{key:<22}{o['questions']:>4}{cells}{timing}")
        for problem in r["problems"]:
            print(f"    ! {problem}")
    if not args.no_save:
        append_record(RESULTS, record)
        print(f"appended to {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
