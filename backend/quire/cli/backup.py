"""``quire backup DEST`` and ``quire restore SRC``: a consistent copy of the library, and back;
``quire compact``: the free space inside the library given back to the disk."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from quire.cli.common import console, err_console
from quire.config import Settings
from quire.errors import QuireError
from quire.storage.backup import Summary
from quire.storage.backup import backup as run_backup
from quire.storage.backup import compact as run_compact
from quire.storage.backup import restore as run_restore


def _print(verb: str, summary: Summary) -> None:
    console.print(
        f"[green]✓[/green] {verb} {summary.path}: {summary.documents} documents, "
        f"{summary.chunks} chunks, {summary.vectors} vectors, {summary.files} files, "
        f"{summary.bytes / 1e6:.1f} MB in {summary.seconds:.1f} s",
        highlight=False,
    )
    for missing in summary.missing_files:
        err_console.print(f"[yellow]missing original[/yellow] {missing}", highlight=False)
    if summary.moved_aside:
        console.print(f"the previous library was moved to {summary.moved_aside}", highlight=False)


@click.command()
@click.argument("dest", type=click.Path(path_type=Path))
def backup(dest: Path) -> None:
    """Copy the library (both databases and the originals) to DEST, while Quire runs."""
    try:
        summary = run_backup(Settings(), dest)
    except QuireError as exc:
        err_console.print(f"[red]✗[/red] {exc.message}", highlight=False)
        sys.exit(1)
    _print("backup written to", summary)
    sys.exit(1 if summary.missing_files else 0)


@click.command()
@click.argument("src", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Replace a library (it is moved aside, not deleted).")
def restore(src: Path, force: bool) -> None:
    """Restore the backup in SRC into $QUIRE_DATA_DIR (stop the API and workers first)."""
    try:
        summary = run_restore(Settings(), src, force=force)
    except QuireError as exc:
        err_console.print(f"[red]✗[/red] {exc.message}", highlight=False)
        sys.exit(1)
    _print("restored into", summary)


@click.command()
def compact() -> None:
    """Give the space freed inside the library back to the disk (stop the API and workers first)."""
    try:
        done = run_compact(Settings())
    except QuireError as exc:
        err_console.print(f"[red]✗[/red] {exc.message}", highlight=False)
        sys.exit(1)
    console.print(
        f"[green]✓[/green] compacted: {done.before / 1e6:.1f} MB → {done.after / 1e6:.1f} MB "
        f"in {done.seconds:.1f} s",
        highlight=False,
    )
