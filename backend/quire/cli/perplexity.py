"""``quire perplexity login|sync|import|status``: thin, the work is in quire/perplexity/.

Exit status: 0 done, 1 failed (some threads or files failed, the site unavailable), 3 a login
is needed (none saved, expired, or the session looks logged out).
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from quire.cli.common import console, err_console, error, fail, run_jobs, settings
from quire.errors import QuireError
from quire.sources.perplexity import browser
from quire.sources.perplexity.checkpoint import auth_path, exports_dir
from quire.sources.perplexity.errors import LoginRequired
from quire.sources.perplexity.importer import import_folder
from quire.sources.perplexity.status import status_report
from quire.sources.perplexity.sync import SyncCounts, run_sync
from quire.storage.migrate import open_database

EXIT_LOGIN = 3


def _fail(exc: QuireError) -> NoReturn:
    fail(exc, EXIT_LOGIN if isinstance(exc, LoginRequired) else 1)


@click.group("perplexity")
def perplexity_group() -> None:
    """Sync your Perplexity.ai threads into the library (login once, then sync)."""


@perplexity_group.command()
@click.option(
    "--headless",
    is_flag=True,
    help="No window (for sites without a bot check; perplexity.ai needs the window).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=None,
    help="Seconds to wait for the login (default QUIRE_PERPLEXITY_LOGIN_TIMEOUT_S).",
)
def login(headless: bool, timeout: float | None) -> None:
    """Open Chromium on Perplexity, wait until you have logged in, save the login."""
    config = settings()
    wait = timeout or config.perplexity_login_timeout_s
    console.print(
        f"Log in to {config.perplexity_url} in the browser window; waiting up to {wait:.0f} s."
    )
    try:
        session = browser.login(config, headless=headless, timeout_s=wait)
    except QuireError as exc:
        _fail(exc)
    user = session.get("user")
    who = (user.get("email") or user.get("name")) if isinstance(user, dict) else None
    path = auth_path(config)
    console.print(f"[green]✓[/green] logged in{f' as {who}' if who else ''}; saved to {path}")


@perplexity_group.command()
@click.option("--headed", is_flag=True, help="Show the browser (if the headless one is blocked).")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Only the newest N.")
@click.option(
    "--wait/--no-wait",
    default=True,
    show_default=True,
    help="Ingest the exports here, or leave the jobs to a running `quire worker`.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def sync(headed: bool, limit: int | None, wait: bool, as_json: bool) -> None:
    """Export new and changed threads to markdown and ingest them (resumes if interrupted)."""
    config = settings()
    db = open_database(config)
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[counts]}"),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    ) as bar:
        task = bar.add_task("listing", total=None, counts="")

        def on_progress(counts: SyncCounts, total: int, current: str) -> None:
            bar.update(
                task,
                description=(current or "syncing")[:40],
                completed=counts.visited,
                total=total or None,
                counts=_counts_line(counts),
            )

        try:
            report = run_sync(config, db, headless=not headed, limit=limit, on_progress=on_progress)
        except QuireError as exc:
            db.dispose()
            _fail(exc)
    c = report.counts
    failures = c.failed
    if report.job_ids and wait:
        failures += run_jobs(config, db, {j: f"job {j}" for j in report.job_ids})
    db.dispose()
    if as_json:
        click.echo(json.dumps(asdict(report), indent=2))
    else:
        for e in report.errors:
            error(f"{e['title']} ({e['slug']}): {e['error']}")
        resumed = " (resumed an interrupted sync)" if report.resumed else ""
        console.print(
            f"[green]✓[/green] {_counts_line(c)} in {report.seconds:.1f} s{resumed}; "
            f"exports in {exports_dir(config)}"
        )
        if report.job_ids and not wait:
            console.print("Run [bold]quire worker[/bold] to ingest them.")
    sys.exit(1 if failures else 0)


def _counts_line(c: Any) -> str:
    text = (
        f"listed {c.listed} · changed {c.changed} · exported {c.exported} · "
        f"ingested {c.ingested} · failed {c.failed}"
    )
    if c.resumed:
        text += f" · resumed {c.resumed}"
    if c.deleted_upstream:
        text += f" · deleted upstream (kept) {c.deleted_upstream}"
    return text


@perplexity_group.command("import")
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--wait/--no-wait",
    default=True,
    show_default=True,
    help="Ingest here, or leave the jobs to a running `quire worker`.",
)
def import_(folder: Path, wait: bool) -> None:
    """Add a folder of Perplexity markdown exports (either layout); no login needed."""
    config = settings()
    db = open_database(config)
    report = import_folder(config, db, folder)
    for path, intake in report.intakes:
        console.print(
            f"[green]✓[/green] {path.name} → document {intake.document_id} ({intake.status})"
        )
    for path, why in report.skipped:
        err_console.print(f"[yellow]skipped[/yellow] {path}: {why}")
    for path, why in report.failed:
        error(f"{path}: {why}")
    failures = len(report.failed)
    if report.job_ids and wait:
        failures += run_jobs(config, db, {j: f"job {j}" for j in report.job_ids})
    elif report.job_ids:
        console.print("Run [bold]quire worker[/bold] to ingest them.")
    db.dispose()
    if not report.intakes and not report.failed:
        error(f"no Perplexity exports in {folder}")
        sys.exit(1)
    sys.exit(1 if failures else 0)


@perplexity_group.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def status(as_json: bool) -> None:
    """The last sync, a running one, and the saved login."""
    report = status_report(settings())
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    login = report["login"]
    state = (
        "none saved"
        if not login["saved"]
        else {True: "valid", False: "not valid"}.get(login["valid"], "not checked")
    )
    console.print(f"login: {state}" + (f" ({login['user']})" if login["user"] else ""))
    console.print(
        f"threads: {report['threads']['synced']} synced, "
        f"{report['threads']['deleted_upstream']} deleted upstream (kept)"
    )
    last = report["last_run"]
    if last:
        counts = last["counts"]
        console.print(
            f"last run: {last['finished_at']} {last['outcome']}"
            + (f": {last['message']}" if last["message"] else "")
        )
        console.print("  " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    if report["running"]:
        console.print("[bold]a sync is running[/bold]")
