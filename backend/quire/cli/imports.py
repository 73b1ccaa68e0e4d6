"""``quire import chatgpt|claude PATH``: thin, the work is in quire/ingest/chat_import.py.

Exit status: 0 done (also when nothing changed; conversations that could not be read are
listed, the others imported), 1 the export could not be read, or none of its conversations.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from quire.cli.common import console, err_console, error, fail, settings
from quire.embed import make_embedder
from quire.errors import QuireError
from quire.ingest.chat_export import NAMES, Source
from quire.ingest.chat_import import ImportSummary, import_export
from quire.storage.migrate import open_database


@click.group("import")
def import_group() -> None:
    """Import an assistant's chat history: one document per conversation, a page per turn."""


def _run(source: Source, path: Path, as_json: bool) -> None:
    config = settings()
    db = open_database(config)
    embedder = make_embedder(config)
    try:
        with Progress(
            TextColumn("{task.description:>10}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err_console,
            disable=as_json,
        ) as bar:
            tasks: dict[str, int] = {}

            def progress(stage: str, done: int, total: int) -> None:
                label = "stored" if stage == "store" else "embedded"
                if stage not in tasks:
                    tasks[stage] = int(bar.add_task(label, total=total or None))
                bar.update(tasks[stage], completed=done, total=total or None)  # type: ignore[arg-type]

            summary = import_export(db, config, embedder, path, source, progress=progress)
    except QuireError as exc:
        fail(exc)
    finally:
        embedder.close()
        db.dispose()
    _report(summary, as_json)
    sys.exit(1 if summary.skipped and summary.conversations == 0 else 0)


def _report(summary: ImportSummary, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(summary.as_dict(), indent=2, ensure_ascii=False))
        return
    for what, why in summary.skipped:
        err_console.print(f"[yellow]skipped[/yellow] {what}: {why}")
    console.print(
        f"{NAMES[summary.source]}: {summary.conversations} conversations "
        f"({summary.turns} turns, {summary.sources} web sources): "
        f"{summary.new} new, {summary.updated} updated, {summary.unchanged} unchanged, "
        f"{len(summary.skipped)} skipped"
    )
    if summary.project_docs:
        console.print(
            f"project documents: {summary.project_docs} ({summary.project_docs_changed} new "
            "or updated)"
        )
    if summary.conversations == 0 and not summary.skipped:
        error("the export holds no conversations")


_PATH = click.argument(
    "path", type=click.Path(exists=True, path_type=Path, dir_okay=True, file_okay=True)
)
_JSON = click.option("--json", "as_json", is_flag=True, help="Machine-readable summary.")


@import_group.command()
@_PATH
@_JSON
def chatgpt(path: Path, as_json: bool) -> None:
    """A ChatGPT export: the zip, its conversations.json (or shards), or the unzipped folder."""
    _run("chatgpt", path, as_json)


@import_group.command()
@_PATH
@_JSON
def claude(path: Path, as_json: bool) -> None:
    """A claude.ai export: the zip, conversations.json (projects.json beside it is read too),
    or the unzipped folder."""
    _run("claude", path, as_json)
