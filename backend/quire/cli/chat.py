"""``quire ask`` and ``quire repl``: the chat engine in the terminal.

The answer streams to stdout as the model writes it; stages, notices and the sources go to
stderr/after the answer, so ``quire ask "…" > answer.md`` keeps just the answer and its list
of sources.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
from click.decorators import FC
from rich.console import Console
from rich.markup import escape

from quire.cli.common import error, settings
from quire.cli.search import kind_option, language_option, mode_option, source_options
from quire.config import HydeMode
from quire.errors import QuireError
from quire.retrieval.options import HYDE_MODES, STRATEGIES, RetrievalOptions, Strategy
from quire.runtime import Runtime
from quire.storage.documents import list_documents
from quire.storage.records import Kind, Origin
from quire.storage.web_sources import describe
from quire.synthesis.answer import ChatRequest
from quire.synthesis.engine import ChatEngine
from quire.synthesis.events import (
    DoneEvent,
    ErrorEvent,
    RetrievalEvent,
    Source,
    SourcesEvent,
    StageEvent,
    StartEvent,
    TokenEvent,
    VerifyEvent,
)
from quire.synthesis.export import FORMATS, ExportFormat, load_answer, render
from quire.synthesis.parse import unescape_citations

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False)
REPL_HELP = """commands:
  /sources                      the sources of the last answer
  /mode precise|exhaustive|auto candidate pool (auto: planned per question)
  /hyde off|fusion|supplement   hypothetical-passage mode
  /docs                         list documents;  /docs 3 5  only these;  /docs all  no filter
  /llm on|off                   answer with the LLM or extractively
  /new                          start a new conversation
  /help, /quit"""


@dataclass
class Asking:
    """How questions are asked (the repl's commands change it between questions)."""

    options: RetrievalOptions = field(default_factory=RetrievalOptions)
    use_llm: bool = True

    def request(self, message: str, conversation_id: int | None) -> ChatRequest:
        return ChatRequest(
            message=message,
            conversation_id=conversation_id,
            options=self.options,
            use_llm=self.use_llm,
        )

    def set(self, **changes: Any) -> None:
        self.options = self.options.model_copy(update=changes)


@dataclass
class Turn:
    """What one question produced."""

    conversation_id: int | None = None
    sources: list[Source] = field(default_factory=list)
    done: DoneEvent | None = None
    error: ErrorEvent | None = None
    events: list[dict[str, Any]] = field(default_factory=list)


def source_line(s: Source) -> str:
    head = f" — {s.section}" if s.section else ""
    # A Perplexity passage's own web sources, under it.
    cited = "".join(f"\n    web {describe(w)}" for w in s.web_sources)
    if s.kind == "web" and s.origin_url:  # the live page, scrolled to the passage
        cited += f"\n    {s.origin_url}"
    return f"[{s.n}] {s.title} ({s.kind}, {s.place}){head}{cited}"


#: A link into the web app ("[Settings](/settings#s-answer)"): a terminal shows where it goes.
_APP_LINK = re.compile(r"\[([^\]\n]+)\]\((/[^)\s]*)\)")


def for_terminal(answer: str) -> str:
    """Answer text as a terminal shows it: a quote's own "µs\\[0]" (Markdown's escape) as
    written, and a link into the web app as its name, said to be there."""
    return _APP_LINK.sub(r"\1 (in the web app)", unescape_citations(answer))


async def run_one(
    engine: ChatEngine,
    request: ChatRequest,
    *,
    as_json: bool,
    stream: bool = True,
    sources: bool = True,
) -> Turn:
    """Ask one question, printing as it streams (unless not ``stream``), then its sources
    (unless not ``sources``); returns what the turn produced."""
    prepared = await asyncio.to_thread(engine.prepare, request)
    turn = Turn()
    streamed = False
    held = ""  # a token's last backslash, until the next shows whether it escapes a "[0]"
    async for event in engine.stream(prepared):
        if as_json:
            turn.events.append({"event": event.event, "data": event.model_dump(mode="json")})
        match event:
            case StartEvent():
                turn.conversation_id = event.conversation_id
                if not as_json:
                    err.print(f"[dim]answering with {escape(event.model or 'extractive (no LLM)')}")
                    for notice in event.notices:
                        err.print(f"[yellow]note[/yellow] {escape(notice)}")
            case RetrievalEvent() if not as_json:
                took = event.timings_ms.get("total", 0)
                err.print(f"[dim]{event.candidates} passages found in {took:.0f} ms[/dim]")
            case StageEvent() if not as_json:
                err.print(f"[dim]{event.stage} {event.done}/{event.total}[/dim]")
            case SourcesEvent():
                turn.sources = event.sources
            case TokenEvent() if not as_json and stream:
                text = held + event.text
                held = "\\" if text.endswith("\\") else ""
                sys.stdout.write(for_terminal(text[: len(text) - len(held)]))
                sys.stdout.flush()
                streamed = True
            case VerifyEvent() if not as_json and event.status != "ok":
                err.print(f"\n[yellow]verify[/yellow] missing: {escape(event.suggestion or '')}")
            case DoneEvent():
                turn.done = event
            case ErrorEvent():
                turn.error = event
    if as_json:
        return turn
    if streamed:
        sys.stdout.write(held + "\n")
    if turn.error is not None:
        error(turn.error.error.message)
        return turn
    cited = set(turn.done.citations if turn.done else ())
    if turn.sources and sources:
        out.print("\n[bold]Sources[/bold]")
        for s in turn.sources:
            out.print(escape(source_line(s)), style="" if s.n in cited else "dim")
    return turn


def chat_options(fn: FC) -> FC:
    """The options `ask` and `repl` share."""
    options: list[Callable[[FC], FC]] = [
        mode_option(),
        click.option("--hyde", type=click.Choice(HYDE_MODES), default=None),
        click.option(
            "--doc", "doc_ids", type=int, multiple=True, help="Only this document (repeat)."
        ),
        kind_option(),
        language_option(),
        source_options,
        click.option("--no-rerank", is_flag=True, help="Keep the fusion order."),
        click.option("--no-llm", is_flag=True, help="Answer extractively, without the LLM."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _asking(
    mode: Strategy | None,
    hyde: HydeMode | None,
    doc_ids: tuple[int, ...],
    kinds: tuple[Kind, ...],
    languages: tuple[str, ...],
    origins: tuple[Origin, ...],
    collections: tuple[str, ...],
    tags: tuple[str, ...],
    no_rerank: bool,
    no_llm: bool,
) -> Asking:
    options = RetrievalOptions(
        strategy=mode,
        hyde_mode=hyde,
        document_ids=doc_ids,
        kinds=kinds,
        languages=languages,
        origins=origins,
        collections=collections,
        tags=tags,
        rerank=not no_rerank,
    )
    return Asking(options, use_llm=not no_llm)


@click.command()
@click.argument("question")
@click.option("--json", "as_json", is_flag=True, help="All events as JSON, after the answer.")
@click.option(
    "--format",
    "export_format",
    type=click.Choice(FORMATS),
    default=None,
    help="Instead of the sources list: markdown (the whole answer with its references), "
    "bibtex or csl (the answer, then its cited documents).",
)
@chat_options
def ask(question: str, as_json: bool, export_format: ExportFormat | None, **flags: Any) -> None:
    """Answer a question from your documents, streamed, then list the sources."""
    asking = _asking(**flags)
    if as_json and export_format:
        error("--json and --format cannot be combined")
        sys.exit(2)
    exported: list[str] = []

    async def main() -> Turn:
        async with Runtime.open(settings()) as rt:
            turn = await run_one(
                rt.engine,
                asking.request(question, None),
                as_json=as_json,
                # The Markdown export holds the answer as stored: printed once, whole.
                stream=export_format != "markdown",
                sources=export_format is None,
            )
            if export_format and turn.done and turn.done.message_id is not None:
                with rt.db.read() as conn:
                    exported.append(render(load_answer(conn, turn.done.message_id), export_format))
            return turn

    try:
        turn = asyncio.run(main())
    except QuireError as exc:
        error(exc.message)
        sys.exit(1)
    if export_format and turn.error is None:
        if not exported:
            error("the answer was not stored, so it cannot be exported")
            sys.exit(1)
        click.echo(("" if export_format == "markdown" else "\n") + exported[0], nl=False)
    if as_json:
        result: dict[str, Any] = {
            "sources": [s.model_dump(mode="json") for s in turn.sources],
            "events": turn.events,
            "conversation_id": turn.conversation_id,
        }
        if turn.done:
            result["done"] = turn.done.model_dump(mode="json")
        if turn.error:
            result["error"] = turn.error.model_dump(mode="json")
        click.echo(json.dumps(result, indent=2, ensure_ascii=False))
    sys.exit(1 if turn.error else 0)


@click.command()
@chat_options
def repl(**flags: Any) -> None:
    """Ask questions interactively (history, /sources, /mode, /hyde, /docs; /help)."""
    asking = _asking(**flags)
    config = settings()
    history_file = config.data_dir / "repl_history"
    readline = _readline(history_file)
    conversation_id: int | None = None
    last_sources: list[Source] = []
    err.print("[bold]quire[/bold] — ask about your documents; /help for commands, /quit to leave")
    with asyncio.Runner() as runner:
        rt = Runtime.open(config)
        try:
            while True:
                try:
                    line = input("quire> ").strip()
                except (EOFError, KeyboardInterrupt):
                    err.print()
                    break
                if not line:
                    continue
                if readline is not None and not sys.stdin.isatty():
                    readline.add_history(line)  # input() records only what a terminal typed
                if line.startswith("/"):
                    keep_going, conversation_id = _command(
                        rt.engine, line, asking, last_sources, conversation_id
                    )
                    if not keep_going:
                        break
                    continue
                try:
                    turn = runner.run(
                        run_one(rt.engine, asking.request(line, conversation_id), as_json=False)
                    )
                except KeyboardInterrupt:
                    err.print("\n[yellow]stopped[/yellow]")
                    continue
                except QuireError as exc:
                    error(exc.message)
                    continue
                conversation_id = turn.conversation_id or conversation_id
                last_sources = turn.sources
        finally:
            runner.run(rt.aclose())
    if readline is not None:
        with contextlib.suppress(OSError):
            readline.write_history_file(str(history_file))
    sys.exit(0)


def _readline(history_file: Path) -> Any:
    try:
        import readline
    except ImportError:  # not on every platform; the loop works without it
        return None
    with contextlib.suppress(OSError):
        readline.read_history_file(str(history_file))
    readline.set_history_length(1000)
    return readline


def _command(
    engine: ChatEngine,
    line: str,
    asking: Asking,
    last_sources: list[Source],
    conversation_id: int | None,
) -> tuple[bool, int | None]:
    cmd, *args = line.split()
    if cmd in ("/quit", "/exit", "/q"):
        return False, conversation_id
    if cmd == "/help":
        err.print(REPL_HELP)
    elif cmd == "/sources":
        if not last_sources:
            err.print("no sources yet")
        for s in last_sources:
            out.print(escape(source_line(s)))
            out.print("    " + escape(s.quote[:300]), style="dim")
    elif cmd == "/mode" and args and args[0] in (*STRATEGIES, "auto"):
        asking.set(strategy=None if args[0] == "auto" else args[0])
        err.print(f"mode: {args[0]}")
    elif cmd == "/hyde" and args and args[0] in HYDE_MODES:
        asking.set(hyde_mode=args[0])
        err.print(f"hyde: {args[0]}")
    elif cmd == "/llm" and args and args[0] in ("on", "off"):
        asking.use_llm = args[0] == "on"
        err.print(f"llm: {args[0]}")
    elif cmd == "/docs":
        _docs(engine, args, asking)
    elif cmd == "/new":
        err.print("new conversation")
        return True, None
    else:
        err.print(f"unknown or incomplete command: {escape(line)}\n{REPL_HELP}")
    return True, conversation_id


def _docs(engine: ChatEngine, args: list[str], asking: Asking) -> None:
    if args and args[0] == "all":
        asking.set(document_ids=())
        err.print("searching all documents")
        return
    if args:
        try:
            ids = tuple(int(a) for a in args)
        except ValueError:
            err.print("usage: /docs [ID ...|all]")
            return
        with engine.db.read() as conn:
            known = {d["id"] for d in list_documents(conn)}
        unknown = [i for i in ids if i not in known]
        if unknown:
            error(f"no such document: {', '.join(map(str, unknown))}")
            return
        asking.set(document_ids=ids)
        err.print(f"searching only documents {', '.join(map(str, ids))}")
        return
    with engine.db.read() as conn:
        docs = list_documents(conn)
    chosen = set(asking.options.document_ids)
    for d in docs:
        mark = "*" if d["id"] in chosen else " "
        title = d["title"] or d["filename"]
        out.print(escape(f"{mark}{d['id']:>4}  {d['kind']:<10} {d['status']:<10} {title}"))
