"""``quire migrate-to-postgres``: move a SQLite library into PostgreSQL (docs/POSTGRES.md)."""

from __future__ import annotations

import sys

import click
from pydantic import SecretStr, ValidationError
from rich import progress as rp
from rich.table import Table

from quire.cli.common import console, error, fail, settings
from quire.errors import QuireError
from quire.storage.migrate import open_database
from quire.storage.transfer import copy_library


@click.command("migrate-to-postgres")
@click.argument("url")
def migrate_to_postgres(url: str) -> None:
    """Copy the SQLite library in $QUIRE_DATA_DIR into the empty PostgreSQL database at URL
    (postgresql+psycopg://user:password@host/db), vectors included, and check every count.
    Stop the API and workers first; then set QUIRE_DATABASE_URL=URL."""
    loaded = settings()
    source = loaded.model_copy(update={"database_url": None})
    if not source.db_path.exists():
        error(f"no SQLite library at {source.data_dir} (set QUIRE_DATA_DIR)")
        sys.exit(1)
    try:
        target = type(loaded).model_validate(
            {**loaded.model_dump(exclude={"database_url"}), "database_url": SecretStr(url)}
        )
    except ValidationError as exc:
        error(str(exc.errors()[0]["msg"]))
        sys.exit(2)
    src = open_database(source)
    try:
        dst = open_database(target)
    except Exception as exc:  # noqa: BLE001 - a wrong URL, a server down: say so, plainly
        src.dispose()
        error(f"cannot open the PostgreSQL database: {exc}")
        sys.exit(1)
    try:
        with rp.Progress(
            rp.TextColumn("{task.description:<14}"),
            rp.BarColumn(),
            rp.MofNCompleteColumn(),
            rp.TimeElapsedColumn(),
            console=console,
        ) as bars:
            tasks: dict[str, rp.TaskID] = {}

            def report(what: str, done: int, total: int) -> None:
                if what not in tasks:
                    tasks[what] = bars.add_task(what, total=total)
                bars.update(tasks[what], completed=done, total=total)

            result = copy_library(src, dst, report)
    except QuireError as exc:
        fail(exc)
    finally:
        src.dispose()
        dst.dispose()
    table = Table("rows", "SQLite", "PostgreSQL", "")
    for name, (a, b) in result.counts.items():
        table.add_row(name, str(a), str(b), "[green]✓[/green]" if a == b else "[red]✗[/red]")
    console.print(table)
    if not result.ok:
        error("the counts differ: keep using the SQLite library and report this")
        sys.exit(1)
    console.print(
        f"[green]✓[/green] copied in {result.seconds:.1f} s. Now set QUIRE_DATABASE_URL, and "
        f"QUIRE_ORIGINALS_DIR={source.files_dir} (or a copy of it on the shared store).",
        highlight=False,
    )
