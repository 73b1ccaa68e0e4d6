"""``quire ask`` and ``quire repl``: the chat pipeline in the terminal.

The answer streams to stdout as the model writes it; stages, notices and the sources go to
stderr/after the answer, so ``quire ask "…" > answer.md`` keeps just the answer and its list
of sources.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape

from quire.config import Settings
from quire.errors import QuireError
from quire.synthesis.pipeline import ChatEngine, ChatRequest

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False)
UNIT = {"pdf": "p.", "epub": "§", "perplexity": "turn"}
REPL_HELP = """commands:
  /sources                      the sources of the last answer
  /mode precise|exhaustive|auto candidate pool (auto: planned per question)
  /hyde off|fusion|supplement   hypothetical-passage mode
  /docs                         list documents;  /docs 3 5  only these;  /docs all  no filter
  /llm on|off                   answer with the LLM or extractively
  /new                          start a new conversation
  /help, /quit"""


@contextlib.contextmanager
def open_engine(settings: Settings) -> Iterator[ChatEngine]:
    """The chat engine with everything it needs, closed afterwards."""
    from quire.embed.base import make_embedder
    from quire.llm.router import make_router
    from quire.retrieval.rerank import load_reranker
    from quire.retrieval.search import Searcher
    from quire.storage.db import open_database

    db = open_database(settings)
    embedder = make_embedder(settings)
    searcher = Searcher(db, settings, embedder, load_reranker(settings))
    router = make_router(settings)
    try:
        yield ChatEngine(db, settings, searcher, router)
    finally:
        if router is not None:
            with contextlib.suppress(Exception):
                asyncio.run(router.aclose())
        searcher.close()
        embedder.close()
        db.dispose()


def source_line(s: dict[str, Any]) -> str:
    where = f"{UNIT.get(s['kind'], 'p.')} {s['page']}"
    head = f" — {s['heading_path']}" if s.get("heading_path") else ""
    return f"[{s['n']}] {s['title']} ({s['kind']}, {where}){head}"


async def run_one(engine: ChatEngine, request: ChatRequest, *, as_json: bool) -> dict[str, Any]:
    """Ask one question, printing as it streams; returns what the turn produced."""
    prepared = await asyncio.to_thread(engine.prepare, request)
    result: dict[str, Any] = {"sources": [], "events": []}
    streamed = False
    async for name, data in engine.stream(prepared):
        if as_json:
            result["events"].append({"event": name, "data": data})
        if name == "start":
            result["conversation_id"] = data["conversation_id"]
            if not as_json:
                mode = data["model"] or "extractive (no LLM)"
                err.print(f"[dim]answering with {escape(mode)}[/dim]")
                for notice in data["notices"]:
                    err.print(f"[yellow]note[/yellow] {escape(notice)}")
        elif name == "retrieval" and not as_json:
            t = data["timings_ms"].get("total", 0)
            err.print(f"[dim]{data['candidates']} passages found in {t:.0f} ms[/dim]")
        elif name == "stage" and not as_json:
            err.print(f"[dim]{data['stage']} {data['done']}/{data['total']}[/dim]")
        elif name == "sources":
            result["sources"] = data["sources"]
        elif name == "token" and not as_json:
            sys.stdout.write(data["text"])
            sys.stdout.flush()
            streamed = True
        elif name == "verify" and not as_json and data["status"] != "ok":
            err.print(f"\n[yellow]verify[/yellow] missing: {escape(data['suggestion'] or '')}")
        elif name == "done":
            result.update(done=data)
        elif name == "error":
            result.update(error=data)
    if as_json:
        return result
    if streamed:
        sys.stdout.write("\n")
    if "error" in result:
        err.print(f"[red]✗[/red] {escape(result['error']['message'])}")
        return result
    cited = set(result["done"]["citations"])
    if result["sources"]:
        out.print("\n[bold]Sources[/bold]")
        for s in result["sources"]:
            style = "" if s["n"] in cited else "dim"
            out.print(escape(source_line(s)), style=style)
    return result


def _request(options: dict[str, Any], message: str, conversation_id: int | None) -> ChatRequest:
    return ChatRequest(
        message=message,
        conversation_id=conversation_id,
        strategy=options.get("strategy"),
        hyde_mode=options.get("hyde_mode"),
        document_ids=tuple(options.get("document_ids", ())),
        kinds=tuple(options.get("kinds", ())),
        rerank=options.get("rerank", True),
        use_llm=options.get("use_llm", True),
    )


def ask(settings: Settings, question: str, options: dict[str, Any], as_json: bool) -> int:
    with open_engine(settings) as engine:
        try:
            result = asyncio.run(
                run_one(engine, _request(options, question, None), as_json=as_json)
            )
        except QuireError as exc:
            err.print(f"[red]✗[/red] {escape(exc.message)}")
            return 1
    if as_json:
        click.echo(json.dumps(result, default=str, indent=2, ensure_ascii=False))
    return 1 if "error" in result else 0


def repl(settings: Settings, options: dict[str, Any]) -> int:
    """An interactive loop with readline history (``<data_dir>/repl_history``)."""
    history_file = settings.data_dir / "repl_history"
    readline = _readline(history_file)
    conversation_id: int | None = None
    last_sources: list[dict[str, Any]] = []
    err.print("[bold]quire[/bold] — ask about your documents; /help for commands, /quit to leave")
    with open_engine(settings) as engine, asyncio.Runner() as runner:
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
                    engine, line, options, last_sources, conversation_id
                )
                if not keep_going:
                    break
                continue
            request = _request(options, line, conversation_id)
            try:
                result = runner.run(run_one(engine, request, as_json=False))
            except KeyboardInterrupt:
                err.print("\n[yellow]stopped[/yellow]")
                continue
            except QuireError as exc:
                err.print(f"[red]✗[/red] {escape(exc.message)}")
                continue
            conversation_id = result.get("conversation_id", conversation_id)
            last_sources = result["sources"]
    if readline is not None:
        with contextlib.suppress(OSError):
            readline.write_history_file(str(history_file))
    return 0


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
    options: dict[str, Any],
    last_sources: list[dict[str, Any]],
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
            out.print("    " + escape(s["quote"][:300]), style="dim")
    elif cmd == "/mode" and args and args[0] in ("precise", "exhaustive", "auto"):
        options["strategy"] = None if args[0] == "auto" else args[0]
        err.print(f"mode: {args[0]}")
    elif cmd == "/hyde" and args and args[0] in ("off", "fusion", "supplement"):
        options["hyde_mode"] = args[0]
        err.print(f"hyde: {args[0]}")
    elif cmd == "/llm" and args and args[0] in ("on", "off"):
        options["use_llm"] = args[0] == "on"
        err.print(f"llm: {args[0]}")
    elif cmd == "/docs":
        _docs(engine, args, options)
    elif cmd == "/new":
        err.print("new conversation")
        return True, None
    else:
        err.print(f"unknown or incomplete command: {escape(line)}\n{REPL_HELP}")
    return True, conversation_id


def _docs(engine: ChatEngine, args: list[str], options: dict[str, Any]) -> None:
    from quire.storage.documents import list_documents

    if args and args[0] == "all":
        options["document_ids"] = ()
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
            err.print(f"[red]✗[/red] no such document: {', '.join(map(str, unknown))}")
            return
        options["document_ids"] = ids
        err.print(f"searching only documents {', '.join(map(str, ids))}")
        return
    with engine.db.read() as conn:
        docs = list_documents(conn)
    chosen = set(options.get("document_ids", ()))
    for d in docs:
        mark = "*" if d["id"] in chosen else " "
        title = d["title"] or d["filename"]
        out.print(escape(f"{mark}{d['id']:>4}  {d['kind']:<10} {d['status']:<10} {title}"))


def options_from(
    strategy: str | None,
    hyde: str | None,
    doc_ids: tuple[int, ...],
    kinds: tuple[str, ...],
    no_rerank: bool,
    no_llm: bool,
) -> dict[str, Any]:
    return {
        "strategy": strategy,
        "hyde_mode": hyde,
        "document_ids": doc_ids,
        "kinds": kinds,
        "rerank": not no_rerank,
        "use_llm": not no_llm,
    }
