"""``quire import chatgpt|claude|zotero PATH``: thin, the work is in quire/ingest/chat_import.py
and quire/ingest/zotero.py.

Exit status: 0 done (also when nothing changed; conversations or attachments that could not be
read are listed, the others imported), 1 the export or library could not be read, none of its
conversations could, or (``--wait``) a queued file failed to ingest.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from quire.cli.common import console, err_console, error, fail, run_jobs, settings
from quire.embed import make_embedder
from quire.errors import QuireError
from quire.formats.chat_export import NAMES, Source
from quire.sources.chat_import import ImportSummary, import_export
from quire.sources.zotero.importer import ZoteroSummary, import_zotero
from quire.storage.migrate import open_database


@click.group("import")
def import_group() -> None:
    """Import an assistant's chat history (one document per conversation, a page per turn) or a
    Zotero library (its PDF and EPUB attachments, with the items' metadata)."""


def _bar(as_json: bool) -> Progress:
    """The import's progress bars (on stderr; none with --json)."""
    return Progress(
        TextColumn("{task.description:>10}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        disable=as_json,
    )


def _run(source: Source, path: Path, as_json: bool) -> None:
    config = settings()
    db = open_database(config)
    embedder = make_embedder(config)
    try:
        with _bar(as_json) as bar:
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


def _json_or_skipped(summary: ImportSummary | ZoteroSummary, as_json: bool) -> bool:
    """Print the summary as JSON (True: nothing more to print), or the skipped entries."""
    if as_json:
        click.echo(json.dumps(summary.as_dict(), indent=2, ensure_ascii=False))
        return True
    for what, why in summary.skipped:
        err_console.print(f"[yellow]skipped[/yellow] {what}: {why}")
    return False


def _report(summary: ImportSummary, as_json: bool) -> None:
    if _json_or_skipped(summary, as_json):
        return
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


@import_group.command()
@_PATH
@click.option(
    "--base-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Zotero's base directory, for linked files stored relative to it.",
)
@click.option("--wait", is_flag=True, help="Process the queued files here; wait until ready.")
@_JSON
def zotero(path: Path, base_dir: Path | None, wait: bool, as_json: bool) -> None:
    """A Zotero library: its data directory (zotero.sqlite, read from a copy, and storage/), or
    a Better BibTeX JSON, BibTeX/BibLaTeX (with file fields) or CSL JSON export. Run it again
    to bring the library up to date: only new and changed items are read."""
    config = settings()
    db = open_database(config)
    try:
        with _bar(as_json) as bar:
            task = bar.add_task("attachments", total=None)

            def progress(done: int, total: int, _label: str) -> None:
                bar.update(task, completed=done, total=total)

            summary = import_zotero(db, config, path, base_dir=base_dir, progress=progress)
    except QuireError as exc:
        db.dispose()
        fail(exc)
    failures = run_jobs(config, db, summary.jobs) if wait and summary.jobs else 0
    db.dispose()
    _report_zotero(summary, as_json, waited=wait)
    sys.exit(1 if failures else 0)


def _report_zotero(summary: ZoteroSummary, as_json: bool, *, waited: bool) -> None:
    if _json_or_skipped(summary, as_json):
        return
    console.print(
        f"Zotero ({summary.format}) {summary.location}: {summary.items} items, "
        f"{summary.attachments} attachments: {summary.new} new, {summary.updated} updated, "
        f"{summary.metadata} with new metadata, {summary.unchanged} unchanged, "
        f"{summary.removed} removed, {len(summary.skipped)} skipped"
    )
    if summary.note:
        console.print(summary.note)
    if summary.jobs and not waited:
        console.print(
            "Run [bold]quire worker[/bold] (or [bold]make run[/bold]) to process the queue."
        )
