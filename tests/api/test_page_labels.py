"""Printed page numbers end to end: a real PDF with /PageLabels (the RISC-V ABI spec: i–iii,
then 1, 2, ...) through the worker, /api/search, the extractive answer and the CLI's line."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from quire.cli.chat import source_line
from quire.config import Settings
from quire.synthesis.events import Source
from tests.api.library import load_library
from tests.api.sse import chat_events, first
from tests.conftest import DOCS
from tests.runtime import make_app

# slow: a 100-page specification ingested
pytestmark = [pytest.mark.both_backends, pytest.mark.slow]

SPEC = DOCS / "pdf" / "riscv-abi-spec-v1.0.pdf"


def _printed(page: int) -> str | None:
    """The spec's printed number of PDF page ``page``."""
    return ["i", "ii", "iii"][page - 1] if page <= 3 else str(page - 3)


@pytest.fixture(scope="module")
def loaded(
    tmp_path_factory: pytest.TempPathFactory, module_database_url: str | None
) -> Iterator[TestClient]:
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("labels") / "data",
        llm_backends="none",
        database_url=module_database_url,
    )
    with TestClient(make_app(settings)) as client:
        load_library(client, settings, [SPEC])
        yield client


def test_search_hits_carry_the_printed_page(loaded: TestClient) -> None:
    r = loaded.post("/api/search", json={"query": "ILP32E calling convention stack alignment"})
    assert r.status_code == 200, r.text
    hits = r.json()["hits"]
    assert hits
    for hit in hits:
        assert hit["page_label"] == _printed(hit["page"]), hit["page"]
    doc = hits[0]["document_id"]
    page = loaded.get(f"/api/documents/{doc}/pages/14").json()
    assert page["page_label"] == "11"
    pages = loaded.get(f"/api/documents/{doc}/pages").json()["pages"]
    assert [p["page_label"] for p in pages[:5]] == ["i", "ii", "iii", "1", "2"]


def test_extractive_answer_sources_carry_the_printed_page(loaded: TestClient) -> None:
    with loaded.stream(
        "POST", "/api/chat", json={"message": "How is the stack aligned in the ILP32E ABI?"}
    ) as r:
        assert r.status_code == 200
        events = chat_events(r.iter_lines())
    sources = first(events, "sources")["sources"]
    assert sources
    for s in sources:
        assert s["page_label"] == _printed(s["page"])
        assert s["url"].endswith(f"#page={s['page']}")  # links keep the physical page
    line = source_line(Source.model_validate(sources[0]))
    page = sources[0]["page"]
    assert f"(pdf, p. {_printed(page)} (PDF p. {page}))" in line


def test_v1_sources_list_names_the_printed_page(loaded: TestClient) -> None:
    r = loaded.post(
        "/v1/chat/completions",
        json={
            "model": "quire-extractive",
            "messages": [{"role": "user", "content": "How is the stack aligned in ILP32E?"}],
        },
    )
    assert r.status_code == 200, r.text
    content = r.json()["choices"][0]["message"]["content"]
    sources = content.split("Sources:")[1]
    assert " (PDF p. " in sources and "#page=" in sources


def test_one_chunk_has_one_place_everywhere(loaded: TestClient) -> None:
    """The same chunk is named the same way by the search, the answer's sources (as streamed
    and as stored), the page, the page list and the Markdown export: records.place, once."""
    with loaded.stream(
        "POST", "/api/chat", json={"message": "How is the stack aligned in the ILP32E ABI?"}
    ) as r:
        assert r.status_code == 200
        events = chat_events(r.iter_lines())
    source = first(events, "sources")["sources"][0]
    done = first(events, "done")
    want = f"p. {_printed(source['page'])} (PDF p. {source['page']})"
    assert source["place"] == want, source
    assert source["section"] == source["heading_path"]  # a PDF's section is said beside it
    doc, page = source["document_id"], source["page"]

    hits = loaded.post("/api/search", json={"query": source["passage"][:200]}).json()["hits"]
    hit = next(h for h in hits if h["chunk_id"] == source["chunk_id"])
    assert hit["place"] == want
    assert loaded.get(f"/api/documents/{doc}/pages/{page}").json()["place"] == want
    listed = loaded.get(f"/api/documents/{doc}/pages").json()
    assert next(p for p in listed["pages"] if p["page"] == page)["place"] == want
    stored = loaded.get(f"/api/conversations/{done['conversation_id']}").json()
    answer = next(m for m in stored["messages"] if m["role"] == "assistant")
    assert answer["sources"][0]["place"] == want
    markdown = loaded.get(
        f"/api/messages/{done['message_id']}/export", params={"format": "markdown"}
    ).text
    assert f"{want}," in markdown or f"{want}." in markdown, markdown


def test_the_outline_is_the_page_list(loaded: TestClient) -> None:
    """The spec's outline, each entry at the page its section starts on and named by its
    place; the table of contents is "Table of Contents" as the outline says, not the section
    after it."""
    doc = loaded.get("/api/documents").json()["documents"][0]["id"]
    listed = loaded.get(f"/api/documents/{doc}/pages").json()
    outline, pages = listed["outline"], listed["pages"]
    assert len(outline) >= 30, outline
    assert [(e["title"], e["page"], e["place"]) for e in outline[:3]] == [
        ("RISC-V ABIs Specification", 1, "p. i (PDF p. 1)"),
        ("Table of Contents", 2, "p. ii (PDF p. 2)"),
        ("Preamble", 4, "p. 1 (PDF p. 4)"),
    ]
    by_page = {p["page"]: p for p in pages}
    for entry in outline:
        assert entry["place"] == by_page[entry["page"]]["place"], entry
        # The entry starts on its page: the page's text or its heading path names it.
        assert entry["title"] in by_page[entry["page"]]["heading_path"] or entry["page"] > 1
    assert [e["page"] for e in outline] == sorted(e["page"] for e in outline)
    for contents in pages[1:3]:  # ii and iii: the table of contents
        assert contents["heading_path"] == "Table of Contents", contents
