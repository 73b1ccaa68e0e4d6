"""Office files seen as the original: a real Word report and deck ingested through the API with
real LibreOffice get a PDF rendition, served at /rendition, whose pages hold the cited text;
legacy .doc, .ppt, .xls and .rtf (made here by LibreOffice from real files) are read and cited;
a conversion that fails or runs out of time leaves the text readable with a notice; without
LibreOffice a legacy file fails with the package to install and a .docx has no rendition."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from quire.config import Settings
from quire.errors import CorruptFile
from quire.formats.office.convert import convert
from quire.formats.types import Extracted
from quire.ingest.rendition import Rendition, apply, page_texts
from quire.storage.records import Page
from tests.api.library import load_library
from tests.conftest import DOCS
from tests.runtime import make_app

OFFICE = DOCS / "office"
DOCX = OFFICE / "docx" / "halfmoonbay-adu-code-ch18-33.docx"
SECTIONS_DOCX = OFFICE / "docx" / "hipaa-privacy-notice.docx"
PPTX = OFFICE / "pptx" / "fpbench-benchmark-format-talk.pptx"
XLSX = OFFICE / "xlsx" / "onlyoffice-sample-olympic-medals.xlsx"


def docs_by_name(client: TestClient) -> dict[str, dict[str, Any]]:
    return {d["filename"]: d for d in client.get("/api/documents").json()["documents"]}


def words(text: str) -> str:
    return " ".join(text.lower().split())


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, Path]]:
    root = tmp_path_factory.mktemp("rendition")
    settings = Settings(data_dir=root / "data", llm_backends="none")
    with TestClient(make_app(settings)) as client:
        load_library(client, settings, (DOCX, SECTIONS_DOCX, PPTX))
        yield client, root


def test_a_deck_is_rendered_a_page_per_slide(rendered: tuple[TestClient, Path]) -> None:
    client, root = rendered
    doc = docs_by_name(client)[PPTX.name]
    assert doc["status"] == "ready", doc["error"]
    r = client.get(f"/api/documents/{doc['id']}/rendition")
    assert r.status_code == 200 and r.headers["content-type"] == "application/pdf"
    pdf = root / "deck.pdf"
    pdf.write_bytes(r.content)
    texts = page_texts(pdf)
    assert len(texts) == doc["page_count"] == doc["metadata"]["rendition"]["pages"]
    slide = client.get(f"/api/documents/{doc['id']}/pages/3").json()
    assert slide["metadata"]["rendition_page"] == 3
    first_line = next(line for line in slide["text"].splitlines() if len(line) > 15)
    assert words(first_line)[:30] in words(texts[2])


def test_a_word_page_is_found_on_its_rendition_page(rendered: tuple[TestClient, Path]) -> None:
    client, root = rendered
    doc = docs_by_name(client)[DOCX.name]
    assert doc["metadata"]["pagination"] == "rendered"
    r = client.get(f"/api/documents/{doc['id']}/rendition")
    assert r.status_code == 200
    pdf = root / "word.pdf"
    pdf.write_bytes(r.content)
    texts = page_texts(pdf)
    assert doc["metadata"]["rendition"] == {
        "pages": len(texts),
        "bytes": len(r.content),
        "basis": "word",
    }
    page = client.get(f"/api/documents/{doc['id']}/pages/12").json()
    shown = page["metadata"]["rendition_page"]
    sentence = "less than 750 square feet"
    assert sentence in page["text"] and sentence in words(texts[shown - 1])


def test_a_document_by_sections_is_cited_with_libreoffice_pages(
    rendered: tuple[TestClient, Path],
) -> None:
    client, _ = rendered
    doc = docs_by_name(client)[SECTIONS_DOCX.name]
    assert doc["metadata"]["pagination"] == "sections"
    assert doc["metadata"]["rendition"]["basis"] == "libreoffice"
    pages = client.get(f"/api/documents/{doc['id']}/pages").json()["pages"]
    labels = [p["page_label"] for p in pages]
    assert all("as LibreOffice paginates it" in (label or "") for label in labels), labels


def test_no_rendition_is_a_clear_404(rendered: tuple[TestClient, Path]) -> None:
    client, _ = rendered
    r = client.get("/api/documents/9999/rendition")
    assert r.status_code == 404


@pytest.fixture(scope="module")
def legacy(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A .doc, .rtf, .ppt and .xls made by LibreOffice from the real files."""
    out = tmp_path_factory.mktemp("legacy")
    made = {}
    for src, target in ((DOCX, "doc"), (DOCX, "rtf"), (PPTX, "ppt"), (XLSX, "xls")):
        made[target] = convert(src, target, out, command="soffice", timeout_s=180)
    return made


def test_legacy_files_are_read_and_cited(legacy: dict[str, Path], tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", llm_backends="none")
    with TestClient(make_app(settings)) as client:
        load_library(client, settings, list(legacy.values()))
        docs = docs_by_name(client)
        kinds = {
            Path(n).suffix: (d["kind"], d["status"], d["metadata"].get("converted_from"))
            for n, d in docs.items()
        }
        assert kinds == {
            ".doc": ("docx", "ready", "doc"),
            ".rtf": ("docx", "ready", "rtf"),
            ".ppt": ("pptx", "ready", "ppt"),
            ".xls": ("xlsx", "ready", "xls"),
        }
        hits = client.post(
            "/api/search", json={"query": "Country China Gold", "kinds": ["xlsx"]}
        ).json()["hits"]
        assert hits[0]["page_label"].startswith("sheet ")
        assert "Country: China" in hits[0]["text"]
        hits = client.post("/api/search", json={"query": "less than 750 square feet"}).json()
        cited = {h["filename"] for h in hits["hits"] if "750 square feet" in h["text"]}
        assert {legacy["doc"].name, legacy["rtf"].name} <= cited
        original = client.get(f"/api/documents/{docs[legacy['doc'].name]['id']}/file")
        assert original.headers["content-type"] == "application/msword"
        deck = docs[legacy["ppt"].name]
        assert deck["page_count"] == docs_by_name(client)[legacy["ppt"].name]["page_count"] > 1
        assert client.get(f"/api/documents/{deck['id']}/rendition").status_code == 200


def test_a_failed_conversion_leaves_the_text_readable(tmp_path: Path) -> None:
    # A hundredth of a second: LibreOffice cannot start in it, so the conversion is killed.
    settings = Settings(data_dir=tmp_path / "data", llm_backends="none", convert_timeout_s=0.01)
    with TestClient(make_app(settings)) as client:
        load_library(client, settings, (PPTX,))
        doc = docs_by_name(client)[PPTX.name]
        assert doc["status"] == "ready"
        assert "conversion limit" in doc["metadata"]["rendition_note"]
        r = client.get(f"/api/documents/{doc['id']}/rendition")
        assert r.status_code == 404 and "conversion limit" in r.json()["error"]["message"]
        hits = client.post("/api/search", json={"query": "benchmark format"}).json()["hits"]
        assert hits


def test_libreoffice_is_held_to_the_memory_limit(tmp_path: Path) -> None:
    with pytest.raises(CorruptFile, match="could not convert"):
        convert(DOCX, "pdf", tmp_path, command="soffice", timeout_s=60, memory_mb=64)


def test_a_corrupt_file_libreoffice_cannot_convert(tmp_path: Path) -> None:
    broken = tmp_path / "broken.doc"
    data = bytearray(Path(DOCX).read_bytes())
    broken.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504) + bytes(data[:4096]))
    with pytest.raises(CorruptFile, match="could not convert"):
        convert(broken, "docx", tmp_path / "out", command="soffice", timeout_s=120)


def test_without_libreoffice(legacy: dict[str, Path], tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", llm_backends="none", soffice="")
    with TestClient(make_app(settings)) as client:
        load_library(client, settings, (legacy["doc"], DOCX))
        docs = docs_by_name(client)
        old = docs[legacy["doc"].name]
        assert old["status"] == "failed"
        assert "apt install libreoffice-writer-nogui" in old["error"]
        new = docs[DOCX.name]
        assert new["status"] == "ready" and "rendition" not in new["metadata"]
        assert "apt install" in new["metadata"]["rendition_note"]
        r = client.get(f"/api/documents/{new['id']}/rendition")
        assert r.status_code == 404 and "no renderer is installed" in r.text


def test_health_says_which_formats_are_read_and_why(tmp_path: Path) -> None:
    for soffice, enabled in (("soffice", True), ("", False)):
        settings = Settings(
            data_dir=tmp_path / soffice / "data", llm_backends="none", soffice=soffice
        )
        with TestClient(make_app(settings)) as client:
            formats = {f["formats"]: f for f in client.get("/api/health").json()["formats"]}
        legacy = formats["legacy .doc, .ppt, .xls and .rtf"]
        assert legacy["enabled"] is enabled
        assert ("LibreOffice 7" if enabled else "QUIRE_SOFFICE is empty") in legacy["why"]
        assert formats["scanned PDF pages (OCR)"]["why"].startswith("tesseract found")


def test_an_unreadable_rendition_leaves_a_note_not_a_failure(tmp_path: Path) -> None:
    broken = tmp_path / "x.rendition.pdf"
    broken.write_bytes(b"%PDF-1.4 not really")
    extracted = Extracted("docx", None, None, [Page(1, "Some text.")])
    apply(extracted, Rendition(broken))
    assert "could not be read" in extracted.metadata["rendition_note"]
    assert "rendition" not in extracted.metadata
