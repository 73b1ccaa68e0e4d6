"""``quire eval``: retrieval quality on a BEIR dataset, as tables (or JSON)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from quire.cli.common import console, err_console, fail, settings
from quire.errors import QuireError
from quire.evaluation.beir import STAGES, EvalProgress, run_eval
from quire.evaluation.pageqa import run_pageqa


@click.command("eval")
@click.option(
    "--dataset",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="BEIR-layout directory: corpus.jsonl, queries.jsonl, qrels/test.tsv [, train.tsv].",
)
@click.option(
    "--pageqa",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A page-QA JSONL set (shared/data/qa/README.md): page hit@k, answers, citations.",
)
@click.option(
    "--docs",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="--pageqa: the folder its files are relative to (default: ../docs beside the set).",
)
@click.option("--llm", is_flag=True, help="--pageqa: answer with the configured LLM.")
@click.option("--split", type=click.Choice(["test", "train", "both"]), default="test")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--max-queries", type=click.IntRange(min=1), default=None, help="First N per split.")
@click.option("--variants", default="bm25,dense,hybrid,rerank", help="Comma-separated subset.")
def evaluate(
    dataset: Path | None,
    pageqa: Path | None,
    docs: Path | None,
    llm: bool,
    split: str,
    as_json: bool,
    max_queries: int | None,
    variants: str,
) -> None:
    """Measure retrieval on a BEIR dataset (nDCG@10, Recall@100, MRR@10, latency per stage), or
    page-exact answers on a page-QA set (page hit@1/@5, MRR, containment, citations)."""
    if (dataset is None) == (pageqa is None):
        raise click.UsageError("give one of --dataset or --pageqa")
    config = settings()
    try:
        with rich_progress(err_console) as progress:
            if pageqa is not None:
                report = run_pageqa(
                    config, pageqa, docs=docs, use_llm=llm, progress=progress, limit=max_queries
                )
            else:
                assert dataset is not None
                report = run_eval(
                    config,
                    dataset,
                    splits=["test", "train"] if split == "both" else [split],
                    variants=[v.strip() for v in variants.split(",") if v.strip()],
                    max_queries=max_queries,
                    progress=progress,
                )
    except QuireError as exc:
        fail(exc)
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    if pageqa is not None:
        for problem in report["problems"]:
            err_console.print(f"[yellow]skipped[/yellow] {escape(problem)}")
        console.print(pageqa_table(report))
        return
    for table in tables(report):
        console.print(table)


PAGEQA_COLUMNS = (
    ("hit@1", "hit@1"),
    ("hit@5", "hit@5"),
    ("MRR@10", "mrr@10"),
    ("contains", "containment"),
    ("cited prec.", "cited_precision"),
    ("1st cite", "first_citation"),
    ("cited recall", "cited_recall"),
)


def pageqa_table(report: dict[str, Any]) -> Table:
    """One row per group (all, each kind, each question type), the page-QA measures."""
    table = Table(
        title=f"{Path(report['questions_file']).name} · {report['mode']} answers",
        caption="search: top 10 over the whole library; ms p50/p95",
    )
    table.add_column("group", no_wrap=True)
    table.add_column("n", justify="right")
    for label, _ in PAGEQA_COLUMNS:
        table.add_column(label, justify="right", no_wrap=True)
    table.add_column("search ms", justify="right", no_wrap=True)
    table.add_column("answer ms", justify="right", no_wrap=True)
    rows = [("all", report["overall"])]
    rows += [(k, v) for k, v in report["by_kind"].items()]
    rows += [(k, v) for k, v in report["by_qtype"].items()]
    for name, row in rows:
        if not row.get("questions"):
            continue
        table.add_row(
            name,
            str(row["questions"]),
            *(f"{row[key]:.2f}" for _, key in PAGEQA_COLUMNS),
            f"{row['search_ms']['p50']:.0f}/{row['search_ms']['p95']:.0f}",
            f"{row['answer_ms']['p50']:.0f}/{row['answer_ms']['p95']:.0f}",
        )
    return table


def tables(report: dict[str, Any]) -> list[Table]:
    """One rich table per split: the metrics and p50/p95 ms of every stage, per variant."""
    out = []
    settings = report["settings"]
    for split, body in report["splits"].items():
        table = Table(
            title=f"{report['dataset']} · {split} · {body['queries']} queries",
            caption=f"{report['index']['embedder']}, {settings['fusion']} k={settings['rrf_k']} "
            f"weights bm25/dense/exact {settings['weight_bm25']}/{settings['weight_dense']}/"
            f"{settings['weight_exact']}; latency in ms, p50/p95; total includes hydrating "
            f"{settings['depth']} hits; rerank: {settings['reranker']}",
        )
        table.add_column("variant", no_wrap=True)
        for metric in ("nDCG@10", "R@100", "MRR@10"):
            table.add_column(metric, justify="right", no_wrap=True)
        for stage in STAGES:
            table.add_column(stage, justify="right", no_wrap=True)
        for variant, row in body["variants"].items():
            lat = row["latency_ms"]
            table.add_row(
                variant,
                f"{row['ndcg@10']:.3f}",
                f"{row['recall@100']:.3f}",
                f"{row['mrr@10']:.3f}",
                *(f"{lat[s]['p50']:.0f}/{lat[s]['p95']:.0f}" if s in lat else "–" for s in STAGES),
            )
        out.append(table)
    return out


@contextmanager
def rich_progress(console: Console) -> Iterator[EvalProgress]:
    """A progress callback drawing one rich bar per task (ingest stages, split · variant)."""
    labels = {"store": "ingest: store", "embed": "ingest: embed", "questions": "questions"}
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    ) as bar:
        ids: dict[str, TaskID] = {}

        def update(task: str, done: int, total: int) -> None:
            if task not in ids:
                ids[task] = bar.add_task(labels.get(task, task), total=total or None)
            bar.update(ids[task], completed=done, total=total or None)

        yield update
