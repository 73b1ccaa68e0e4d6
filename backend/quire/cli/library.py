"""``quire ingest``, ``docs``, ``rm`` and ``worker``: what is in the library, and adding to it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.progress import BarColumn, Progress, TextColumn
from rich.table import Table

from quire.cli.common import (
    console,
    default_workers,
    err_console,
    error,
    fail,
    run_jobs,
    settings,
)
from quire.config import Settings
from quire.errors import QuireError
from quire.storage import documents
from quire.storage.db import Database
from quire.storage.migrate import open_database

if TYPE_CHECKING:
    from quire.web.fetch import Fetcher

LINK_VERBS = {
    "added": "queued",
    "updated": "changed: queued again",
    "unchanged": "unchanged, already in the library",
}
INTAKE_VERBS = {
    "queued": "queued",
    "duplicate": "already in the library",
    "updated": "changed: queued again",
    "requeued": "queued again",
}


def _expand(paths: tuple[Path, ...]) -> list[tuple[Path, bool]]:
    """Files to ingest; the flag says whether the user named the file (vs. found in a folder).

    Symlinked folders are not followed (no loops); a dangling link, a pipe or a socket in a
    folder is reported and left out."""
    out: list[tuple[Path, bool]] = []
    for p in paths:
        if p.is_dir():
            for f in sorted(p.rglob("*")):
                if any(part.startswith(".") for part in f.relative_to(p).parts):
                    continue
                if f.is_file():
                    out.append((f, False))
                elif not f.is_dir():
                    what = "a dangling link" if f.is_symlink() else "not a regular file"
                    err_console.print(f"[yellow]skipped[/yellow] {f}: {what}")
        else:
            out.append((p, True))
    return out


def _is_link(target: str) -> bool:
    """A target given as an address (any scheme: file:// and gopher:// are refused with the
    reason, not looked for on disk)."""
    return "://" in target and not Path(target).exists()


@click.command()
@click.argument("targets", nargs=-1)
@click.option(
    "--sources-of",
    "sources_of",
    type=click.IntRange(1),
    default=None,
    metavar="ID",
    help="Also add the web pages document ID (a Perplexity thread) cites.",
)
@click.option(
    "--wait", is_flag=True, help="Process the queue here; wait until every file is ready."
)
@click.option(
    "--workers",
    type=click.IntRange(1, 16),
    default=None,
    help="Worker processes for --wait (default: QUIRE_WORKERS, else one per core as memory "
    "allows).",
)
def add(targets: tuple[str, ...], sources_of: int | None, wait: bool, workers: int | None) -> None:
    """Add files, folders and links (PDF, EPUB, Office, page images, saved web pages,
    Perplexity markdown, md, txt; a link's page or file is fetched by Quire, safely:
    docs/sources/links.md)."""
    if not targets and sources_of is None:
        raise click.UsageError("name files, folders or links to add (or --sources-of ID)")
    missing = [t for t in targets if not _is_link(t) and not Path(t).exists()]
    if missing:
        raise click.BadParameter(f"no such file or folder: {', '.join(missing)}")
    # Not at import: `quire docs` and `quire rm` need neither the intake nor the fetcher.
    from quire.ingest.intake import add_file
    from quire.web.fetch import Fetcher
    from quire.web.links import add_link

    config = settings()
    db = open_database(config)
    links = [t for t in targets if _is_link(t)]
    files = _expand(tuple(Path(t) for t in targets if not _is_link(t)))
    # Keyed by job id: two files may share a name, and a duplicate shares its original's job.
    queued: dict[int, str] = {}
    failures = 0
    with Progress(
        TextColumn("[bold]adding"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TextColumn("{task.description}"),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task("", total=len(files) + len(links))
        for path, named in files:
            bar.update(task, description=path.name)
            try:
                intake = add_file(
                    db,
                    config.files_dir,
                    path,
                    path.name,
                    max_bytes=config.max_upload_bytes,
                    source_key=f"path:{path.resolve()}",
                )
            except OSError as exc:  # vanished or unreadable since the listing
                failures += 1
                error(f"{path}: {exc.strerror or exc}")
                bar.advance(task)
                continue
            except QuireError as exc:
                if named or exc.code != "unsupported_type":
                    failures += 1
                    error(f"{path}: {exc.message}")
                else:
                    err_console.print(f"[yellow]skipped[/yellow] {path}: {exc.message}")
                bar.advance(task)
                continue
            verb = INTAKE_VERBS[intake.status]
            console.print(f"[green]✓[/green] {path} → document {intake.document_id} ({verb})")
            if intake.job_id is not None:
                queued.setdefault(intake.job_id, path.name)
            bar.advance(task)
        with Fetcher(config) as fetcher:
            for url in links:
                bar.update(task, description=url)
                try:
                    added = add_link(db, config, url, fetcher=fetcher)
                except QuireError as exc:
                    failures += 1
                    error(_about(url, exc.message))
                else:
                    _print_link(url, added.status, added.intake.document_id)
                    if added.status != "unchanged" and added.intake.job_id is not None:
                        queued.setdefault(added.intake.job_id, url)
                bar.advance(task)
            if sources_of is not None:
                failures += _add_sources(db, config, sources_of, fetcher, bar, queued)
    if wait and queued:
        failures += run_jobs(config, db, queued, workers=workers or default_workers(config))
    elif queued:
        console.print(
            "Run [bold]quire worker[/bold] (or [bold]make run[/bold]) to process the queue."
        )
    db.dispose()
    sys.exit(1 if failures else 0)


#: ``quire ingest``, the name ``quire add`` had before it took links: the same command.
ingest = click.Command(
    "ingest",
    params=add.params,
    callback=add.callback,
    help=f"{add.help}\n\nThe same as `quire add` (its older name).",
)


def _about(url: str, message: str) -> str:
    """A link's error, the link named once (a fetch's message starts with it already)."""
    return message if message.startswith(url) else f"{url}: {message}"


def _print_link(url: str, status: str, document_id: int | None) -> None:
    verb = LINK_VERBS[status]
    console.print(f"[green]✓[/green] {url} → document {document_id} ({verb})", highlight=False)


def _add_sources(
    db: Database,
    config: Settings,
    document_id: int,
    fetcher: Fetcher,
    bar: Progress,
    queued: dict[int, str],
) -> int:
    """Add the pages ``document_id`` cites, one line per address; how many were refused."""
    from quire.web import sources

    try:
        cited = sources.cited_pages(db, document_id)
    except QuireError as exc:
        error(exc.message)
        return 1
    task = bar.add_task("", total=len(cited))
    outcomes = []
    for page in cited:
        bar.update(task, description=page.url)
        outcome = sources.add_source(db, config, page, fetcher)
        outcomes.append(outcome)
        if outcome.error is not None:
            error(f"[{page.n}] {_about(page.url, outcome.error.message)}")
        else:
            _print_link(f"[{page.n}] {page.url}", outcome.status, outcome.document_id)
            if outcome.job_id is not None:
                queued.setdefault(outcome.job_id, page.url)
        bar.advance(task)
    counts = sources.counts(outcomes)
    summary = ", ".join(f"{n} {status}" for status, n in counts.items() if n)
    console.print(f"document {document_id} cites {len(cited)} web pages: {summary}")
    refused = counts["refused"]
    return refused


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def docs(as_json: bool) -> None:
    """List the documents in the library."""
    db = open_database(settings(logs=False))
    with db.read() as conn:
        rows = documents.list_documents(conn)
    db.dispose()
    if as_json:
        click.echo(json.dumps(rows, default=str, indent=2))
        return
    table = Table("id", "kind", "title", "pages", "chunks", "status", "size")
    for r in rows:
        status = r["status"] if r["status"] != "failed" else f"failed: {r['error']}"
        table.add_row(
            str(r["id"]),
            r["kind"],
            (r["title"] or "")[:60],
            str(r["page_count"]),
            str(r["chunk_count"]),
            status,
            f"{r['byte_size'] / 1024:.0f} KB",
        )
    console.print(table)


@click.command()
@click.argument("document_id", type=int)
def rm(document_id: int) -> None:
    """Delete a document with its chunks, vectors and stored file."""
    db = open_database(settings(logs=False))
    try:
        documents.delete_document(db, document_id)
    except QuireError as exc:
        fail(exc)
    finally:
        db.dispose()
    console.print(f"deleted document {document_id}")


@click.command()
@click.option("--drain", is_flag=True, help="Exit when the queue is empty.")
def worker(drain: bool) -> None:
    """Run the ingest worker (several may run at once)."""
    from quire.ingest.worker import run_worker

    run_worker(settings(), drain=drain)
