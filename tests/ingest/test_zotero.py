"""Zotero into the library (issue 15 item 4): the real sample database and exports in
../shared/data/docs/zotero, and a library built from the sample's own zotero.sqlite with real
PDFs in its storage/ folders, a collection, a tag and a pinned citation key, imported through
`quire import zotero`, ingested by the real worker, searched through the API with the
collection and tag filters, and an answer's BibTeX carrying the item's citation key."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import bibtexparser
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from fpdf import FPDF
from sqlalchemy import text

from quire.cli import main
from quire.config import Settings
from quire.errors import InputError
from quire.ingest.worker import Worker
from quire.sources.zotero.importer import REMOVED, import_zotero
from quire.sources.zotero.read import ZoteroUnreadable, read_library
from quire.storage.migrate import open_database
from tests.api.sse import chat_events, first
from tests.conftest import DOCS
from tests.runtime import drain, make_app, seed_sqlite

pytestmark = pytest.mark.both_backends

ZOTERO = DOCS / "zotero"
SAMPLE = ZOTERO / "papis-zotero" / "sql"
#: The sample's items with a PDF: item key -> (attachment key, a word only its PDF will hold).
WORDS = {
    "GPPHXHHH": ("5KW7TMDH", "quasigeostrophic"),
    "X8H6TF8V": ("PIMHYJGK", "subsolution"),
    "I6RNZ53Q": ("J8FIHBUY", "transmission"),
    "IH8J2JJP": ("WN7WJBGS", "summation"),
}


def _pdf(path: Path, title: str, word: str) -> None:
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.multi_cell(
        0,
        8,
        f"{title}. The central notion of this paper is the {word} estimate, which bounds "
        f"every term of the scheme; the {word} estimate holds on each grid we tried.",
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    pdf.output(str(path))


def _sql(db: Path, *statements: tuple[str, tuple[object, ...]]) -> None:
    conn = sqlite3.connect(db)
    with conn:
        for sql, args in statements:
            conn.execute(sql, args)
    conn.close()


def build_library(root: Path) -> Path:
    """The sample's zotero.sqlite with a real, distinct PDF per attachment (the sample's four
    are one placeholder), items 7 in collection Thesis/Methods with a pinned citation key, and
    IH8J2JJP tagged "sbp"."""
    data = root / "Zotero"
    data.mkdir(parents=True)
    shutil.copyfile(SAMPLE / "zotero.sqlite", data / "zotero.sqlite")
    conn = sqlite3.connect(data / "zotero.sqlite")
    rows = conn.execute(
        "SELECT ai.key, a.path FROM itemAttachments a JOIN items ai USING (itemID)"
    ).fetchall()
    conn.close()
    for key, raw in rows:
        item = next(i for i, (att, _) in WORDS.items() if att == key)
        _pdf(data / "storage" / key / raw.removeprefix("storage:"), raw[8:60], WORDS[item][1])
    _sql(
        data / "zotero.sqlite",
        (
            "INSERT INTO collections (collectionID, collectionName, libraryID, key) "
            "VALUES (1, 'Thesis', 1, 'COLL0001')",
            (),
        ),
        (
            "INSERT INTO collections (collectionID, collectionName, parentCollectionID, "
            "libraryID, key) VALUES (2, 'Methods', 1, 1, 'COLL0002')",
            (),
        ),
        ("INSERT INTO collectionItems (collectionID, itemID) VALUES (2, 7)", ()),
        ("INSERT INTO tags (tagID, name) VALUES (1, 'sbp')", ()),
        ("INSERT INTO itemTags (itemID, tagID, type) VALUES (14, 1, 0)", ()),
        (
            "INSERT INTO itemDataValues (valueID, value) VALUES (9001, ?)",
            ("Citation Key: schaeffer2013shtns",),
        ),
        ("INSERT INTO itemData (itemID, fieldID, valueID) VALUES (7, 16, 9001)", ()),
    )
    return data


# -- reading the real samples -----------------------------------------------------------------
def test_the_sample_database_reads_with_metadata() -> None:
    library = read_library(SAMPLE)
    assert library.format == "sqlite" and library.complete
    items = {i.key: i for i in library.items}
    assert len(items) == 5  # 5 articles; their 4 PDF attachments are attachments, not items
    schaeffer = items["item:GPPHXHHH"]
    assert schaeffer.cite["authors"] == ["Schaeffer, Nathanaël"]
    assert schaeffer.cite["year"] == 2013 and schaeffer.cite["date"] == "2013-03"
    assert schaeffer.cite["doi"] == "10.1002/ggge.20071"
    assert schaeffer.cite["container"] == "Geochemistry, Geophysics, Geosystems"
    (att,) = schaeffer.attachments
    assert att.key == "5KW7TMDH" and att.problem is None
    assert att.path == SAMPLE.resolve() / "storage" / "5KW7TMDH" / (
        "Schaeffer - 2013 - Efficient spherical harmonic transforms aimed at p.pdf"
    )
    assert items["item:X8H6TF8V"].cite["authors"] == ["De Lellis, Camillo", "Székelyhidi, László"]
    assert sum(len(i.attachments) for i in library.items) == 4


def test_the_biblatex_export_keeps_the_file_after_a_missing_comma() -> None:
    library = read_library(ZOTERO / "papis-zotero" / "bibtex" / "zotero-library.bib")
    items = {i.key: i for i in library.items}
    first_entry = items["bib:schaeffer_efficient_2013"]  # no comma before its file field
    (att,) = first_entry.attachments
    assert att.path is not None and att.path.is_file() and att.title == "Full Text"
    assert first_entry.cite["citation_key"] == "schaeffer_efficient_2013"
    assert first_entry.cite["container"] == "Geochem. Geophys. Geosyst."
    assert items["bib:svard_review_2014"].tags == ["sbp"]
    assert [a.path.name for a in items["bib:svard_review_2014"].attachments if a.path] == [
        "Svärd and Nordström - 2014 - Review of summation-by-parts schemes for initial–b.pdf"
    ]
    assert items["bib:morinishi_fully_1998"].attachments == []


def test_better_bibtex_json_and_its_windows_paths() -> None:
    library = read_library(ZOTERO / "better-bibtex" / "bbt-json_windows-paths_1939.json")
    (item,) = library.items
    assert item.cite["citation_key"] == "wainwright-2007-GraphicalModelsExponential"
    # No item key or item URI in this export: keyed by the citation key, as its .bib is.
    assert item.key == "bib:wainwright-2007-GraphicalModelsExponential"
    (att,) = item.attachments
    assert att.key == "SJGFJW9F"  # from the attachment's zotero.org URI
    bib = read_library(ZOTERO / "better-bibtex" / "bbt-json_windows-paths_1939.bibtex")
    (bib_att,) = bib.items[0].attachments
    assert bib_att.path is not None and bib_att.path.parts[-3:] == (
        "BBTTEST",
        "storage",
        "Baltes_Staudinger_2000_Wisdom.pdf",
    )
    tags = read_library(ZOTERO / "better-bibtex" / "bbt-json_attachments_BetterBibLaTeX.009.json")
    assert tags.items[0].tags == ["Vulcanian eruptions", "breadcrust", "plinian"]


def test_csl_json_says_it_names_no_files() -> None:
    library = read_library(ZOTERO / "better-bibtex" / "csl-json_pandoc-citation-export.csl.json")
    assert library.format == "csl-json" and len(library.items) == 4
    assert all(not i.attachments for i in library.items)
    assert library.note and "no files" in library.note
    berndt = next(i for i in library.items if i.cite.get("citation_key") == "Berndt1994")
    assert "<i>" not in berndt.cite["title"] and "Prouerbia" in berndt.cite["title"]


# -- importing --------------------------------------------------------------------------------
@pytest.fixture
def settings(tmp_path: Path, database_url: str | None, sqlite_template: Path) -> Settings:
    built = Settings(data_dir=tmp_path / "data", llm_backends="none", database_url=database_url)
    if database_url is None:
        seed_sqlite(sqlite_template, built.data_dir)
    return built


def test_the_sample_imports_once_and_reports_the_shared_placeholder(settings: Settings) -> None:
    db = open_database(settings)
    summary = import_zotero(db, settings, SAMPLE)
    # The sample's four PDFs are one placeholder file: one document, three reported.
    assert (summary.items, summary.attachments, summary.new) == (5, 4, 1)
    assert len(summary.skipped) == 3
    assert all("the same file as item" in why for _, why in summary.skipped)
    assert len(summary.jobs) == 1
    again = import_zotero(db, settings, SAMPLE)
    assert (again.new, again.updated, again.metadata, again.unchanged) == (0, 0, 0, 1)
    assert again.jobs == {}
    db.dispose()


def test_a_corrupt_database_is_reported_and_changes_nothing(
    settings: Settings, tmp_path: Path
) -> None:
    bad = tmp_path / "bad" / "zotero.sqlite"
    bad.parent.mkdir()
    bad.write_bytes(b"SQLite format 3\x00" + b"\x13" * 8000)
    db = open_database(settings)
    with pytest.raises(ZoteroUnreadable, match="not a readable Zotero database"):
        import_zotero(db, settings, bad.parent)
    with pytest.raises(InputError, match="no zotero.sqlite"):
        import_zotero(db, settings, tmp_path)
    with db.read() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM documents").scalar() == 0
        run = conn.exec_driver_sql("SELECT ok, error FROM source_runs").first()
    assert run is not None and run[0] == 0 and "not a readable Zotero database" in run[1]
    db.dispose()
    result = CliRunner().invoke(
        main, ["import", "zotero", str(bad.parent)], env={"QUIRE_DATA_DIR": str(settings.data_dir)}
    )
    assert result.exit_code == 1
    assert "not a readable Zotero database" in result.output


def test_a_locked_database_is_read_from_its_copy(settings: Settings, tmp_path: Path) -> None:
    data = build_library(tmp_path)
    # Zotero running: an exclusive lock and an uncommitted change (a new tag) in its journal.
    zotero = sqlite3.connect(data / "zotero.sqlite", isolation_level=None)
    zotero.execute("PRAGMA locking_mode = EXCLUSIVE")
    zotero.execute("BEGIN EXCLUSIVE")
    zotero.execute("INSERT INTO tags (tagID, name) VALUES (2, 'uncommitted')")
    zotero.execute("INSERT INTO itemTags (itemID, tagID, type) VALUES (7, 2, 0)")
    try:
        library = read_library(data)
    finally:
        zotero.execute("ROLLBACK")
        zotero.close()
    schaeffer = next(i for i in library.items if i.key == "item:GPPHXHHH")
    assert schaeffer.tags == [] and schaeffer.collections == ["Thesis/Methods"]
    assert schaeffer.cite["citation_key"] == "schaeffer2013shtns"


@pytest.fixture(scope="module")
def zotero_api(
    tmp_path_factory: pytest.TempPathFactory, module_database_url: str | None
) -> Iterator[tuple[TestClient, Settings, Path]]:
    root = tmp_path_factory.mktemp("zotero")
    data = build_library(root)
    settings = Settings(
        data_dir=root / "data", llm_backends="none", database_url=module_database_url
    )
    env = {"QUIRE_DATA_DIR": str(settings.data_dir), "QUIRE_LLM_BACKENDS": "none"}
    if module_database_url:
        env["QUIRE_DATABASE_URL"] = module_database_url
    result = CliRunner().invoke(main, ["import", "zotero", str(data), "--json"], env=env)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output[result.output.index("{") :])
    assert (summary["new"], summary["attachments"], summary["skipped"]) == (4, 4, [])
    drain(settings)
    with TestClient(make_app(settings)) as client:
        yield client, settings, data


def _search(client: TestClient, query: str, **options: object) -> list[dict[str, object]]:
    r = client.post("/api/search", json={"query": query, "limit": 10, **options})
    assert r.status_code == 200, r.text
    return r.json()["hits"]


def test_imported_items_carry_their_metadata(zotero_api) -> None:
    client, _, data = zotero_api
    docs = {d["title"]: d for d in client.get("/api/documents").json()["documents"]}
    assert len(docs) == 4 and all(d["status"] == "ready" for d in docs.values())
    doc = docs[
        "Efficient spherical harmonic transforms aimed at pseudospectral numerical simulations"
    ]
    assert doc["origin"] == "zotero" and doc["author"] == "Schaeffer, Nathanaël"
    meta = doc["metadata"]
    assert meta["year"] == 2013 and meta["doi"] == "10.1002/ggge.20071"
    assert meta["citation_key"] == "schaeffer2013shtns"
    assert meta["origin"]["collections"] == ["Thesis/Methods"]
    assert meta["origin"]["library"] == str(data.resolve())


def test_collections_and_tags_filter_the_search(zotero_api) -> None:
    client, _, _ = zotero_api
    everywhere = {h["document_id"] for h in _search(client, "estimate")}
    assert len(everywhere) == 4
    in_thesis = _search(client, "estimate", collections=["Thesis"])  # the parent holds Methods
    assert {h["title"] for h in in_thesis} == {
        "Efficient spherical harmonic transforms aimed at pseudospectral numerical simulations"
    }
    assert _search(client, "estimate", collections=["Thesis/Methods"]) == in_thesis
    assert _search(client, "estimate", collections=["Methods"]) == []
    tagged = _search(client, "estimate", tags=["sbp"])
    assert {h["title"] for h in tagged} == {
        "Review of summation-by-parts schemes for initial–boundary-value problems"
    }
    assert len({h["document_id"] for h in _search(client, "estimate", origins=["zotero"])}) == 4
    assert _search(client, "estimate", origins=["folder"]) == []


def test_the_cli_filters_by_collection_and_tag(zotero_api) -> None:
    _, settings, _ = zotero_api
    env = {"QUIRE_DATA_DIR": str(settings.data_dir), "QUIRE_LLM_BACKENDS": "none"}
    if settings.database_url is not None:
        env["QUIRE_DATABASE_URL"] = settings.database_url.get_secret_value()
    result = CliRunner().invoke(
        main, ["search", "estimate", "--tag", "sbp", "--origin", "zotero", "--json"], env=env
    )
    assert result.exit_code == 0, result.output
    hits = json.loads(result.output[result.output.index("{") :])["hits"]
    assert {h["title"] for h in hits} == {
        "Review of summation-by-parts schemes for initial–boundary-value problems"
    }
    bad = CliRunner().invoke(main, ["search", "estimate", "--origin", "dropbox"], env=env)
    assert bad.exit_code == 2 and "dropbox" in bad.output


def test_the_sources_route_lists_the_import_and_the_facets(zotero_api) -> None:
    client, _, data = zotero_api
    body = client.get("/api/library/sources").json()
    assert body["origins"] == [{"origin": "zotero", "documents": 4, "chunks": 4}]
    (run,) = body["imports"]
    assert run["source"] == "zotero" and run["location"] == str(data.resolve()) and run["ok"]
    assert run["summary"]["new"] == 4
    assert body["collections"] == [{"name": "Thesis/Methods", "documents": 1}]
    assert body["tags"] == [{"name": "sbp", "documents": 1}]


def test_the_bibtex_of_a_cited_item_carries_its_citation_key(zotero_api) -> None:
    client, _, _ = zotero_api
    with client.stream(
        "POST", "/api/chat", json={"message": "What is the quasigeostrophic estimate?"}
    ) as r:
        assert r.status_code == 200
        events = chat_events(r.iter_lines())
    done = first(events, "done")
    r = client.get(f"/api/messages/{done['message_id']}/export", params={"format": "bibtex"})
    assert r.status_code == 200
    entries = {e.key: e for e in bibtexparser.parse_string(r.text).entries}
    assert "schaeffer2013shtns" in entries
    entry = entries["schaeffer2013shtns"]
    assert entry.entry_type == "article"
    assert entry["journal"] == "Geochemistry, Geophysics, Geosystems"
    assert entry["doi"] == "10.1002/ggge.20071" and entry["year"] == "2013"


def test_a_rerun_reads_only_what_changed(zotero_api) -> None:
    client, settings, data = zotero_api
    db = open_database(settings)
    try:
        same = import_zotero(db, settings, data)
        assert (same.new, same.updated, same.metadata, same.unchanged) == (0, 0, 0, 4)
        assert same.jobs == {}
        # A tag added in Zotero: metadata only, no file read again.
        _sql(
            data / "zotero.sqlite",
            ("INSERT INTO tags (tagID, name) VALUES (3, 'euler')", ()),
            ("INSERT INTO itemTags (itemID, tagID, type) VALUES (9, 3, 0)", ()),
        )
        tagged = import_zotero(db, settings, data)
        assert (tagged.metadata, tagged.unchanged, tagged.jobs) == (1, 3, {})
        assert {h["title"] for h in _search(client, "estimate", tags=["euler"])} == {
            "The Euler equations as a differential inclusion"
        }
        # A changed PDF: a new version of its document, one job.
        pdf = next((data / "storage" / "J8FIHBUY").glob("*.pdf"))
        _pdf(pdf, "Fractional Laplacians, second edition", "transmission")
        changed = import_zotero(db, settings, data)
        assert (changed.updated, changed.unchanged, len(changed.jobs)) == (1, 3, 1)
        # An item moved to the trash: its document is hidden, its data kept; back again.
        _sql(data / "zotero.sqlite", ("INSERT INTO deletedItems (itemID) VALUES (14)", ()))
        trashed = import_zotero(db, settings, data)
        assert trashed.removed == 1
        with db.read() as conn:
            status, error = conn.execute(
                text("SELECT status, error FROM documents WHERE source_key = :k"),
                {"k": "zotero:item:IH8J2JJP/WN7WJBGS"},
            ).one()
        assert (status, error) == ("failed", REMOVED)
        svard = "Review of summation-by-parts schemes for initial–boundary-value problems"
        assert svard not in {h["title"] for h in _search(client, "summation")}
        _sql(data / "zotero.sqlite", ("DELETE FROM deletedItems WHERE itemID = 14", ()))
        back = import_zotero(db, settings, data)
        assert back.restored == 1 and len(back.jobs) == 1
    finally:
        db.dispose()


def test_an_unreadable_attachment_fails_once_and_is_not_retried_unchanged(
    settings: Settings, tmp_path: Path
) -> None:
    data = build_library(tmp_path)
    bad = next((data / "storage" / "J8FIHBUY").glob("*.pdf"))
    bad.write_bytes(b"%PDF-1.4\n" + b"\x00garbage" * 100)
    db = open_database(settings)
    try:
        first = import_zotero(db, settings, data)
        assert first.new == 4
        Worker(settings, db=db).run(drain=True)
        with db.read() as conn:
            statuses = dict(conn.exec_driver_sql("SELECT source_key, status FROM documents").all())
        assert statuses.pop("zotero:item:I6RNZ53Q/J8FIHBUY") == "failed"
        assert set(statuses.values()) == {"ready"}
        again = import_zotero(db, settings, data)  # the same broken file: not queued again
        assert (again.unchanged, again.jobs) == (4, {})
    finally:
        db.dispose()
