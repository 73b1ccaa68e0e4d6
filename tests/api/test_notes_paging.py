"""The Notes list past its first page (issue 37): a library of a few thousand notes, made
through the storage layer in one transaction, listed a page at a time with ``next_offset``;
the filters and the search apply to every note on the server, not to a loaded page. The CLI
exports them all in a chosen citation style."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from quire.api.limits import MAX_PAGE_SIZE
from quire.cli import main
from quire.config import Settings
from quire.storage import notes
from quire.storage.db import Database
from quire.storage.migrate import open_database
from tests.api.library import FILES
from tests.libraries import library_copy
from tests.runtime import make_app

COUNT = 2500
#: The one word of the last note: found, it is that note.
LAST_WORD = "kittiwake"


def make_notes(db: Database, document_id: int, count: int, *, last_word: str) -> list[int]:
    """``count`` notes on the document's first page, numbered in their text ("note 17 of …"),
    the last with ``last_word``; made in one transaction, without their search index (the
    Notes list reads the notes table, not the index)."""
    ids = []
    with db.write() as conn:
        for i in range(count):
            text = f"bulk note {i} of {count}" + (f" {last_word}" if i == count - 1 else "")
            fields = {"document_id": document_id, "page": 1, "body": text, "tags": [f"t{i % 7}"]}
            ids.append(notes.create(conn, fields, check_page=i == 0))
    return ids


@pytest.fixture(scope="module")
def library(request: pytest.FixtureRequest) -> Iterator[Settings]:
    yield from library_copy(request, "sqlite", FILES, llm_backends="none")


@pytest.fixture(scope="module")
def api(library: Settings) -> Iterator[TestClient]:
    yield from _client(library)


def _client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(make_app(settings)) as client:
        doc = next(
            d for d in client.get("/api/documents").json()["documents"] if d["kind"] == "pdf"
        )
        db = open_database(settings)
        try:
            make_notes(db, doc["id"], COUNT, last_word=LAST_WORD)
        finally:
            db.dispose()
        yield client


def test_every_note_is_reached_a_page_at_a_time(api: TestClient) -> None:
    seen: list[int] = []
    offset: int | None = 0
    pages = 0
    while offset is not None and pages < 20:
        r = api.get("/api/notes", params={"limit": MAX_PAGE_SIZE, "offset": offset})
        assert r.status_code == 200, r.text
        got = r.json()
        assert got["total"] == COUNT
        seen += [n["id"] for n in got["notes"]]
        offset = got["next_offset"]
        pages += 1
    assert pages == 3 and len(seen) == len(set(seen)) == COUNT
    assert any(LAST_WORD in n["body"] for n in got["notes"])
    # The default page is 200, and the last page says there is no next one.
    first = api.get("/api/notes").json()
    assert len(first["notes"]) == 200 and first["next_offset"] == 200
    last = api.get("/api/notes", params={"offset": COUNT - 5}).json()
    assert len(last["notes"]) == 5 and last["next_offset"] is None
    assert api.get("/api/notes", params={"offset": COUNT + 10}).json()["notes"] == []


def test_search_and_filters_apply_to_every_note(api: TestClient) -> None:
    found = api.get("/api/notes", params={"q": LAST_WORD, "limit": 10}).json()
    assert found["total"] == 1 and found["next_offset"] is None
    assert found["notes"][0]["body"] == f"bulk note {COUNT - 1} of {COUNT} {LAST_WORD}"
    # A tag on every seventh note: counted over all of them, paged like the rest.
    tagged = api.get("/api/notes", params={"tag": "t3", "limit": 100}).json()
    assert tagged["total"] == len(range(3, COUNT, 7)) and tagged["next_offset"] == 100
    assert all(n["tags"] == ["t3"] for n in tagged["notes"])
    doc_id = found["notes"][0]["document_id"]
    on_page = api.get("/api/notes", params={"document_id": doc_id, "page": 1, "limit": 1})
    assert on_page.json()["total"] == COUNT
    assert api.get("/api/notes", params={"document_id": doc_id, "page": 2}).json()["total"] == 0


def test_a_page_larger_than_the_limit_is_refused(api: TestClient) -> None:
    r = api.get("/api/notes", params={"limit": MAX_PAGE_SIZE + 1})
    assert r.status_code == 422 and "limit" in r.text, r.text


def test_the_cli_exports_every_note_in_a_chosen_style(
    api: TestClient, library: Settings, tmp_path: Path
) -> None:
    doc_id = api.get("/api/notes", params={"q": LAST_WORD}).json()["notes"][0]["document_id"]
    env = {"QUIRE_DATA_DIR": str(library.data_dir), "QUIRE_LLM_BACKENDS": "none"}
    runner = CliRunner()
    done = runner.invoke(
        main, ["notes", "export", str(doc_id), "--style", "apa", "-o", str(tmp_path)], env=env
    )
    assert done.exit_code == 0, done.output
    (written,) = tmp_path.glob("*.md")
    text = written.read_text(encoding="utf-8")
    assert 'citation_style: "apa"' in text and f"notes: {COUNT}" in text
    assert LAST_WORD in text
    bad = runner.invoke(main, ["notes", "export", str(doc_id), "--style", "chicgo"], env=env)
    assert bad.exit_code == 1 and "unknown citation style 'chicgo'" in bad.output, bad.output
    listed = runner.invoke(main, ["notes", "styles", "modern", "language"], env=env)
    assert listed.exit_code == 0 and "modern-language-association" in listed.output
