"""``quire doctor``: check the data directory, SQLite + sqlite-vec and the embedder (required),
then what is optional: tesseract and poppler (OCR), LibreOffice (legacy Office files and the
rendered view), each missing one with its install command for apt, Homebrew and winget
(formats/tools.py), the formats read here, the models (the reranker: installed or the command
that pulls it), Ollama, the LLM, whether the embedder covers the languages the library holds,
and whether the frequent terms' postings are read (storage/term_postings.py); required checks
fail the command, optional ones only warn."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from typing import Any

import click
import httpx
from rich.table import Table

from quire.cli.common import console
from quire.cli.common import settings as load_settings
from quire.embed import embedder_name, make_embedder
from quire.embed.languages import coverage, library_languages
from quire.formats.enabled import format_status
from quire.formats.office.convert import soffice, version
from quire.formats.tools import LIBREOFFICE, POPPLER, TESSERACT, Tool
from quire.llm.router import make_router
from quire.models.hub import SOURCE_TEXT, inspect, model_spec
from quire.models.pull import check as check_model
from quire.storage import documents, term_postings, vectors
from quire.storage.migrate import open_database


def _check(name: str, fn: Any) -> tuple[str, bool, str]:
    try:
        return name, True, str(fn())
    except Exception as exc:  # noqa: BLE001 - doctor reports every failure
        return name, False, f"{type(exc).__name__}: {exc}"


@click.command()
def doctor() -> None:
    """Check the data directory, sqlite-vec, the embedder; OCR, LibreOffice, models, Ollama."""

    settings = load_settings(logs=False)

    def absent(*tools: Tool) -> RuntimeError:
        said = (f"{t.name} not found, so no {t.purpose}. Install: {t.install()}" for t in tools)
        return RuntimeError("; ".join(said))

    def ocr() -> str:
        exe, pdftoppm = shutil.which("tesseract"), shutil.which("pdftoppm")
        if not exe or not pdftoppm:
            raise absent(*(t for t, found in ((TESSERACT, exe), (POPPLER, pdftoppm)) if not found))
        out = subprocess.run([exe, "--list-langs"], capture_output=True, text=True, timeout=20)
        langs = set(out.stdout.split()[1:])
        missing = set(settings.ocr_lang.split("+")) - langs
        if missing:
            raise RuntimeError(f"tesseract language data missing: {', '.join(sorted(missing))}")
        ran = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=20)
        pages = subprocess.run([pdftoppm, "-v"], capture_output=True, text=True, timeout=20)
        return (
            f"{(ran.stdout or ran.stderr).splitlines()[0]}, "
            f"poppler ({(pages.stderr or pages.stdout).splitlines()[0]})"
        )

    def libreoffice() -> str:
        if not settings.soffice:
            raise RuntimeError(f"turned off (QUIRE_SOFFICE is empty), so no {LIBREOFFICE.purpose}")
        command = soffice(settings)
        found = version(command) if command else None
        if command is None or found is None:
            raise absent(LIBREOFFICE)
        return f"{found} ({command})"

    def database() -> str:
        db = open_database(settings)
        what = db.describe()
        with db.read() as conn:
            meta = vectors.read_meta(conn)
        db.dispose()
        return f"{what}, vectors: {meta}"

    def embedder() -> str:
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
                "; ".join(f"{r['name']}: {r['error']}" for r in rows) + " — answers are "
                "extractive; `quire models list` finds a server and recommends a model"
            )
        return "; ".join(f"{r['name']} {'ok' if r['ok'] else r['error']}" for r in rows)

    def reranker() -> str:
        state = inspect(model_spec("reranker", settings))
        if not state.present or state.model_file is None:
            raise RuntimeError(
                f"not installed at {state.spec.target}: run `quire models pull reranker` "
                "(until then the first hits are ordered by their best sentence)"
            )
        check_model(state.spec.target)
        how = SOURCE_TEXT[state.manifest.source] if state.manifest else "installed by hand"
        return f"{state.model_file.name}, {state.size / 1e6:.1f} MB, {how}; scores a test pair"

    def languages() -> str:
        covered = coverage(embedder_name(settings), settings.embed_languages)
        db = open_database(settings)
        with db.read() as conn:
            held = documents.language_counts(conn)
        db.dispose()
        report = library_languages(held.languages, held.undetected, covered)
        return languages_detail(report)

    def frequent_terms() -> str:
        db = open_database(settings)
        with db.read() as conn:
            ok, detail = term_postings.status(conn, settings.bm25_frequent_df)
        db.dispose()
        if not ok:
            raise RuntimeError(detail + " (until then their BM25 comes from FTS5: slower)")
        return detail

    def formats() -> str:
        off = [f"{f.formats}: {f.why}" for f in format_status(settings) if not f.enabled]
        if off:
            raise RuntimeError("not read here — " + "; ".join(off))
        return "every format is read; " + format_status(settings)[-1].why

    def data_dir() -> str:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        probe = settings.data_dir / ".doctor"
        probe.write_text("ok")
        probe.unlink()
        free = shutil.disk_usage(settings.data_dir).free / 1e9
        return f"{settings.data_dir} writable, {free:.1f} GB free"

    required = [
        ("data dir", data_dir),
        ("database", database),
        ("embedder", embedder),
    ]
    # Programs outside Python: every format they serve is optional (formats/tools.py).
    optional = [
        ("OCR (optional)", ocr),
        ("soffice (optional)", libreoffice),
        ("reranker (optional)", reranker),
        ("ollama (optional)", ollama),
        ("chat LLM (optional)", llm),
        ("formats", formats),
        ("languages", languages),
        ("frequent terms", frequent_terms),
    ]
    warn_only = {name for name, _ in optional}
    table = Table("check", "", "detail")
    failed = False
    for name, fn in required + optional:
        name, ok, detail = _check(name, fn)
        mark = (
            "[green]ok[/green]"
            if ok
            else ("[yellow]--[/yellow]" if name in warn_only else "[red]FAIL[/red]")
        )
        failed |= not ok and name not in warn_only
        table.add_row(name, mark, detail)
    console.print(table)
    sys.exit(1 if failed else 0)


class NotCovered(Exception):
    """The library holds a language the embedder does not cover (a warning, with the fix)."""


def languages_detail(report: dict[str, Any]) -> str:
    """The doctor's languages row: each language with its counts and coverage; raises
    NotCovered with the hint when one is not covered."""
    emb = report["embedder"]
    if emb["multilingual"]:
        covers = "multilingual"
    elif emb["known"]:
        covers = ", ".join(emb["languages"])
    else:
        covers = "languages unknown"
    mark = {True: "covered", False: "NOT covered", None: "coverage unknown"}
    held = [
        f"{r['name']} ({r['language']}): {r['documents']} doc(s), {r['chunks']} chunks, "
        f"{mark[r['covered']]}"
        for r in report["languages"]
    ]
    if report["undetected"]:
        held.append(f"{report['undetected']} doc(s) undetected")
    detail = f"{'; '.join(held) or 'no documents yet'} — embedder {emb['name']}: {covers}"
    if report["hint"]:
        raise NotCovered(f"{detail}. {report['hint']}")
    return detail
