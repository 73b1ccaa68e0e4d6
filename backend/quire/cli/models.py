"""``quire models status|pull``: what is installed, and fetching the reranker from the Hugging
Face Hub (converted to int8 ONNX at pull time when the repo publishes no int8 file)."""

from __future__ import annotations

import json
import sys

import click
from rich.markup import escape
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from quire.cli.common import console, err_console, fail
from quire.cli.common import settings as load_settings
from quire.errors import QuireError
from quire.models.hub import SOURCE_TEXT, ModelState, inspect, known, model_spec
from quire.models.pull import Step, pull


@click.group("models")
def models_group() -> None:
    """The models Quire downloads: see what is installed, pull the reranker."""


@models_group.command("status")
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status(name: str | None, as_json: bool) -> None:
    """Show what is installed; exit 1 when a model shown is missing."""
    settings = load_settings(logs=False)
    try:
        specs = [model_spec(name, settings)] if name else list(known(settings).values())
    except QuireError as e:
        fail(e)
    states = [inspect(spec) for spec in specs]
    if as_json:
        console.print_json(json.dumps([_as_dict(s) for s in states]))
    else:
        # Lines, not a table: paths and commands stay whole, for copy and paste.
        for s in states:
            mark = "[green]✓[/green]" if s.present else "[yellow]✗[/yellow]"
            console.print(f"{mark} {s.spec.name}: {s.spec.repo}@{s.spec.revision}", highlight=False)
            console.print(f"  {s.spec.target}", highlight=False)
            console.print(f"  {escape(_detail(s))}", highlight=False)
    sys.exit(0 if all(s.present for s in states) else 1)


@models_group.command("pull")
@click.argument("name", default="reranker")
@click.option("--force", is_flag=True, help="Replace the installed model even if up to date.")
def pull_command(name: str, force: bool) -> None:
    """Fetch a model (default: the reranker) from the Hugging Face Hub, check it, install it.

    HF_ENDPOINT picks a mirror, HF_HUB_OFFLINE=1 uses only the local cache, HF_TOKEN a private
    repo; the repo and revision are QUIRE_RERANK_REPO and QUIRE_RERANK_REVISION.
    """
    # No log handler of our own: INFO lines (ours and the converters') would tear the live
    # progress bars, while Python's last-resort handler prints warnings through rich.
    settings = load_settings(logs=False)
    try:
        spec = model_spec(name, settings)
        err_console.print(f"pulling {spec.name}: {spec.repo}@{spec.revision} → {spec.target}")
        with _Bars() as bars:
            result = pull(spec, force=force, report=bars.report)
    except QuireError as e:
        fail(e)
    for note in result.notes:
        err_console.print(f"[yellow]![/yellow] {escape(note)}", highlight=False)
    m = result.manifest
    where = f"{spec.target / m.model_file}"
    if result.up_to_date:
        console.print(f"[green]✓[/green] {spec.name} is up to date: {m.repo}@{m.commit[:10]}")
        console.print(f"  {where}", highlight=False)
        return
    size = sum(m.files.values()) / 1e6
    console.print(
        f"[green]✓[/green] {spec.name} installed: {m.repo}@{m.commit[:10]}, "
        f"{SOURCE_TEXT[m.source]} ({size:.1f} MB), loaded and checked on a test pair"
    )
    console.print(f"  {where}", highlight=False)
    console.print("  search uses it from the next start of `quire serve` (or `make run`)")


class _Bars:
    """One rich progress bar per stage reported by ``pull`` (bytes for downloads)."""

    def __init__(self) -> None:
        self.progress = Progress(
            TextColumn("{task.description}", style="bold"),
            BarColumn(),
            _Bytes(),
            TimeElapsedColumn(),
            console=err_console,
        )
        self.tasks: dict[str, TaskID] = {}

    def __enter__(self) -> _Bars:
        return self  # started by the first step, so a pull that fails at once draws nothing

    def __exit__(self, *exc: object) -> None:
        if self.tasks:
            self.progress.stop()

    def report(self, step: Step) -> None:
        task = self.tasks.get(step.label)
        if not self.tasks:
            self.progress.start()
        if task is None:
            task = self.progress.add_task(step.label, total=step.total, bytes=step.total)
            self.tasks[step.label] = task
        if step.done:
            total = step.total if step.total is not None else 1.0
            self.progress.update(task, total=total, completed=total)
        else:
            self.progress.update(task, total=step.total, completed=step.completed)


class _Bytes(DownloadColumn):
    """Bytes for a download; nothing for a conversion (it has no size)."""

    def render(self, task: Task) -> Text:
        return super().render(task) if task.fields.get("bytes") else Text("")


def _detail(s: ModelState) -> str:
    if not s.present:
        return f"not installed: run `quire models pull {s.spec.name}`"
    assert s.model_file is not None
    size = f"{s.size / 1e6:.1f} MB"
    m = s.manifest
    if m is None:
        return f"{s.model_file.name}, {size}, installed by hand"
    text = f"{s.model_file.name}, {size}, {SOURCE_TEXT[m.source]}, commit {m.commit[:10]}"
    if s.outdated:
        text += f"; pulled from {m.repo}: `quire models pull {s.spec.name}` fetches {s.spec.repo}"
    return text


def _as_dict(s: ModelState) -> dict[str, object]:
    m = s.manifest
    return {
        "name": s.spec.name,
        "repo": s.spec.repo,
        "revision": s.spec.revision,
        "target": str(s.spec.target),
        "present": s.present,
        "model_file": str(s.model_file) if s.model_file else None,
        "bytes": s.size,
        "manifest": m.model_dump(mode="json") if m else None,
    }
