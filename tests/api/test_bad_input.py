"""Bad files through the API and the worker: each ends in a clear error, nothing is lost, and
the worker goes on to the next job."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from fpdf import FPDF
from fpdf.enums import EncryptionMethod

from quire.config import Settings
from tests.conftest import DOCS
from tests.ingest.test_epub import XXE, make_epub
from tests.runtime import drain

pytestmark = pytest.mark.both_backends


def _encrypted_pdf() -> bytes:
    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    pdf.add_page()
    pdf.multi_cell(w=0, text="A secret page that needs a password. " * 20)
    pdf.set_encryption(
        owner_password="o", user_password="u", encryption_method=EncryptionMethod.AES_256
    )
    return bytes(pdf.output())


def test_bad_files_fail_their_jobs_with_reasons_and_good_ones_still_ingest(
    client: TestClient, settings: Settings, tmp_path: Path
) -> None:
    real_pdf = (DOCS / "pdf" / "dmca-summary.pdf").read_bytes()
    real_epub = (DOCS / "epub" / "alice-epub3.epub").read_bytes()
    xxe = make_epub(
        tmp_path / "xxe.epub",
        {"ch1.xhtml": '<?xml version="1.0"?>\n' + XXE + "<html><body><p>&e;</p></body></html>"},
    ).read_bytes()
    bad = {
        "locked.pdf": (_encrypted_pdf(), "password"),
        "truncated.pdf": (real_pdf[: len(real_pdf) // 2], ""),
        "broken.epub": (real_epub[: len(real_epub) // 2], ""),
        "xxe.epub": (xxe, "unsafe XML"),
    }
    good = ("notes.md", b"# Field notes\n\nThe heron waited by the weir at dawn.\n")
    files = [("files", (name, io.BytesIO(data))) for name, (data, _) in bad.items()]
    files.append(("files", (good[0], io.BytesIO(good[1]))))
    r = client.post("/api/documents", files=files)
    assert r.status_code == 202, r.text
    results = {f["filename"]: f for f in r.json()["files"]}
    queued = {n: f for n, f in results.items() if f["status"] == "queued"}
    rejected = {n: f for n, f in results.items() if f["status"] == "rejected"}
    assert good[0] in queued
    # A zip too broken to show its mimetype entry may be refused at the door; that is fine.
    assert set(rejected) <= {"broken.epub"}
    for f in rejected.values():
        assert f["error"]["message"]

    drain(settings)
    for name, (_, phrase) in bad.items():
        if name in rejected:
            continue
        doc = client.get(f"/api/documents/{results[name]['document_id']}").json()
        assert doc["status"] == "failed", (name, doc)
        assert doc["error"] and doc["job"]["status"] == "failed"
        assert phrase.lower() in doc["error"].lower(), (name, doc["error"])
        assert "Traceback" not in doc["error"]
    notes = client.get(f"/api/documents/{results[good[0]]['document_id']}").json()
    assert notes["status"] == "ready" and notes["chunk_count"] == 1
    # Nothing was lost: the failed documents keep their originals and can be retried.
    failed_id = results["locked.pdf"]["document_id"]
    original = client.get(f"/api/documents/{failed_id}/file")
    assert original.status_code == 200 and original.content[:5] == b"%PDF-"
    retry = client.post(f"/api/documents/{failed_id}/reingest")
    assert retry.status_code == 202 and retry.json()["status"] == "queued"
