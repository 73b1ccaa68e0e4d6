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
