"""``quire models list|use|status|pull``: the language model servers on this machine and their
chat models (with the one recommended for its memory), choosing the model that writes answers,
and pulling models: a chat model into Ollama, or the reranker from the Hugging Face Hub
(converted to int8 ONNX at pull time when the repo publishes no int8 file)."""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import asdict

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
from quire.config import Settings
from quire.errors import InputError, QuireError
from quire.llm.choice import clear_choice, read_choice
from quire.llm.discover import INSTALL_OLLAMA, choose, find_servers, pull_target
from quire.llm.pull import Tally, check_name, pull_ollama
from quire.llm.recommend import memory_bytes, recommend
from quire.models.hub import SOURCE_TEXT, ModelState, inspect, known, model_spec
from quire.models.pull import Step, pull


@click.group("models")
def models_group() -> None:
    """Models: find a chat model server, pull and choose its model; pull the reranker."""


@models_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_command(as_json: bool) -> None:
    """The language model servers found, their chat models, the recommended one; exit 1 when
    no server answers."""
    settings = load_settings(logs=False)
    servers = asyncio.run(find_servers(settings))
    found = next((s for s in servers if s.ok), None)
    pick = recommend(memory_bytes(), found.models if found else (), found.url if found else None)
    chosen = read_choice(settings.data_dir)
    if as_json:
        console.print_json(
            json.dumps(
                {
                    "servers": [asdict(s) for s in servers],
                    "recommendation": vars(pick),
                    "choice": chosen.model_dump() if chosen else None,
                }
            )
        )
        sys.exit(0 if found else 1)
    for server in servers:
        kind = "Ollama" if server.backend == "ollama" else "OpenAI-compatible server"
        if not server.ok:
            console.print(f"[yellow]✗[/yellow] {kind} at {server.url}: {server.error}")
            continue
        version = f" {server.version}" if server.version else ""
        console.print(f"[green]✓[/green] {kind}{version} at {server.url}", highlight=False)
        for m in server.models:
            mark = "*" if chosen and chosen.url == server.url and chosen.model == m.name else " "
            facts = ", ".join(
                x for x in (m.parameter_size, m.quantization, _size(m.size)) if x is not None
            )
            console.print(f"  {mark} {m.name}" + (f"  ({facts})" if facts else ""), highlight=False)
        if not server.models:
            console.print("    no chat model yet", highlight=False)
        if server.embedding_only:
            left = ", ".join(server.embedding_only)
            console.print(f"    embedding only, left out: {left}", highlight=False)
    if found is None:
        console.print("No language model server is running. Install Ollama, then start it:")
        for system, command in INSTALL_OLLAMA.items():
            console.print(f"  {system}: {command}", highlight=False)
        console.print("  then: ollama serve", highlight=False)
    state = "installed" if pick.installed else f"not installed: quire models pull {pick.name}"
    console.print(f"Recommended: {pick.name} ({state})", highlight=False)
    console.print(f"  {pick.reason}", highlight=False)
    if chosen:
        console.print(f"In use: {chosen.model} at {chosen.url} (quire models use)", highlight=False)
    sys.exit(0 if found else 1)


@models_group.command("use")
@click.argument("name", required=False)
@click.option("--url", help="The server that has it (default: the first found).")
@click.option("--reset", is_flag=True, help="Forget the choice: the configured model answers.")
def use_command(name: str | None, url: str | None, reset: bool) -> None:
    """Answer with chat model NAME from the next question on, here and in the running service
    (no restart): kept in <data_dir>/llm.json."""
    settings = load_settings(logs=False)
    if reset:
        forgot = clear_choice(settings.data_dir)
        console.print("The configured model answers again." if forgot else "Nothing was chosen.")
        return
    if not name:
        fail(InputError("name a model (quire models list shows them), or --reset"))
    try:
        choice = asyncio.run(choose(settings, name, url))
    except QuireError as e:
        fail(e)
    console.print(
        f"[green]✓[/green] answers are written by {choice.model} at {choice.url} from the next "
        "question on (the running service too)"
    )


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
@click.option("--url", help="The Ollama to pull a chat model into (default: the first found).")
def pull_command(name: str, force: bool, url: str | None) -> None:
    """Pull a model: `reranker` (the default) from the Hugging Face Hub, checked and installed;
    any other NAME is a chat model pulled into Ollama (e.g. llama3.2:3b).

    HF_ENDPOINT picks a mirror, HF_HUB_OFFLINE=1 uses only the local cache, HF_TOKEN a private
    repo; the repo and revision are QUIRE_RERANK_REPO and QUIRE_RERANK_REVISION.
    """
    # No log handler of our own: INFO lines (ours and the converters') would tear the live
    # progress bars, while Python's last-resort handler prints warnings through rich.
    settings = load_settings(logs=False)
    if name not in known(settings):
        _pull_chat_model(settings, name, url)
        return
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
    console.print(
        "  a running `quire serve` reranks with it after a restart, or Load reranker in Settings"
    )


def _pull_chat_model(settings: Settings, name: str, url: str | None) -> None:
    """``quire models pull NAME``: into the first Ollama found, with one bar in bytes."""
    try:
        name = check_name(name)
        server = asyncio.run(pull_target(settings, url))
        err_console.print(f"pulling {name} into Ollama at {server.url}", highlight=False)
        with _Bars() as bars:
            asyncio.run(_pull_steps(server.url, name, bars))
    except QuireError as e:
        fail(e)
    console.print(f"[green]✓[/green] {name} is installed in Ollama at {server.url}")
    console.print(f"  answer with it: quire models use {name}", highlight=False)


async def _pull_steps(url: str, name: str, bars: _Bars) -> None:
    tally = Tally()
    async for step in pull_ollama(url, name):
        completed, total = tally.add(step)
        if total:
            bars.report(Step(name, completed=completed, total=total, done=step.done))


def _size(size: int | None) -> str | None:
    return f"{size / 1e9:.1f} GB" if size else None


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
