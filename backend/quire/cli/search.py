"""``quire search``: hybrid search with highlighted passages, per-leg ranks and timings."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import click
from click.decorators import FC
from rich.markup import escape

from quire.cli.common import console, err_console, fail, settings
from quire.config import LANGUAGE_TAG, canonical_tag
from quire.errors import QuireError
from quire.retrieval.options import STRATEGIES, SearchOptions, Strategy
from quire.runtime import Runtime
from quire.storage.records import KINDS, ORIGINS, Kind, Origin, place, section
from quire.storage.web_sources import describe


def kind_option() -> Callable[[FC], FC]:
    return click.option(
        "--kind",
        "kinds",
        multiple=True,
        type=click.Choice(KINDS),
        help="Only documents of this kind (repeat).",
    )


def language_option() -> Callable[[FC], FC]:
    return click.option(
        "--language",
        "languages",
        multiple=True,
        metavar="TAG",
        callback=_language_tags,
        help="Only documents in this language, e.g. en, ja, zh-Hant (repeat).",
    )


def _language_tags(
    ctx: click.Context, param: click.Parameter, tags: tuple[str, ...]
) -> tuple[str, ...]:
    bad = [t for t in tags if not re.fullmatch(LANGUAGE_TAG, t)]
    if bad:
        raise click.BadParameter(f"{bad[0]!r}: give a language tag such as en, ja or zh-Hant")
    return tuple(canonical_tag(t) for t in tags)


def source_options(fn: FC) -> FC:
    """``--origin``, ``--collection`` and ``--tag``: only documents from some sources, or in
    some Zotero collections or with some Zotero tags (each repeatable)."""
    options: list[Callable[[FC], FC]] = [
        click.option(
            "--origin",
            "origins",
            multiple=True,
            type=click.Choice(ORIGINS),
            help="Only documents from this source (repeat).",
        ),
        click.option(
            "--collection",
            "collections",
            multiple=True,
            metavar="PATH",
            help='Only documents in this Zotero collection, e.g. "Thesis/Methods" (repeat).',
        ),
        click.option(
            "--tag", "tags", multiple=True, help="Only documents with this Zotero tag (repeat)."
        ),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def mode_option() -> Callable[[FC], FC]:
    return click.option(
        "--mode", type=click.Choice(STRATEGIES), default=None, help="Candidate pool."
    )


@click.command()
@click.argument("query")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--limit", type=click.IntRange(1, 200), default=10, show_default=True)
@click.option("--doc", "doc_ids", type=int, multiple=True, help="Only this document (repeat).")
@kind_option()
@language_option()
@source_options
@mode_option()
@click.option("--no-rerank", is_flag=True, help="Keep the fusion order.")
def search(
    query: str,
    as_json: bool,
    limit: int,
    doc_ids: tuple[int, ...],
    kinds: tuple[Kind, ...],
    languages: tuple[str, ...],
    origins: tuple[Origin, ...],
    collections: tuple[str, ...],
    tags: tuple[str, ...],
    mode: Strategy | None,
    no_rerank: bool,
) -> None:
    """Hybrid search (BM25 + dense + exact keywords) with highlighted passages."""
    options = SearchOptions(
        strategy=mode,
        document_ids=doc_ids,
        kinds=kinds,
        languages=languages,
        origins=origins,
        collections=collections,
        tags=tags,
        rerank=not no_rerank,
        limit=limit,
    )
    with Runtime.open(settings(logs=False), rerank=not no_rerank, llm=False) as rt:
        try:
            result = rt.searcher.search(query, options)
        except QuireError as exc:
            fail(exc)
    if as_json:
        click.echo(json.dumps(result.to_dict(), default=str, indent=2))
        return
    for notice in result.notices:
        err_console.print(f"[yellow]note[/yellow] {escape(notice)}")
    for n, hit in enumerate(result.hits, start=1):
        where = place(hit.kind, hit.page, hit.page_label, hit.heading_path)
        shown = section(hit.kind, hit.heading_path)
        head = f" — {shown}" if shown else ""
        legs = " ".join(f"{leg}#{rank}" for leg, rank in hit.ranks.items())
        rr = f" rerank {hit.rerank:.2f}" if hit.rerank is not None else ""
        console.print(f"[bold]{n}. {escape(hit.title)}[/bold] ({hit.kind}, {where}){escape(head)}")
        console.print(f"   [dim]{legs}{rr}[/dim]")
        for web in hit.web_sources:
            console.print(f"   web {escape(describe(web))}")
        console.print("   " + marked(hit.text, hit.highlights, 400))
    stages = ", ".join(f"{k} {v:.0f} ms" for k, v in result.timings_ms.items())
    console.print(f"[dim]{len(result.hits)} hits · {stages}[/dim]")


def marked(passage: str, spans: list[tuple[int, int]], width: int) -> str:
    """The passage around its first match, matches in bold, escaped for rich markup."""
    start = max(0, spans[0][0] - width // 3) if spans else 0
    end = min(len(passage), start + width)
    out, pos = [], start
    for s, e in spans:
        if e <= start or s >= end:
            continue
        s, e = max(s, start), min(e, end)
        out.append(escape(passage[pos:s]))
        out.append(f"[bold yellow]{escape(passage[s:e])}[/bold yellow]")
        pos = e
    out.append(escape(passage[pos:end]))
    text = "".join(out).replace("\n", " ")
    return ("…" if start else "") + text + ("…" if end < len(passage) else "")
