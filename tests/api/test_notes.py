"""Notes through the API on a real library (Alice and the DMCA summary, ingested by a real
worker): highlights on a page, searchable at once in all three legs and cited as the user's
note with its page; filters, edits, limits, kept answers, a deleted document, a page read again,
and the Markdown export parsed back (docs/using/notes.md)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import bibtexparser
import pytest
import yaml
from fastapi.testclient import TestClient
from sqlalchemy import select

from quire.config import Settings
from quire.ingest import notes as notes_indexing
from quire.storage import note_sync, notes, schema, vectors
from quire.storage.migrate import open_database
from quire.storage.records import Page
from tests.api.library import FILES
from tests.api.sse import chat_events, first
from tests.libraries import library_copy
from tests.runtime import drain, make_app

pytestmark = pytest.mark.both_backends

NOTE_WORD = "quillwort"  # in no document: a hit for it is the note


@pytest.fixture(scope="module")
def library(request: pytest.FixtureRequest, backend: str) -> Iterator[Settings]:
    yield from library_copy(request, backend, FILES, llm_backends="none")


@pytest.fixture(scope="module")
def api(library: Settings) -> Iterator[TestClient]:
    with TestClient(make_app(library)) as client:
        yield client


def _doc(api: TestClient, kind: str) -> dict[str, Any]:
    docs = api.get("/api/documents").json()["documents"]
    return next(d for d in docs if d["kind"] == kind)


def _sentence(api: TestClient, doc_id: int, page: int) -> tuple[int, int, str]:
    """A sentence of the page's stored text, with its span."""
    text = api.get(f"/api/documents/{doc_id}/pages/{page}").json()["text"]
    start = text.index(". ") + 2
    end = text.index(".", start + 20) + 1
    return start, end, text[start:end]


def _highlight(api: TestClient, body: str = "", **extra: Any) -> dict[str, Any]:
    pdf = _doc(api, "pdf")
    start, end, quote = _sentence(api, pdf["id"], 1)
    payload = {
        "document_id": pdf["id"],
        "page": 1,
        "span_start": start,
        "span_end": end,
        "quote": quote,
        "boxes": [{"x": 0.1, "y": 0.2, "w": 0.5, "h": 0.02}],
        "color": "#ffd400",
        "body": body,
        **extra,
    }
    r = api.post("/api/notes", json=payload)
    assert r.status_code == 201, r.text
    return dict(r.json())


def test_a_highlight_is_stored_with_its_place_and_not_listed_as_a_document(
    api: TestClient,
) -> None:
    note = _highlight(api, "Why this matters: the safe harbour.", tags=["law", "law", " dmca "])
    assert note["place"] == "your note on p. 1" and note["status"] == "ok"
    assert note["tags"] == ["law", "dmca"] and note["searchable"] is True
    assert note["boxes"] == [{"x": 0.1, "y": 0.2, "w": 0.5, "h": 0.02}]
    assert note["document_title"] == _doc(api, "pdf")["title"]
    page = api.get(f"/api/documents/{note['document_id']}/pages/1").json()["text"]
    assert page[note["span_start"] : note["span_end"]] == note["quote"]
    assert {d["kind"] for d in api.get("/api/documents").json()["documents"]} == {"pdf", "epub"}
    again = api.get(f"/api/notes/{note['id']}").json()
    assert again == note


def test_a_note_is_searchable_at_once_in_every_leg_and_by_kind(api: TestClient) -> None:
    t0 = time.monotonic()
    note = _highlight(api, f"The {NOTE_WORD} grows by the weir; compare the notice procedure.")
    saved_in = time.monotonic() - t0
    assert saved_in < 5, saved_in  # searchable when POST returns (measured: docs/using/notes.md)
    r = api.post("/api/search", json={"query": NOTE_WORD, "context": False})
    hits = r.json()["hits"]
    assert hits and hits[0]["kind"] == "note", hits[:1]
    assert hits[0]["page"] == 1 and hits[0]["page_label"] == "your note on p. 1"
    assert hits[0]["title"] == note["document_title"]
    assert hits[0]["ranks"].get("bm25") and hits[0]["ranks"].get("dense"), hits[0]["ranks"]
    exact = api.post("/api/search", json={"query": f'"{NOTE_WORD}"'}).json()["hits"]
    assert exact and exact[0]["kind"] == "note" and "exact" in exact[0]["ranks"]
    only_docs = api.post("/api/search", json={"query": NOTE_WORD, "kinds": ["pdf", "epub"]})
    assert all(h["kind"] != "note" for h in only_docs.json()["hits"])
    only_notes = api.post("/api/search", json={"query": "notice procedure", "kinds": ["note"]})
    assert {h["kind"] for h in only_notes.json()["hits"]} == {"note"}


def test_an_answer_cites_the_note_as_the_users_note_with_its_page(api: TestClient) -> None:
    _highlight(api, "The quillwort clause: a counter-notice restores the material in ten days.")
    with api.stream(
        "POST", "/api/chat", json={"message": "What does the quillwort clause restore?"}
    ) as r:
        assert r.status_code == 200
        events = chat_events(r.iter_lines())
    sources = first(events, "sources")["sources"]
    mine = [s for s in sources if s["kind"] == "note"]
    assert mine and mine[0]["page_label"] == "your note on p. 1", sources
    done = first(events, "done")
    assert done


def test_filters_edit_and_delete(api: TestClient) -> None:
    note = _highlight(api, "heron by the weir", tags=["birds"])
    r = api.get("/api/notes", params={"tag": "birds"}).json()
    assert [n["id"] for n in r["notes"]] == [note["id"]] and r["total"] == 1
    assert api.get("/api/notes", params={"q": "HERON weir"}).json()["total"] == 1
    assert api.get("/api/notes", params={"q": "heron absent"}).json()["total"] == 0
    doc_id = note["document_id"]
    listed = api.get("/api/notes", params={"document_id": doc_id}).json()["notes"]
    assert note["id"] in [n["id"] for n in listed]
    assert api.get("/api/notes", params={"since": "2100-01-01T00:00:00"}).json()["total"] == 0
    r = api.patch(f"/api/notes/{note['id']}", json={"body": "egret, not heron", "color": "red"})
    assert r.status_code == 200 and r.json()["body"] == "egret, not heron"
    hits = api.post("/api/search", json={"query": "egret", "kinds": ["note"]}).json()["hits"]
    assert any("egret" in h["text"] for h in hits)
    assert api.delete(f"/api/notes/{note['id']}").status_code == 204
    assert api.get(f"/api/notes/{note['id']}").status_code == 404
    hits = api.post("/api/search", json={"query": "egret", "kinds": ["note"]}).json()["hits"]
    assert not any("egret" in h["text"] for h in hits)


def test_bad_notes_get_clear_errors_and_store_nothing(api: TestClient) -> None:
    before = api.get("/api/notes").json()["total"]
    big = api.post(
        "/api/notes",
        json={"document_id": _doc(api, "pdf")["id"], "page": 1, "body": "x" * 1_000_000},
    )
    assert big.status_code == 413 and "100 KB" in big.json()["error"]["message"]
    missing = api.post("/api/notes", json={"document_id": 999_999, "page": 1, "body": "x"})
    assert missing.status_code == 404
    no_page = api.post("/api/notes", json={"document_id": _doc(api, "pdf")["id"], "page": 999})
    assert no_page.status_code == 404 and "no page 999" in no_page.json()["error"]["message"]
    bad_span = api.post(
        "/api/notes",
        json={"document_id": _doc(api, "pdf")["id"], "page": 1, "span_start": 5, "quote": "a"},
    )
    assert bad_span.status_code == 400
    assert api.post("/api/notes", json={}).status_code == 400
    assert api.get("/api/notes").json()["total"] == before
    # Markdown with a script is stored as written; the web app renders it sanitised.
    script = "<script>alert(1)</script> **bold**"
    kept = _highlight(api, script)
    assert kept["body"] == script


def test_an_answer_kept_as_a_note_has_its_sources_and_links_back(api: TestClient) -> None:
    with api.stream("POST", "/api/chat", json={"message": "Who is the White Rabbit?"}) as r:
        events = chat_events(r.iter_lines())
    done = first(events, "done")
    conv, message = done["conversation_id"], done["message_id"]
    r = api.post("/api/notes", json={"conversation_id": conv, "message_id": message})
    assert r.status_code == 201, r.text
    note = r.json()
    assert note["conversation_id"] == conv and note["place"] == "your saved answer"
    assert "Sources:" in note["body"] and "[1] " in note["body"]
    assert "Who is the White Rabbit?" in note["body"]
    assert api.post("/api/notes", json={"conversation_id": 999_999}).status_code == 404


def test_a_page_read_again_moves_or_orphans_its_highlights(library: Settings) -> None:
    with TestClient(make_app(library)) as api:
        note = _highlight(api, "kept through a re-read")
        other = _highlight(api, "to be orphaned")
    db = open_database(library)
    try:
        with db.write() as conn:
            row = notes.get_note(conn, note["id"])
            moved_text = "A new first line.\n" + row["quote"] + "\nmore"
            orphan_text = "Nothing of the old page remains."
            counts = note_sync.relocate(conn, note["document_id"], [Page(1, moved_text)])
            assert counts["moved"] >= 1
            moved = notes.get_note(conn, note["id"])
            assert moved["status"] == "moved"
            assert moved_text[moved["span_start"] : moved["span_end"]] == row["quote"]
            note_sync.relocate(conn, note["document_id"], [Page(1, orphan_text)])
            gone = notes.get_note(conn, other["id"])
            assert gone["status"] == "orphaned" and gone["quote"] == other["quote"]
            conn.rollback()
    finally:
        db.dispose()


def test_markdown_export_round_trips_quotes_and_citations(api: TestClient) -> None:
    note = _highlight(api, "Export me.", tags=["export"])
    doc = note["document_id"]
    r = api.get("/api/notes/export", params={"document_id": doc, "base_url": "http://q.local"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/markdown")
    text = r.text
    _, front, body = text.split("---\n", 2)
    meta = yaml.safe_load(front)
    assert meta["quire_document"] == doc and meta["title"] == note["document_title"]
    assert "export" in meta["tags"]
    listed = api.get("/api/notes", params={"document_id": doc}).json()["notes"]
    assert meta["notes"] == len(listed)
    quotes = _parse_quotes(body)
    wanted = {(n["quote"], n["id"]) for n in listed if n["quote"]}
    assert {(q, i) for q, _, i in quotes} == wanted
    assert all(cite == f"*{note['document_title']}*, p. 1" for _, cite, _ in quotes)
    assert "## p. 1" in body and "Export me." in body
    assert meta["citation_style"] == "quire" and "reference" not in meta


@pytest.mark.parametrize(
    ("style", "cited"),
    [
        # The DMCA summary's PDF names its author (an office, "- jmf" included) and no date.
        ("apa", "(United States Copyright Office - jmf, n.d., p. 1)"),
        ("chicago-author-date", "(United States Copyright Office - jmf, n.d., 1)"),
    ],
)
def test_markdown_export_cites_in_a_chosen_csl_style(
    api: TestClient, style: str, cited: str
) -> None:
    note = _highlight(api, f"Cited in {style}.")
    doc, title = note["document_id"], note["document_title"]
    r = api.get("/api/notes/export", params={"document_id": doc, "style": style.upper()})
    assert r.status_code == 200, r.text
    _, front, body = r.text.split("---\n", 2)
    meta = yaml.safe_load(front)
    assert meta["citation_style"] == style and title in meta["reference"]
    listed = api.get("/api/notes", params={"document_id": doc}).json()["notes"]
    quotes = _parse_quotes(body)
    assert {(q, i) for q, _, i in quotes} == {(n["quote"], n["id"]) for n in listed if n["quote"]}
    assert {c for _, c, _ in quotes} == {cited}, quotes
    assert meta["reference"] in body and f"Cited in {style}." in body


def test_an_unknown_style_is_refused_with_where_the_names_are(api: TestClient) -> None:
    doc = _doc(api, "pdf")["id"]
    r = api.get("/api/notes/export", params={"document_id": doc, "style": "apaa"})
    assert r.status_code == 422, r.text
    message = r.json()["error"]["message"]
    assert "did you mean apa" in message and "/api/notes/styles" in message, message
    r = api.get("/api/notes/export", params={"document_id": doc, "style": "../../etc/passwd"})
    assert r.status_code == 422 and "unknown citation style" in r.text
    styles = api.get("/api/notes/styles", params={"q": "chicago author date"}).json()
    names = [s["name"] for s in styles["styles"]]
    assert names[0] == "chicago-author-date" and styles["total"] >= len(names) > 3
    assert styles["default"] == "quire"
    assert api.get("/api/notes/styles").json()["styles"][0]["name"] == "quire"


def _parse_quotes(body: str) -> list[tuple[str, str, int]]:
    """(quote, citation, note id) of each block quote of an export."""
    out = []
    block: list[str] = []
    for line in body.splitlines():
        if line.startswith("> — "):
            cite, link = line[4:].rsplit(" ([open in Quire](", 1)
            out.append(("\n".join(block), cite, int(link.rstrip(")").split("note=")[1])))
            block = []
        elif line.startswith(">"):
            block.append(line[2:])
    return out


def test_a_long_note_is_found_at_once_and_embedded_by_the_worker(
    api: TestClient, library: Settings
) -> None:
    filler = "The notice must identify the material and where it is found online. "
    body = "longmarshnote " + filler * (90_000 // len(filler))
    note = _highlight(api, body)
    hits = api.post("/api/search", json={"query": "longmarshnote", "kinds": ["note"]}).json()
    assert hits["hits"] and "bm25" in hits["hits"][0]["ranks"]
    db = open_database(library)
    try:
        with db.read() as conn:
            index_id = conn.execute(
                select(schema.notes.c.index_id).where(schema.notes.c.id == note["id"])
            ).scalar_one()
            assert vectors.missing_count(conn, index_id) > notes_indexing.EMBED_INLINE
        drain(library, db)  # the re-embed job the save queued
        with db.read() as conn:
            assert vectors.missing_count(conn, index_id) == 0
            status = conn.execute(
                select(schema.documents.c.status).where(schema.documents.c.id == index_id)
            ).scalar_one()
            assert status == "ready"
    finally:
        db.dispose()


def test_an_answers_bibtex_and_csl_carry_the_notes_on_what_it_cites(api: TestClient) -> None:
    note = _highlight(api, "bibnote: the anti-circumvention core.", tags=["dmca"])
    with api.stream(
        "POST", "/api/chat", json={"message": "What does section 1201 prohibit?", "kinds": ["pdf"]}
    ) as r:
        done = first(chat_events(r.iter_lines()), "done")
    message = done["message_id"]
    bib = api.get(f"/api/messages/{message}/export", params={"format": "bibtex"})
    assert bib.status_code == 200, bib.text
    (entry,) = [e for e in bibtexparser.parse_string(bib.text).entries if "annote" in e]
    annote = " ".join(entry["annote"].split())
    assert "bibnote: the anti-circumvention core." in annote and "#dmca" in annote
    assert annote.startswith("p. 1:") and note["quote"].split()[0] in annote
    csl = api.get(f"/api/messages/{message}/export", params={"format": "csl"}).json()
    assert any("bibnote" in item.get("annote", "") for item in csl)


def test_deleting_a_document_deletes_its_notes_and_their_index(library: Settings) -> None:
    """Last in this module: it deletes the PDF the others write notes on."""
    with TestClient(make_app(library)) as api:
        note = _highlight(api, "a lonely bittern note")
        assert api.post("/api/search", json={"query": "bittern"}).json()["hits"]
        assert api.delete(f"/api/documents/{note['document_id']}").status_code == 204
        assert api.get(f"/api/notes/{note['id']}").status_code == 404
        hits = api.post("/api/search", json={"query": "bittern"}).json()["hits"]
        assert not [h for h in hits if h["kind"] == "note"]
        r = api.post("/api/notes", json={"document_id": note["document_id"], "body": "x"})
        assert r.status_code == 404
