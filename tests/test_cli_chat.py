"""`quire ask` and `quire repl` as a user runs them (real subprocesses)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import bibtexparser
import pytest

from tests.conftest import DOCS
from tests.e2e.helpers import open_db, quire
from tests.fakes.ollama import FakeOllama
from tests.fakes.rag_model import RagModel

pytestmark = pytest.mark.slow  # the quire command as a process


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("cli-chat") / "data"
    r = quire(data, "ingest", str(DOCS / "epub" / "alice-epub3.epub"), "--wait")
    assert r.returncode == 0, r.stderr
    return data


def test_ask_streams_an_extractive_answer_then_the_sources(library: Path) -> None:
    r = quire(
        library,
        "ask",
        "What did the Rabbit take out of its waistcoat-pocket?",
        QUIRE_LLM_BACKENDS="none",
    )
    assert r.returncode == 0, r.stderr
    answer, _, sources = r.stdout.partition("\nSources\n")
    assert answer.startswith("*Extractive answer:") and "“" in answer and "[1]" in answer
    assert sources.startswith("[1] Alice") and "(epub, " in sources
    assert "(epub, section " not in sources  # a chapter is named by its title
    assert "answering with extractive" in r.stderr


def test_an_answer_in_a_terminal_shows_quotes_as_written_and_links_by_name(tmp_path: Path) -> None:
    """The answer is Markdown: a quote's "x[0]" is escaped ("x\\[0]": no citation of a source
    0) and the web app's settings are a link. A terminal shows the quote as the page has it,
    the real citation as a citation, and the link by name."""
    notes = tmp_path / "registers.md"
    notes.write_text(
        "# Toy machine\n\nIn the toy machine, register x[0] always reads as zero, whatever "
        "is written to it.\n\nThe other registers hold what was last written.\n"
    )
    data = tmp_path / "data"
    assert quire(data, "ingest", str(notes), "--wait").returncode == 0
    r = quire(data, "ask", "Which register always reads as zero?", QUIRE_LLM_BACKENDS="none")
    assert r.returncode == 0, r.stderr
    answer = r.stdout.partition("\nSources\n")[0]
    assert "register x[0] always reads as zero" in answer and "\\[" not in answer
    assert re.search(r"” \[1\]$", answer, re.M), answer
    # The web app's link to its settings is named, not printed as Markdown.
    assert "Settings (in the web app)" in answer and "](/settings" not in answer


def test_ask_json_and_errors(library: Path) -> None:
    r = quire(library, "ask", "rabbit", "--json", "--no-llm")
    assert r.returncode == 0, r.stderr
    events = [e["event"] for e in json.loads(r.stdout)["events"]]
    assert events[0] == "start" and events[-1] == "done" and "token" in events
    bad = quire(library, "ask", "rabbit", "--doc", "999", QUIRE_LLM_BACKENDS="none")
    assert bad.returncode == 1 and "no such document: 999" in bad.stderr
    empty = quire(library, "ask", "   ", QUIRE_LLM_BACKENDS="none")
    assert empty.returncode == 1 and "empty" in empty.stderr


def test_repl_commands_and_a_follow_up(library: Path) -> None:
    script = "\n".join(
        [
            "/help",
            "/mode exhaustive",
            "/hyde off",
            "/docs",
            "/docs 999",
            "/docs 1",
            "Why did Alice follow the White Rabbit?",
            "/sources",
            "and then?",
            "/docs all",
            "/bogus",
            "/quit",
        ]
    )
    r = quire(library, "repl", input=script + "\n", QUIRE_LLM_BACKENDS="none")
    assert r.returncode == 0, r.stderr
    assert "mode: exhaustive" in r.stderr and "hyde: off" in r.stderr
    assert "no such document: 999" in r.stderr
    assert "searching only documents 1" in r.stderr and "searching all documents" in r.stderr
    assert "unknown or incomplete command: /bogus" in r.stderr
    assert r.stdout.count("Sources") >= 2  # two answers, each with its sources
    assert "Alice" in r.stdout and "epub" in r.stdout  # /docs and /sources listings
    # Both questions went into one stored conversation; the history file was written.
    assert "/mode exhaustive" in (library / "repl_history").read_text()
    db = open_db(library)
    with db.read() as conn:
        conv = conn.exec_driver_sql("SELECT max(conversation_id) FROM messages").scalar()
        rows = conn.exec_driver_sql(
            "SELECT role, json_extract(meta, '$.standalone_question') FROM messages "
            "WHERE conversation_id = ? ORDER BY id",
            (conv,),
        ).all()
    db.dispose()
    assert [r[0] for r in rows] == ["user", "assistant", "user", "assistant"]
    assert rows[3][1] == "Why did Alice follow the White Rabbit? and then?"


def test_ask_with_an_llm_streams_its_answer(library: Path) -> None:
    with FakeOllama(models=["llama3.2:latest"]) as fake:
        fake.responder = RagModel()
        r = quire(
            library,
            "ask",
            "What did the Rabbit take out of its waistcoat-pocket?",
            QUIRE_LLM_BACKENDS="ollama",
            QUIRE_OLLAMA_URL=fake.url,
        )
        assert fake.stream_outcomes["completed"] >= 1  # the answer was streamed
    assert r.returncode == 0, r.stderr
    assert "answering with ollama:llama3.2" in r.stderr and "map 1/" in r.stderr
    answer, _, sources = r.stdout.partition("\nSources\n")
    assert " [1]." in answer  # the first fact, restated and cited
    assert sources.startswith("[1] Alice")


def test_ask_format_prints_the_answer_then_its_export(library: Path) -> None:
    question = "What did the Rabbit take out of its waistcoat-pocket?"
    md = quire(library, "ask", question, "--format", "markdown", QUIRE_LLM_BACKENDS="none")
    assert md.returncode == 0, md.stderr
    answer, _, references = md.stdout.partition("\n## References\n")
    assert answer.startswith("*Extractive answer:") and "\nSources\n" not in md.stdout
    cited = set(re.findall(r"\[(\d+)\]", answer))
    listed = set(re.findall(r"^- \[(\d+)\] Lewis Carroll\. \*Alice", references, re.M))
    assert cited and cited == listed
    bib = quire(library, "ask", question, "--format", "bibtex", QUIRE_LLM_BACKENDS="none")
    assert bib.returncode == 0, bib.stderr
    answer, _, entries = bib.stdout.partition("\n@book{")
    assert answer.startswith("*Extractive answer:") and "[1]" in answer
    library_ = bibtexparser.parse_string("@book{" + entries)
    assert not library_.failed_blocks and library_.entries[0]["author"] == "Carroll, Lewis"
    both = quire(library, "ask", question, "--format", "csl", "--json")
    assert both.returncode == 2 and "cannot be combined" in both.stderr
