"""Zotero's annotations (issue 37, item 4): the real sample zotero.sqlite (Zotero's own schema,
userdata 121, with its itemAnnotations table) gets annotations on two attachments, one a
three-page PDF; `import_zotero` brings them in as notes on the right pages, the worker places
their quotes in the page text and embeds them; after an edit, a deletion and an addition in
Zotero, a re-import mirrors them; a trashed annotation never comes in."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from fpdf import FPDF

from quire.config import Settings
from quire.sources.zotero.importer import import_zotero
from quire.storage.migrate import open_database
from tests.ingest.test_zotero import build_library
from tests.runtime import drain, make_app

pytestmark = pytest.mark.both_backends

PAGES = (
    "Efficient transforms. An introduction to the method and its history.",
    "The quasigeostrophic estimate bounds every term of the scheme on each grid.",
    "Boundary layers close the scheme; the appendix lists the grids.",
)
#: (annotation item id, key, attachment item id, type, text, comment, pageIndex, pageLabel)
ANNOTATIONS = [
    (101, "ANNHIGH1", 8, 1, "quasigeostrophic estimate bounds every term", "key claim", 1, "2"),
    (102, "ANNNOTE2", 8, 2, None, "check the boundary layers", 2, "3"),
    (103, "ANNUNDR3", 10, 5, "subsolution estimate", "", 0, "1"),
    (104, "ANNTRASH", 10, 1, "subsolution", "in the trash", 0, "1"),
]


def _pages_pdf(path: Path) -> None:
    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for text in PAGES:
        pdf.add_page()
        pdf.multi_cell(0, 8, text)
    pdf.output(str(path))


def _annotate(db: Path, rows: list[tuple[Any, ...]]) -> None:
    conn = sqlite3.connect(db)
    with conn:
        for item_id, key, parent, kind, text, comment, index, label in rows:
            conn.execute(
                "INSERT INTO items (itemID, itemTypeID, libraryID, key) VALUES (?, 1, 1, ?)",
                (item_id, key),
            )
            position = {"pageIndex": index, "rects": [[72.0, 700.0, 300.0, 712.0]]}
            conn.execute(
                "INSERT INTO itemAnnotations (itemID, parentItemID, type, text, comment, color, "
                "pageLabel, sortIndex, position, isExternal) VALUES (?,?,?,?,?,?,?,?,?,0)",
                (item_id, parent, kind, text, comment, "#ffd400", label,
                 f"{index:05d}|000000|00000", json.dumps(position)),
            )  # fmt: skip
    conn.close()


@pytest.fixture(scope="module")
def zotero(
    tmp_path_factory: pytest.TempPathFactory, module_database_url: str | None
) -> Iterator[tuple[Settings, Path]]:
    root = tmp_path_factory.mktemp("zotero-notes")
    data = build_library(root)
    conn = sqlite3.connect(data / "zotero.sqlite")
    raw = conn.execute("SELECT path FROM itemAttachments WHERE itemID = 8").fetchone()[0]
    conn.close()
    _pages_pdf(data / "storage" / "5KW7TMDH" / raw.removeprefix("storage:"))
    db = data / "zotero.sqlite"
    _annotate(db, ANNOTATIONS)
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("INSERT INTO deletedItems (itemID) VALUES (104)")
        conn.execute("INSERT INTO tags (tagID, name) VALUES (2, 'claim')")
        conn.execute("INSERT INTO itemTags (itemID, tagID, type) VALUES (101, 2, 0)")
    conn.close()
    settings = Settings(
        data_dir=root / "data", llm_backends="none", database_url=module_database_url
    )
    yield settings, data


def _import(settings: Settings, data: Path) -> dict[str, int]:
    quire_db = open_database(settings)
    try:
        summary = import_zotero(quire_db, settings, data)
    finally:
        quire_db.dispose()
    drain(settings)
    return summary.annotations.as_dict()


def _notes(api: TestClient) -> dict[str, dict[str, Any]]:
    listed = api.get("/api/notes", params={"origin": "zotero"}).json()["notes"]
    return {n["zotero_key"]: n for n in listed}


def test_annotations_import_on_their_pages_and_a_reimport_mirrors_zotero(
    zotero: tuple[Settings, Path],
) -> None:
    settings, data = zotero
    assert _import(settings, data) == {"added": 3, "updated": 0, "removed": 0, "unchanged": 0}
    with TestClient(make_app(settings)) as api:
        notes = _notes(api)
        assert set(notes) == {"ANNHIGH1", "ANNNOTE2", "ANNUNDR3"}  # not the trashed one
        high, note, under = notes["ANNHIGH1"], notes["ANNNOTE2"], notes["ANNUNDR3"]
        assert high["document_id"] == note["document_id"] != under["document_id"]
        assert (high["page"], note["page"], under["page"]) == (2, 3, 1)
        assert high["annotation_type"] == "highlight" and under["annotation_type"] == "underline"
        assert high["quote"] == ANNOTATIONS[0][4] and high["body"] == "key claim"
        assert high["tags"] == ["claim"] and high["color"] == "#ffd400"
        assert high["boxes"] == [{"pdf": [72.0, 700.0, 300.0, 712.0]}]
        assert note["quote"] == "" and note["body"] == "check the boundary layers"
        # Placed in the page's text once the worker wrote the pages.
        for n in (high, under):
            text = api.get(f"/api/documents/{n['document_id']}/pages/{n['page']}").json()["text"]
            assert n["status"] == "ok" and text[n["span_start"] : n["span_end"]] == n["quote"]
        hits = api.post(
            "/api/search", json={"query": "check the boundary layers", "kinds": ["note"]}
        ).json()["hits"]
        assert hits[0]["page_label"] == "your note on p. 3" and "dense" in hits[0]["ranks"]

    db = data / "zotero.sqlite"
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE itemAnnotations SET comment = 'the key claim' WHERE itemID = 101")
        conn.execute("DELETE FROM itemAnnotations WHERE itemID = 102")
        conn.execute("DELETE FROM items WHERE itemID = 102")
    conn.close()
    _annotate(db, [(105, "ANNNEW05", 10, 1, "estimate", "added later", 0, "1")])
    assert _import(settings, data) == {"added": 1, "updated": 1, "removed": 1, "unchanged": 1}
    with TestClient(make_app(settings)) as api:
        notes = _notes(api)
        assert set(notes) == {"ANNHIGH1", "ANNUNDR3", "ANNNEW05"}
        assert notes["ANNHIGH1"]["body"] == "the key claim"
        assert notes["ANNHIGH1"]["id"] == high["id"]  # the same note, edited
        assert notes["ANNNEW05"]["page"] == 1 and notes["ANNNEW05"]["status"] == "ok"
        gone = api.post("/api/search", json={"query": "boundary layers", "kinds": ["note"]})
        assert not [h for h in gone.json()["hits"] if "boundary layers" in h["text"]]
    assert _import(settings, data) == {"added": 0, "updated": 0, "removed": 0, "unchanged": 3}
