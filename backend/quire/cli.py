"""The ``quire`` command. Thin: parse, call the modules, print."""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from quire import __version__
from quire.cli_backup import backup, restore
from quire.cli_perplexity import perplexity_group
from quire.config import Settings
from quire.errors import QuireError

console = Console()
err_console = Console(stderr=True)


def _settings() -> Settings:
    return Settings()


def _setup_logging(settings: Settings) -> None:
    logging.basicConfig(
        level=settings.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    # Alembic announces every plugin at INFO on each start.
    logging.getLogger("alembic").setLevel(logging.WARNING)


@click.group()
@click.version_option(__version__, prog_name="quire")
def main() -> None:
    """Quire: a self-hosted research memory. Data directory: $QUIRE_DATA_DIR (default ./data)."""


def _expand(paths: tuple[Path, ...]) -> list[tuple[Path, bool]]:
    """Files to ingest; the flag says whether the user named the file (vs. found in a folder)."""
    out: list[tuple[Path, bool]] = []
    for p in paths:
        if p.is_dir():
            out.extend(
                (f, False)
                for f in sorted(p.rglob("*"))
                if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts)
            )
        else:
            out.append((p, True))
    return out


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--wait", is_flag=True, help="Process the queue here; wait until every file is ready."
)
def ingest(paths: tuple[Path, ...], wait: bool) -> None:
    """Add files and folders (PDF, EPUB, Perplexity markdown, md, txt) to the library."""
    from quire.storage import documents
    from quire.storage.db import open_database

    settings = _settings()
    _setup_logging(settings)
    db = open_database(settings)
    files = _expand(paths)
    queued: list[tuple[str, int]] = []
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
                intake = documents.add_file(
                    db,
                    settings.files_dir,
                    path,
                    path.name,
                    max_bytes=settings.max_upload_bytes,
                    source_key=f"path:{path.resolve()}",
                )
            except QuireError as exc:
                if named or exc.code != "unsupported_type":
                    failures += 1
                    err_console.print(f"[red]✗[/red] {path}: {exc.message}")
                else:
                    err_console.print(f"[yellow]skipped[/yellow] {path}: {exc.message}")
                bar.advance(task)
                continue
            verb = {
                "queued": "queued",
                "duplicate": "already in the library",
                "updated": "changed: queued again",
                "requeued": "queued again",
            }[intake.status]
            console.print(f"[green]✓[/green] {path} → document {intake.document_id} ({verb})")
            if intake.job_id is not None:
                queued.append((path.name, intake.job_id))
            bar.advance(task)
    if wait and queued:
        failures += _wait_for(settings, db, queued)
    elif queued:
        console.print(
            "Run [bold]quire worker[/bold] (or [bold]make run[/bold]) to process the queue."
        )
    db.dispose()
    sys.exit(1 if failures else 0)


def _wait_for(settings: Settings, db: Any, queued: list[tuple[str, int]]) -> int:
    """Run a worker in this process and show each job's stage and progress until all end."""
    from quire.ingest.worker import Worker
    from quire.storage import jobs

    worker = Worker(settings, db=db)
    thread = threading.Thread(target=worker.run, kwargs={"drain": False}, daemon=True)
    thread.start()
    failures = 0
    # Keyed by job id: two files may share a name, and a duplicate shares its original's job.
    pending = {job_id: name for name, job_id in reversed(queued)}
    with Progress(
        TextColumn("{task.fields[name]}", style="bold"),
        TextColumn("{task.fields[stage]:>8}"),
        BarColumn(),
        TextColumn("{task.percentage:>3.0f}%"),
        TimeElapsedColumn(),
        console=console,
    ) as bar:
        tasks: dict[int, TaskID] = {
            job_id: bar.add_task("", total=1.0, name=name[:40], stage="queued")
            for job_id, name in pending.items()
        }
        try:
            while pending:
                with db.read() as conn:
                    states = {jid: jobs.get(conn, jid) for jid in pending}
                for jid, job in states.items():
                    if job is None:  # its document was deleted meanwhile
                        del pending[jid]
                        continue
                    bar.update(tasks[jid], completed=job.progress, stage=job.stage)
                    if job.status in ("done", "failed"):
                        name = pending.pop(jid)
                        if job.status == "failed":
                            failures += 1
                            bar.update(tasks[jid], stage="failed")
                            err_console.print(f"[red]✗[/red] {name}: {job.error}")
                time.sleep(0.2)
        finally:
            worker.stop()
            thread.join(timeout=30)
    return failures


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def docs(as_json: bool) -> None:
    """List the documents in the library."""
    from quire.storage import documents
    from quire.storage.db import open_database

    db = open_database(_settings())
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


@main.command()
@click.argument("document_id", type=int)
def rm(document_id: int) -> None:
    """Delete a document with its chunks, vectors and stored file."""
    from quire.storage import documents
    from quire.storage.db import open_database

    db = open_database(_settings())
    try:
        documents.delete_document(db, document_id)
    except QuireError as exc:
        err_console.print(f"[red]✗[/red] {exc.message}")
        sys.exit(1)
    finally:
        db.dispose()
    console.print(f"deleted document {document_id}")


@main.command()
@click.option("--drain", is_flag=True, help="Exit when the queue is empty.")
def worker(drain: bool) -> None:
    """Run the ingest worker (several may run at once)."""
    from quire.ingest.worker import run_worker

    settings = _settings()
    _setup_logging(settings)
    run_worker(settings, drain=drain)


@main.command()
@click.option("--host", default=None, help="Bind address (default QUIRE_HOST, 127.0.0.1).")
@click.option("--port", default=None, type=int, help="Port (default QUIRE_PORT, 8000).")
def serve(host: str | None, port: int | None) -> None:
    """Run the API server."""
    import uvicorn

    from quire.api.auth import BindRefused, check_bind
    from quire.app import create_app

    settings = _settings()
    _setup_logging(settings)
    host = host or settings.host
    try:
        check_bind(host, settings)
    except BindRefused as exc:
        click.echo(f"quire serve: {exc}", err=True)
        sys.exit(2)
    uvicorn.run(
        create_app(settings),
        host=host,
        port=port or settings.port,
        log_level=settings.log_level.lower(),
        timeout_graceful_shutdown=5,
    )


@main.command()
@click.argument("query")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--limit", type=click.IntRange(1, 200), default=10, show_default=True)
@click.option("--doc", "doc_ids", type=int, multiple=True, help="Only this document (repeat).")
@click.option(
    "--kind",
    "kinds",
    multiple=True,
    type=click.Choice(["pdf", "epub", "perplexity", "markdown", "text"]),
    help="Only documents of this kind (repeat).",
)
@click.option("--mode", type=click.Choice(["precise", "exhaustive"]), default=None)
@click.option("--no-rerank", is_flag=True, help="Keep the fusion order.")
def search(
    query: str,
    as_json: bool,
    limit: int,
    doc_ids: tuple[int, ...],
    kinds: tuple[str, ...],
    mode: str | None,
    no_rerank: bool,
) -> None:
    """Hybrid search (BM25 + dense + exact keywords) with highlighted passages."""
    from quire.embed.base import make_embedder
    from quire.retrieval.rerank import load_reranker
    from quire.retrieval.search import Searcher, SearchOptions
    from quire.storage.db import open_database

    settings = _settings()
    db = open_database(settings)
    embedder = make_embedder(settings)
    searcher = Searcher(db, settings, embedder, None if no_rerank else load_reranker(settings))
    try:
        result = searcher.search(
            query,
            SearchOptions(
                strategy=mode,  # type: ignore[arg-type]
                document_ids=doc_ids,
                kinds=kinds,
                rerank=not no_rerank,
                limit=limit,
            ),
        )
    except QuireError as exc:
        err_console.print(f"[red]✗[/red] {exc.message}")
        sys.exit(1)
    finally:
        searcher.close()
        embedder.close()
        db.dispose()
    if as_json:
        click.echo(json.dumps(result.to_dict(), default=str, indent=2))
        return
    for notice in result.notices:
        err_console.print(f"[yellow]note[/yellow] {notice}")
    for n, hit in enumerate(result.hits, start=1):
        where = f"p. {hit.page}" if hit.kind == "pdf" else f"§{hit.page}"
        head = f" — {hit.heading_path}" if hit.heading_path else ""
        legs = " ".join(f"{leg}#{rank}" for leg, rank in hit.ranks.items())
        rr = f" rerank {hit.rerank:.2f}" if hit.rerank is not None else ""
        console.print(f"[bold]{n}. {hit.title}[/bold] ({hit.kind}, {where}){head}")
        console.print(f"   [dim]{legs}{rr}[/dim]")
        console.print("   " + _marked(hit.text, hit.highlights, 400))
    stages = ", ".join(f"{k} {v:.0f} ms" for k, v in result.timings_ms.items())
    console.print(f"[dim]{len(result.hits)} hits · {stages}[/dim]")


_CHAT_OPTIONS = [
    click.option("--mode", type=click.Choice(["precise", "exhaustive"]), default=None),
    click.option("--hyde", type=click.Choice(["off", "fusion", "supplement"]), default=None),
    click.option("--doc", "doc_ids", type=int, multiple=True, help="Only this document (repeat)."),
    click.option(
        "--kind",
        "kinds",
        type=click.Choice(["pdf", "epub", "perplexity", "markdown", "text"]),
        multiple=True,
        help="Only documents of this kind (repeat).",
    ),
    click.option("--no-rerank", is_flag=True, help="Keep the fusion order."),
    click.option("--no-llm", is_flag=True, help="Answer extractively, without the LLM."),
]


def _chat_options(fn: Any) -> Any:
    for option in reversed(_CHAT_OPTIONS):
        fn = option(fn)
    return fn


@main.command()
@click.argument("question")
@click.option("--json", "as_json", is_flag=True, help="All events as JSON, after the answer.")
@_chat_options
def ask(
    question: str,
    as_json: bool,
    mode: str | None,
    hyde: str | None,
    doc_ids: tuple[int, ...],
    kinds: tuple[str, ...],
    no_rerank: bool,
    no_llm: bool,
) -> None:
    """Answer a question from your documents, streamed, then list the sources."""
    from quire import cli_chat

    settings, options = _chat_setup(mode, hyde, doc_ids, kinds, no_rerank, no_llm)
    sys.exit(cli_chat.ask(settings, question, options, as_json))


@main.command()
@_chat_options
def repl(
    mode: str | None,
    hyde: str | None,
    doc_ids: tuple[int, ...],
    kinds: tuple[str, ...],
    no_rerank: bool,
    no_llm: bool,
) -> None:
    """Ask questions interactively (history, /sources, /mode, /hyde, /docs; /help)."""
    from quire import cli_chat

    settings, options = _chat_setup(mode, hyde, doc_ids, kinds, no_rerank, no_llm)
    sys.exit(cli_chat.repl(settings, options))


def _chat_setup(*flags: Any) -> tuple[Settings, dict[str, Any]]:
    """Settings, logging and the per-question options of `ask` and `repl`."""
    from quire import cli_chat

    settings = _settings()
    _setup_logging(settings)
    return settings, cli_chat.options_from(*flags)


def _marked(passage: str, spans: list[tuple[int, int]], width: int) -> str:
    """The passage around its first match, matches in bold, escaped for rich markup."""
    from rich.markup import escape

    start = max(0, spans[0][0] - width // 3) if spans else 0
    end = min(len(passage), start + width)
    out, pos = [], start
    for s, e in spans:
        if e <= start or s >= end:
            continue
        s, e = max(s, start), min(e, end)
        out.append(escape(passage[pos:s]))
        out.append(f"[bold yellow]{escape(passage[s:e])}[/bold yellow]")
        pos = e
    out.append(escape(passage[pos:end]))
    text = "".join(out).replace("\n", " ")
    return ("…" if start else "") + text + ("…" if end < len(passage) else "")


def _check(name: str, fn: Any) -> tuple[str, bool, str]:
    try:
        return name, True, str(fn())
    except Exception as exc:  # noqa: BLE001 - doctor reports every failure
        return name, False, f"{type(exc).__name__}: {exc}"


@main.command()
def doctor() -> None:
    """Check tesseract, poppler, sqlite-vec, the models, Ollama and the data directory."""
    import httpx

    settings = _settings()

    def tesseract() -> str:
        exe = shutil.which("tesseract")
        if not exe:
            raise RuntimeError("not found: apt-get install tesseract-ocr tesseract-ocr-eng")
        out = subprocess.run([exe, "--list-langs"], capture_output=True, text=True, timeout=20)
        langs = set(out.stdout.split()[1:])
        missing = set(settings.ocr_lang.split("+")) - langs
        if missing:
            raise RuntimeError(f"language data missing: {', '.join(sorted(missing))}")
        version = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=20)
        return (version.stdout or version.stderr).splitlines()[0]

    def poppler() -> str:
        exe = shutil.which("pdftoppm")
        if not exe:
            raise RuntimeError("not found: apt-get install poppler-utils")
        out = subprocess.run([exe, "-v"], capture_output=True, text=True, timeout=20)
        return (out.stderr or out.stdout).splitlines()[0]

    def database() -> str:
        from quire.storage import vectors
        from quire.storage.db import open_database

        db = open_database(settings)
        with db.read() as conn:
            v = conn.exec_driver_sql("SELECT sqlite_version(), vec_version()").one()
            meta = vectors.read_meta(conn)
        db.dispose()
        return f"SQLite {v[0]}, sqlite-vec {v[1]}, vectors: {meta}"

    def embedder() -> str:
        from quire.embed.base import make_embedder

        emb = make_embedder(settings)
        vec = emb.embed(["doctor check"])
        emb.close()
        return f"{emb.name}, dim {vec.shape[1]}"

    def ollama() -> str:
        r = httpx.get(f"{settings.ollama_url}/api/tags", timeout=3)
        r.raise_for_status()
        names = [m["name"] for m in r.json().get("models", [])]
        return f"{settings.ollama_url}: {', '.join(names) or 'no models pulled'}"

    def llm() -> str:
        import asyncio

        from quire.llm.router import make_router

        router = make_router(settings)
        if router is None:
            raise RuntimeError("none configured (QUIRE_LLM_BACKENDS=none): answers are extractive")

        async def status() -> list[dict[str, Any]]:
            try:
                return await router.status()
            finally:
                await router.aclose()

        rows = asyncio.run(status())
        if not any(r["ok"] for r in rows):
            raise RuntimeError(
                "; ".join(f"{r['name']}: {r['error']}" for r in rows) + " — answers are extractive"
            )
        return "; ".join(f"{r['name']} {'ok' if r['ok'] else r['error']}" for r in rows)

    def data_dir() -> str:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        probe = settings.data_dir / ".doctor"
        probe.write_text("ok")
        probe.unlink()
        free = shutil.disk_usage(settings.data_dir).free / 1e9
        return f"{settings.data_dir} writable, {free:.1f} GB free"

    required = [
        ("data dir", data_dir),
        ("tesseract", tesseract),
        ("poppler", poppler),
        ("sqlite + sqlite-vec", database),
        ("embedder", embedder),
    ]
    optional = [("ollama (optional)", ollama), ("chat LLM (optional)", llm)]
    table = Table("check", "", "detail")
    failed = False
    for name, fn in required + optional:
        name, ok, detail = _check(name, fn)
        mark = (
            "[green]ok[/green]"
            if ok
            else ("[yellow]--[/yellow]" if "optional" in name else "[red]FAIL[/red]")
        )
        failed |= not ok and "optional" not in name
        table.add_row(name, mark, detail)
    console.print(table)
    sys.exit(1 if failed else 0)


@main.command("eval")
@click.option(
    "--dataset",
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="BEIR-layout directory: corpus.jsonl, queries.jsonl, qrels/test.tsv [, train.tsv].",
)
@click.option("--split", type=click.Choice(["test", "train", "both"]), default="test")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--max-queries", type=click.IntRange(min=1), default=None, help="First N per split.")
@click.option("--variants", default="bm25,dense,hybrid,rerank", help="Comma-separated subset.")
def eval_(dataset: Path, split: str, as_json: bool, max_queries: int | None, variants: str) -> None:
    """Measure retrieval on a BEIR dataset: nDCG@10, Recall@100, MRR@10, latency per stage."""
    from quire.retrieval import eval as evaluation

    settings = _settings()
    _setup_logging(settings)
    splits = ["test", "train"] if split == "both" else [split]
    try:
        with evaluation.rich_progress(err_console) as progress:
            report = evaluation.run_eval(
                settings,
                dataset,
                splits=splits,
                variants=[v.strip() for v in variants.split(",") if v.strip()],
                max_queries=max_queries,
                progress=progress,
            )
    except QuireError as exc:
        err_console.print(f"[red]✗[/red] {exc.message}")
        sys.exit(1)
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    for table in evaluation.tables(report):
        console.print(table)


main.add_command(perplexity_group)
main.add_command(backup)
main.add_command(restore)
