"""Search and extractive answers over awkward tables (issue 33's bad input): a page of 5,000
cells, a table with merged and empty cells, a page of one sentence, a question in another
language than the page. Each question gets a sensible answer or a plain "nothing answers
this", never an error."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from quire.app import create_app
from quire.config import Settings
from tests.api.library import load_library
from tests.api.sse import chat_events, first
from tests.ingest.table_pdfs import cells_pdf, merged_pdf, one_sentence_pdf

NOTHING = "Nothing in your library clearly answers this question."


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    tmp = tmp_path_factory.mktemp("tables")
    settings = Settings(data_dir=tmp / "data", llm_backends="none")
    paths: list[Path] = [
        cells_pdf(tmp / "grid-of-cells.pdf"),
        merged_pdf(tmp / "opening-hours.pdf"),
        one_sentence_pdf(tmp / "heron.pdf"),
    ]
    with TestClient(create_app(settings)) as client:
        load_library(client, settings, paths)
        docs = client.get("/api/documents").json()["documents"]
        assert sorted(d["status"] for d in docs) == ["ready"] * 3, docs
        yield client


def ask(client: TestClient, message: str) -> tuple[str, list[dict[str, Any]]]:
    with client.stream("POST", "/api/chat", json={"message": message}) as r:
        assert r.status_code == 200, r.read()
        events = chat_events(r.iter_lines())
    names = [e for e, _ in events]
    assert "error" not in names and names[-1] == "done", names
    done = first(events, "done")
    assert done["status"] == "complete", done
    return done["answer"], first(events, "sources")["sources"]


def test_a_row_with_a_merged_cell_is_quoted_with_its_headers(loaded: TestClient) -> None:
    answer, sources = ask(loaded, "What are the opening hours of the South branch on Wednesday?")
    assert "Branch: South · " in answer and "Wednesday: 10-16" in answer, answer
    assert sources[0]["title"] == "Opening hours of the three branches."  # its first line


def test_a_cell_of_the_5000_is_found(loaded: TestClient) -> None:
    hits = loaded.post("/api/search", json={"query": "150.7"}).json()["hits"]
    assert hits and "H7: 150.7" in hits[0]["text"], hits[:1]
    answer, _ = ask(loaded, "What is in cell 150.7?")
    assert answer.startswith(("*Extractive answer", NOTHING)), answer


def test_the_one_sentence_page_answers_or_nothing_does(loaded: TestClient) -> None:
    answer, _ = ask(loaded, "Where did the heron wait?")
    assert "The heron waited by the weir" in answer, answer
    answer, _ = ask(loaded, "What is the capital of Peru?")
    assert answer.startswith(NOTHING), answer


@pytest.mark.parametrize(
    "question",
    ["¿Dónde esperó la garza?", "サギはどこで待っていましたか？", "Где ждала цапля?"],
)
def test_a_question_in_another_language_answers_or_says_nothing_does(
    loaded: TestClient, question: str
) -> None:
    answer, sources = ask(loaded, question)
    quoted = "The heron waited by the weir" in answer and sources
    assert quoted or answer.startswith(("Nothing in your library",)), answer
