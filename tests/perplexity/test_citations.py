"""Perplexity answers cited by section and web source (issue 13, item 4), end to end: real
exports ingested by a real worker, then /api/search, an extractive /api/chat answer, the
/v1 "Sources" text and the `quire` command."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from quire.api.routes.openai_compat import sources_text
from quire.config import Settings
from quire.mcp import library as mcp_library
from quire.mcp.citations import Links
from quire.retrieval.options import SearchOptions
from quire.runtime import Runtime
from quire.storage.web_sources import WebSource
from quire.synthesis.events import Source
from tests.api.library import load_library
from tests.api.sse import chat_events, first
from tests.conftest import DOCS
from tests.e2e.helpers import quire
from tests.runtime import make_app

PNW = DOCS / "perplexity" / "pnw-states-multiturn.md"
EPOCH = DOCS / "perplexity" / "Epoch AI Models Dataset.md"
TURN1 = "Compare population size and land area of the PNW states"
# Turn 1's footnotes [^1_1] … [^1_6], as the export defines them.
TURN1_URLS = {
    1: "https://ofm.wa.gov/data-research/washington-trends/population-changes/",
    2: "https://www.census.gov/quickfacts/fact/table/WA/PST045225",
    3: "https://www.census.gov/quickfacts/fact/table/OR/PST045225",
    4: "https://data.census.gov/profile/Oregon?g=040XX00US41",
    5: "https://www.census.gov/quickfacts/fact/table/ID/PST045225",
    6: "https://usafacts.org/answers/how-many-people-live-in-the-us/state/idaho/",
}


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    data = tmp_path_factory.mktemp("citations") / "data"
    settings = Settings(data_dir=data, llm_backends="none")
    with TestClient(make_app(settings)) as client:
        load_library(client, settings, (PNW, EPOCH))
        yield client


def search(client: TestClient, query: str, **extra: Any) -> list[dict[str, Any]]:
    r = client.post("/api/search", json={"query": query, "limit": 10, **extra})
    assert r.status_code == 200, r.text
    hits: list[dict[str, Any]] = r.json()["hits"]
    return hits


def test_a_hit_carries_its_section_and_the_web_sources_it_cites(loaded: TestClient) -> None:
    hits = search(loaded, "Idaho population land area square miles")
    hit = next(h for h in hits if h["heading_path"] == f"{TURN1} > Population and area")
    assert hit["kind"] == "perplexity" and hit["page"] == 1
    assert [(w["n"], w["url"], w["title"]) for w in hit["web_sources"]] == [
        (n, url, None) for n, url in TURN1_URLS.items()
    ]
    takeaways = search(loaded, "Washington has the largest population by far")
    hit = next(h for h in takeaways if h["heading_path"] == f"{TURN1} > Takeaways")
    assert hit["web_sources"] == []  # no marker in that passage


def test_other_kinds_and_passages_without_markers_carry_none(loaded: TestClient) -> None:
    hits = search(loaded, "pandas read_csv frontier models training compute")
    quickstart = next(h for h in hits if h["heading_path"].endswith("> Quickstart"))
    assert quickstart["web_sources"] == []  # `df['frontier']` is code, not a footnote
    assert all("web_sources" in h for h in hits)


def test_an_extractive_answer_cites_the_web_sources_of_its_sources(loaded: TestClient) -> None:
    with loaded.stream(
        "POST", "/api/chat", json={"message": "What is the land area of Idaho in square miles?"}
    ) as r:
        assert r.status_code == 200, r.read()
        events = chat_events(r.iter_lines())
    sources = first(events, "sources")["sources"]
    src = next(s for s in sources if s["heading_path"] == f"{TURN1} > Population and area")
    assert src["origin_url"] is None  # a built-in export carries no thread URL
    assert {w["n"]: w["url"] for w in src["web_sources"]} == TURN1_URLS
    assert all("web_sources" in s for s in sources)


def _source(**over: Any) -> Source:
    values: dict[str, Any] = {
        "n": 1,
        "chunk_id": 7,
        "document_id": 2,
        "title": "PNW states",
        "kind": "perplexity",
        "filename": "pnw.md",
        "page": 1,
        "heading_path": f"{TURN1} > Population and area",
        "passage": "Idaho … [5][6]",
        "highlights": [],
        "quote": "Idaho",
        "score": 1.0,
        "url": "https://www.perplexity.ai/search/pnw-abc",
    }
    return Source(**{**values, **over})


def test_v1_sources_text_lists_the_web_sources_under_their_source() -> None:
    webs = [
        WebSource(5, TURN1_URLS[5], None),
        WebSource(6, "https://usafacts.org/idaho", "Idaho facts"),
    ]
    text = sources_text([_source(web_sources=webs)], [1])
    assert text.splitlines()[-3:] == [
        f"[1] PNW states, turn 1, {TURN1} > Population and area — "
        "https://www.perplexity.ai/search/pnw-abc",
        f"    web [5] {TURN1_URLS[5]}",
        "    web [6] Idaho facts — https://usafacts.org/idaho",
    ]
    plain = sources_text([_source(kind="pdf", heading_path="")], [1])
    assert "web" not in plain


@pytest.mark.slow  # the quire command as a process
def test_cli_search_and_ask_print_the_web_sources(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert quire(data, "ingest", str(PNW), "--wait").returncode == 0
    r = quire(data, "search", "Idaho population land area square miles")
    assert r.returncode == 0, r.stderr
    assert f"— {TURN1} > Population and area" in r.stdout
    for n, url in TURN1_URLS.items():
        assert f"   web [{n}] {url}" in r.stdout
    r = quire(
        data, "ask", "What is the land area of Idaho in square miles?", QUIRE_LLM_BACKENDS="none"
    )
    assert r.returncode == 0, r.stderr
    _, _, listed = r.stdout.partition("\nSources\n")
    assert f"(perplexity, turn 1) — {TURN1} > Population and area" in listed
    assert f"\n    web [5] {TURN1_URLS[5]}" in listed


def test_the_mcp_search_tool_carries_the_web_sources_too(loaded: TestClient) -> None:
    settings: Settings = loaded.app.state.settings
    with Runtime.open(settings, llm=False) as rt:
        result = mcp_library.search(
            rt, "Idaho population land area square miles", SearchOptions(limit=10), Links()
        )
    hit = next(h for h in result.hits if h.heading_path == f"{TURN1} > Population and area")
    assert {w.n: w.url for w in hit.web_sources} == TURN1_URLS
    assert all(not h.web_sources for h in result.hits if h.kind != "perplexity")
