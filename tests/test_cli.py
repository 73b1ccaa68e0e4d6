"""The `quire` command as a user runs it (a real subprocess each time)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import DOCS
from tests.e2e.helpers import quire
from tests.ingest.test_epub import chapter, make_epub
from tests.pg import PgServer

pytestmark = pytest.mark.slow  # the quire command as a process


def test_ingest_wait_docs_rm(tmp_path: Path) -> None:
    data = tmp_path / "data"
    folder = tmp_path / "inbox"
    folder.mkdir()
    (folder / "thread.md").write_bytes(
        (DOCS / "perplexity" / "pnw-states-multiturn.md").read_bytes()
    )
    (folder / "clip.gif").write_bytes(b"GIF89a" + b"\x00" * 32)
    (folder / ".hidden.txt").write_text("never read")
    # A book named beside the folder (a small one: any EPUB goes the same way).
    book = make_epub(
        tmp_path / "heron.epub",
        {"c1.xhtml": chapter("<h1>One</h1><p>The heron waited by the weir until dusk.</p>")},
    )
    r = quire(data, "ingest", str(folder), str(book), "--wait")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "skipped" in r.stderr and "clip.gif" in r.stderr  # found in a folder: a warning
    docs = json.loads(quire(data, "docs", "--json").stdout)
    assert sorted(d["kind"] for d in docs) == ["epub", "perplexity"]
    assert {d["status"] for d in docs} == {"ready"}
    assert all(d["chunk_count"] > 0 for d in docs)
    table = quire(data, "docs").stdout
    assert "perplexity" in table and "ready" in table

    again = quire(data, "ingest", str(folder / "thread.md"))
    assert "already in the library" in again.stdout

    epub_id = next(d["id"] for d in docs if d["kind"] == "epub")
    assert quire(data, "rm", str(epub_id)).returncode == 0
    assert [d["kind"] for d in json.loads(quire(data, "docs", "--json").stdout)] == ["perplexity"]
    missing = quire(data, "rm", "999")
    assert missing.returncode == 1 and "999" in missing.stderr


def test_ingest_of_a_named_bad_file_fails_the_command(tmp_path: Path) -> None:
    bad = tmp_path / "paper.pdf"
    bad.write_bytes(b"GIF89a" + b"\x00" * 32)
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    r = quire(tmp_path / "data", "ingest", str(bad), str(empty))
    assert r.returncode == 1
    assert "paper.pdf" in r.stderr and "empty" in r.stderr


def test_doctor_checks_the_real_tools(tmp_path: Path) -> None:
    r = quire(tmp_path / "data", "doctor", QUIRE_OLLAMA_URL="http://127.0.0.1:9")
    assert r.returncode == 0, r.stdout
    for expected in (
        "tesseract",
        "poppler",
        "sqlite-vec",
        "embedder",
        "ollama (optional)",
        "chat LLM",
    ):
        assert expected in r.stdout
    assert "FAIL" not in r.stdout
    row = next(line for line in r.stdout.splitlines() if "frequent terms" in line)
    assert "ok" in row and "not needed yet" in row  # an empty library
    row = next(line for line in r.stdout.splitlines() if "formats" in line)
    assert "ok" in row and "LibreOffice 7" in row
    for tool in ("OCR (optional)", "soffice (optional)"):
        row = next(line for line in r.stdout.splitlines() if tool in line)
        assert "ok" in row, row
    # OCR and LibreOffice are optional: their trouble is reported, and only warns.
    broken = quire(tmp_path / "data", "doctor", QUIRE_OCR_LANG="xyz", QUIRE_SOFFICE="")
    assert broken.returncode == 0 and "xyz" in broken.stdout and "FAIL" not in broken.stdout
    assert "legacy" in broken.stdout and "QUIRE_SOFFICE" in broken.stdout


def test_doctor_without_ocr_or_libreoffice_says_how_to_install_them(tmp_path: Path) -> None:
    """A machine with none of the programs (an empty PATH): Quire still works, and each
    missing one comes with its install command for apt, Homebrew and winget."""
    empty = tmp_path / "bin"
    empty.mkdir()
    r = quire(tmp_path / "data", "doctor", PATH=str(empty), COLUMNS="400")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "FAIL" not in r.stdout
    # The table's wrapped cells back into one line each (the blank cells beside them drop out).
    text = " ".join(r.stdout.replace("│", " ").split())
    for command in (
        "sudo apt-get install tesseract-ocr tesseract-ocr-eng",
        "brew install tesseract",
        "winget install --id UB-Mannheim.TesseractOCR -e",
        "sudo apt-get install poppler-utils",
        "brew install poppler",
        "winget install --id oschwartz10612.Poppler -e",
        "brew install --cask libreoffice",
        "winget install --id TheDocumentFoundation.LibreOffice -e",
    ):
        assert command in text, command
    for tool in ("OCR (optional)", "soffice (optional)"):
        row = next(line for line in r.stdout.splitlines() if tool in line)
        assert row.split("│")[2].strip() == "--", row
    row = next(line for line in r.stdout.splitlines() if line.startswith("│ embedder"))
    assert "ok" in row  # what is required still works


def test_ingest_wait_follows_files_that_share_a_name(tmp_path: Path) -> None:
    data = tmp_path / "data"
    for sub, text in (("a", "Herons wait by the weir."), ("b", "Otters slide down the bank.")):
        (tmp_path / "inbox" / sub).mkdir(parents=True)
        (tmp_path / "inbox" / sub / "notes.md").write_text(f"# Notes\n\n{text}\n")
    r = quire(data, "ingest", str(tmp_path / "inbox"), "--wait", timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    docs = json.loads(quire(data, "docs", "--json").stdout)
    assert [d["status"] for d in docs] == ["ready", "ready"]


def test_ingest_wait_runs_several_files_at_once_and_resumes(tmp_path: Path) -> None:
    data = tmp_path / "data"
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    for n in range(6):
        (inbox / f"note{n}.md").write_text(f"# Note {n}\n\nThe heron number {n} waits.\n")
    r = quire(data, "ingest", str(inbox), "--wait", "--workers", "2", COLUMNS="200", timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "all files" in r.stderr and "6/6" in r.stderr and "pages" in r.stderr
    docs = json.loads(quire(data, "docs", "--json").stdout)
    assert len(docs) == 6 and {d["status"] for d in docs} == {"ready"}
    with sqlite3.connect(data / "quire.db") as conn:
        jobs_before = conn.execute("SELECT count(*) FROM ingest_jobs").fetchone()[0]
    # Run again after one more file arrived: the finished ones are not read again.
    (inbox / "note6.md").write_text("# Note 6\n\nA late heron.\n")
    again = quire(data, "ingest", str(inbox), "--wait", timeout=180)
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("already in the library") == 6
    with sqlite3.connect(data / "quire.db") as conn:
        assert conn.execute("SELECT count(*) FROM ingest_jobs").fetchone()[0] == jobs_before + 1


def test_ingest_a_folder_with_bad_entries_reports_each_and_ingests_the_rest(
    tmp_path: Path,
) -> None:
    data, inbox = tmp_path / "data", tmp_path / "inbox"
    (inbox / "sub").mkdir(parents=True)
    (inbox / "good.md").write_text("# Good\n\nA fine note about herons.\n")
    (inbox / "sub" / "loop").symlink_to(inbox, target_is_directory=True)  # a symlink loop
    (inbox / "dangling.pdf").symlink_to(tmp_path / "nowhere.pdf")
    os.mkfifo(inbox / "pipe.pdf")
    with (inbox / "big.bin").open("wb") as f:  # 1 GB, sparse
        f.truncate(1 << 30)
    r = quire(data, "ingest", str(inbox), "--wait", timeout=180)
    assert r.returncode == 1  # the oversized file is a failure; the rest went in
    assert "dangling.pdf: a dangling link" in r.stderr
    assert "pipe.pdf: not a regular file" in r.stderr
    assert "big.bin" in r.stderr and "over the" in r.stderr
    docs = json.loads(quire(data, "docs", "--json").stdout)
    assert [(d["filename"], d["status"]) for d in docs] == [("good.md", "ready")]


def test_doctor_reads_a_postgresql_library(tmp_path: Path, pg_server: PgServer) -> None:
    url = pg_server.create_database()
    r = quire(tmp_path / "data", "doctor", QUIRE_DATABASE_URL=url)
    pg_server.drop_database(url)
    row = next(line for line in r.stdout.splitlines() if line.startswith("│ database"))
    assert "ok" in row and "PostgreSQL 18" in row, r.stdout
    assert "vector 0.8" in r.stdout.replace("\n", " ") and "pg_trgm" in r.stdout
    assert r.returncode == 0, r.stdout


def test_ingest_wait_fills_a_postgresql_library(tmp_path: Path, pg_server: PgServer) -> None:
    # --wait's workers are processes: they must get the database URL (a secret setting), not
    # its masked form.
    url = pg_server.create_database()
    try:
        note = tmp_path / "note.md"
        note.write_text("# Herons\n\nThe heron waits by the weir.\n")
        r = quire(tmp_path / "data", "ingest", str(note), "--wait", QUIRE_DATABASE_URL=url)
        assert r.returncode == 0, r.stdout + r.stderr
        docs = json.loads(quire(tmp_path / "data", "docs", "--json", QUIRE_DATABASE_URL=url).stdout)
        assert [(d["filename"], d["status"]) for d in docs] == [("note.md", "ready")]
    finally:
        pg_server.drop_database(url)


def test_doctor_names_the_languages_the_embedder_misses(tmp_path: Path) -> None:
    data = tmp_path / "data"
    # A Japanese novel, and a short English note (a whole English book adds only time).
    note = tmp_path / "note.md"
    note.write_text(
        "# Field note\n\nThe heron waited by the weir until dusk, and then it flew over the "
        "river towards the old mill, where the children were still playing in the long grass.\n"
    )
    books = [DOCS / "epub" / "pg39287-agony-column-ja-epub3.epub", note]
    assert quire(data, "ingest", *map(str, books), "--wait").returncode == 0
    docs = {d["language"]: d["id"] for d in json.loads(quire(data, "docs", "--json").stdout)}
    assert set(docs) == {"ja", "en"}

    wide = {"COLUMNS": "400", "QUIRE_OLLAMA_URL": "http://127.0.0.1:9"}
    r = quire(data, "doctor", **wide)
    assert r.returncode == 0, r.stdout  # a warning, not a failure
    row = next(line for line in r.stdout.splitlines() if "languages" in line)
    assert "--" in row and "Japanese (ja): 1 doc(s)" in row and "NOT covered" in row
    assert "English (en): 1 doc(s)" in row and "QUIRE_OLLAMA_EMBED_MODEL=bge-m3" in row
    told = quire(data, "doctor", QUIRE_EMBED_LANGUAGES="multilingual", **wide)
    row = next(line for line in told.stdout.splitlines() if "languages" in line)
    assert "ok" in row and "NOT covered" not in row and "multilingual" in row

    hits = quire(data, "search", "カールトン・ホテル", "--json", "--language", "ja")
    assert hits.returncode == 0, hits.stderr
    assert {h["document_id"] for h in json.loads(hits.stdout)["hits"]} == {docs["ja"]}
    none = quire(data, "search", "カールトン・ホテル", "--json", "--language", "EN")
    assert docs["ja"] not in {h["document_id"] for h in json.loads(none.stdout)["hits"]}
    bad = quire(data, "search", "rabbit", "--language", "not a tag")
    assert bad.returncode == 2 and "language tag" in bad.stderr


def test_listing_the_library_loads_neither_the_intake_nor_the_fetcher() -> None:
    """`quire docs` and `quire rm` open the database and nothing else: importing the ingest
    worker and the web fetcher they never use took a third of `quire docs` (1.4 s → 1.0 s)."""
    code = (
        "import sys, quire.cli.library; "
        "print(*(m in sys.modules for m in "
        "('quire.ingest.intake', 'quire.ingest.worker', 'quire.web.fetch', 'quire.web.sources')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"] * 4
