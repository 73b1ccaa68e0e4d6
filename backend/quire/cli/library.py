"""``quire ingest``, ``docs``, ``rm`` and ``worker``: what is in the library, and adding to it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

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
from quire.errors import QuireError
from quire.ingest.intake import add_file
from quire.ingest.worker import run_worker
from quire.storage import documents
from quire.storage.migrate import open_database

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


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
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
def ingest(paths: tuple[Path, ...], wait: bool, workers: int | None) -> None:
    """Add files and folders (PDF, EPUB, Office, page images, saved web pages, md, txt…)."""
    config = settings()
    db = open_database(config)
    files = _expand(paths)
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
        task = bar.add_task("", total=len(files))
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
    if wait and queued:
        failures += run_jobs(config, db, queued, workers=workers or default_workers(config))
    elif queued:
        console.print(
            "Run [bold]quire worker[/bold] (or [bold]make run[/bold]) to process the queue."
        )
    db.dispose()
    sys.exit(1 if failures else 0)


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
    run_worker(settings(), drain=drain)
