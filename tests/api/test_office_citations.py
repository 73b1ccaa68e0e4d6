"""Office files end to end: a real Word report, deck and workbook uploaded through the API
and ingested by a real worker; a Word fact cited with the page Word laid it out on, a slide
by number and title with its speaker note searchable, a spreadsheet row found by a value in
it and quoted with its header; the CLI's source line and /v1 name the same places."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from quire.cli.chat import source_line
from quire.config import Settings
from quire.synthesis.events import Source
from tests.api.library import load_library
from tests.api.sse import chat_events, first
from tests.conftest import DOCS
from tests.runtime import make_app

OFFICE = DOCS / "office"
FILES = (
    OFFICE / "docx" / "halfmoonbay-adu-code-ch18-33.docx",
    OFFICE / "pptx" / "aes2011-maloney-evaluation-communication.pptx",
    OFFICE / "xlsx" / "onlyoffice-sample-olympic-medals.xlsx",
)


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("office") / "data", llm_backends="none")
    with TestClient(make_app(settings)) as client:
        load_library(client, settings, FILES)
        yield client


def search(client: TestClient, query: str, kind: str) -> list[dict[str, Any]]:
    r = client.post("/api/search", json={"query": query, "kinds": [kind]})
    assert r.status_code == 200, r.text
    return list(r.json()["hits"])


def test_the_three_are_ready_as_their_kinds(loaded: TestClient) -> None:
    docs = loaded.get("/api/documents").json()["documents"]
    assert sorted((d["kind"], d["status"]) for d in docs) == [
        ("docx", "ready"),
        ("pptx", "ready"),
        ("xlsx", "ready"),
    ]


def test_a_word_fact_is_cited_with_its_page_and_heading(loaded: TestClient) -> None:
    hits = search(loaded, "impact fees accessory dwelling units less than 750 square feet", "docx")
    hit = next(h for h in hits if "less than 750 square feet" in h["text"])
    assert hit["page"] == 12 and hit["page_label"] is None  # p. 12 as Word laid it out
    assert hit["heading_path"] == "18.33.080 Impact Fees."


def test_a_speaker_note_is_searchable_and_cited_by_its_slide(loaded: TestClient) -> None:
    hits = search(loaded, "organisational members typically articulate values", "pptx")
    assert hits[0]["page"] == 8
    assert hits[0]["page_label"] == "slide 8 · Marketing in evaluation"
    assert (
        "Speaker notes:" in hits[0]["text"]
        or "Speaker notes:"
        in loaded.get(f"/api/documents/{hits[0]['document_id']}/pages/8").json()["text"]
    )


def test_a_row_is_found_by_a_value_and_quoted_with_its_header(loaded: TestClient) -> None:
    hits = search(loaded, "China", "xlsx")
    assert hits[0]["page_label"] == "sheet Sheet1, rows 2–28"
    assert "Country: China · Gold: 26 · Silver: 18 · Bronze: 26 · Total: 70" in hits[0]["text"]


def test_answers_name_the_slide(loaded: TestClient) -> None:
    message = "Marketers segment by geographic, demographic, psychographic and behavioural factors?"
    body = {"message": message, "kinds": ["pptx"]}
    with loaded.stream("POST", "/api/chat", json=body) as r:
        assert r.status_code == 200
        events = chat_events(r.iter_lines())
    sources = first(events, "sources")["sources"]
    slide = next(s for s in sources if s["page"] == 8)
    line = source_line(Source.model_validate(slide))
    assert "(pptx, slide 8 · Marketing in evaluation)" in line
    for other in sources:  # every slide is named by its number (and title, if it has one)
        assert other["page_label"].startswith(f"slide {other['page']}")
    r = loaded.post(
        "/v1/chat/completions",
        json={
            "model": "quire-extractive",
            "messages": [{"role": "user", "content": message}],
        },
    )
    assert r.status_code == 200, r.text
    assert "slide 8 · Marketing in evaluation" in r.json()["choices"][0]["message"]["content"]
