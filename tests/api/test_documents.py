"""The documents API through TestClient (lifespan runs): upload, dedup, errors, pages, files."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from quire.config import Settings
from quire.ingest.worker import Worker
from tests.conftest import DOCS
from tests.runtime import drain

pytestmark = pytest.mark.both_backends

GIF = b"GIF89a" + b"\x00" * 64  # an image Quire does not read


def assert_error_shape(body: dict[str, Any], status: int, code: str) -> None:
    """The one error shape, pinned."""
    assert set(body) == {"error"}
    assert set(body["error"]) == {"status", "code", "message", "detail"}
    assert body["error"]["status"] == status
    assert body["error"]["code"] == code
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]


def upload(client: TestClient, *files: tuple[str, bytes], **data: str) -> Any:
    return client.post(
        "/api/documents",
        files=[("files", (name, io.BytesIO(content))) for name, content in files],
        data=data,
    )


def test_upload_several_files_then_duplicates_are_reported(client: TestClient) -> None:
    pdf = (DOCS / "pdf" / "dmca-summary.pdf").read_bytes()
    md = (DOCS / "perplexity" / "pnw-states-multiturn.md").read_bytes()
    r = upload(client, ("dmca.pdf", pdf), ("thread.md", md))
    assert r.status_code == 202, r.text
    files = r.json()["files"]
    assert [f["status"] for f in files] == ["queued", "queued"]
    assert [f["kind"] for f in files] == ["pdf", "perplexity"]
    again = upload(client, ("renamed.pdf", pdf)).json()["files"][0]
    assert again["status"] == "duplicate"
    assert again["document_id"] == files[0]["document_id"]
    listing = client.get("/api/documents").json()["documents"]
    assert len(listing) == 2
    assert {d["status"] for d in listing} == {"queued"}
    job = client.get(f"/api/jobs/{files[0]['job_id']}").json()
    assert job["status"] == "queued" and job["document_id"] == files[0]["document_id"]


def test_type_comes_from_content_not_the_name(client: TestClient) -> None:
    r = upload(client, ("picture.pdf", GIF))
    assert r.status_code == 415
    assert_error_shape(r.json(), 415, "unsupported_type")
    r = upload(client, ("notes.pdf", b"Plain words in a file that lies about its type.\n"))
    assert r.status_code == 202
    assert r.json()["files"][0]["kind"] == "text"


def test_empty_and_oversized_uploads(client: TestClient, settings: Settings) -> None:
    r = upload(client, ("empty.txt", b""))
    assert r.status_code == 400
    assert_error_shape(r.json(), 400, "empty_file")
    big = b"a" * (settings.max_upload_bytes + 1)
    r = upload(client, ("big.txt", big))
    assert r.status_code == 413
    assert_error_shape(r.json(), 413, "too_large")

    # Streaming without Content-Length is cut off as well.
    def chunks() -> Any:
        boundary = b'--x\r\nContent-Disposition: form-data; name="files"; filename="b.txt"\r\n\r\n'
        yield boundary
        for _ in range(settings.max_upload_mb + 1):
            yield b"b" * (1024 * 1024)
        yield b"\r\n--x--\r\n"

    r = client.post(
        "/api/documents",
        content=chunks(),
        headers={"Content-Type": "multipart/form-data; boundary=x"},
    )
    assert r.status_code == 413
    assert_error_shape(r.json(), 413, "too_large")
    assert client.get("/api/documents").json()["documents"] == []
    assert list((settings.data_dir / "tmp").glob("*")) == []


def test_one_bad_file_does_not_sink_the_batch(client: TestClient) -> None:
    r = upload(client, ("bad.bin", GIF), ("good.txt", b"Some honest text.\n"))
    assert r.status_code == 202
    bad, good = r.json()["files"]
    assert bad["status"] == "rejected" and bad["error"]["code"] == "unsupported_type"
    assert good["status"] == "queued"


def test_hostile_filename_is_stored_safely(client: TestClient) -> None:
    name = "../../etc/" + "x" * 300 + ".txt"
    r = upload(client, (name, b"text body\n"))
    assert r.status_code == 202
    doc = client.get(f"/api/documents/{r.json()['files'][0]['document_id']}").json()
    assert "/" not in doc["filename"] and ".." not in doc["filename"]
    assert len(doc["filename"]) <= 255


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [
        ("get", "/api/documents/999", 404, "not_found"),
        ("delete", "/api/documents/999", 404, "not_found"),
        ("get", "/api/documents/999/pages/1", 404, "not_found"),
        ("get", "/api/documents/999/file", 404, "not_found"),
        ("post", "/api/documents/999/reingest", 404, "not_found"),
        ("get", "/api/jobs/999", 404, "not_found"),
        ("get", "/api/documents/abc", 422, "validation_error"),
        ("get", "/api/no-such-route", 404, "not_found"),
        ("put", "/api/health", 405, "method_not_allowed"),
        ("post", "/api/documents", 422, "validation_error"),
    ],
)
def test_every_error_has_the_one_shape(
    client: TestClient, method: str, path: str, status: int, code: str
) -> None:
    r = getattr(client, method)(path)
    assert r.status_code == status
    assert_error_shape(r.json(), status, code)


def test_pages_file_delete_after_ingest(client: TestClient, settings: Settings) -> None:
    md = (DOCS / "perplexity" / "pnw-states-multiturn.md").read_bytes()
    doc_id = upload(client, ("thread.md", md)).json()["files"][0]["document_id"]
    assert client.get(f"/api/documents/{doc_id}/pages/1").status_code == 404  # not ready yet
    worker = Worker(settings)
    assert worker.run(drain=True) >= 1
    doc = client.get(f"/api/documents/{doc_id}").json()
    assert doc["status"] == "ready", doc
    assert doc["page_count"] == 4 and doc["kind"] == "perplexity"
    assert doc["job"]["status"] == "done" and doc["job"]["progress"] == 1.0
    page = client.get(f"/api/documents/{doc_id}/pages/2").json()
    assert page["page"] == 2 and page["page_count"] == 4 and page["chunks"]
    assert all(c["text"] in page["text"] or c["text"][:50] in page["text"] for c in page["chunks"])
    assert client.get(f"/api/documents/{doc_id}/pages").json()["pages"][0]["page"] == 1
    missing = client.get(f"/api/documents/{doc_id}/pages/99")
    assert missing.status_code == 404 and "has no page 99" in missing.json()["error"]["message"]
    original = client.get(f"/api/documents/{doc_id}/file")
    assert original.status_code == 200 and original.content == md
    assert original.headers["content-type"].startswith("text/markdown")
    health = client.get("/api/health").json()
    assert health["chunks"] == doc["chunk_count"] and health["vectors"]["count"] == health["chunks"]
    assert client.delete(f"/api/documents/{doc_id}").status_code == 204
    assert client.get(f"/api/documents/{doc_id}").status_code == 404
    health = client.get("/api/health").json()
    assert health["chunks"] == 0 and health["vectors"]["count"] == 0
    assert not any(settings.files_dir.rglob("*.md"))
    worker.close()


def test_a_scanned_page_serves_its_ocr_word_boxes(
    client: TestClient, settings: Settings, tmp_path: Path
) -> None:
    # One page of the scan keeps it to one OCR run.
    page1 = tmp_path / "grumman-p1.pdf"
    scan = DOCS / "pdf" / "scan-grumman-175.pdf"
    subprocess.run(["pdfseparate", "-f", "1", "-l", "1", str(scan), str(page1)], check=True)
    doc_id = upload(client, ("grumman.pdf", page1.read_bytes())).json()["files"][0]["document_id"]
    drain(settings)
    page = client.get(f"/api/documents/{doc_id}/pages/1").json()
    assert page["source"] == "ocr"
    boxes = page["metadata"]["ocr_words"]
    assert {k: boxes[k] for k in ("width", "height", "unit")} == {
        "width": 612.0,
        "height": 792.0,
        "unit": "pt",
    }
    assert [w[4] for w in boxes["words"]] == page["text"].split()
    # Only the page carries the word list: not the document, its page list or a search hit.
    assert "ocr_words" not in client.get(f"/api/documents/{doc_id}").text
    assert "ocr_words" not in client.get(f"/api/documents/{doc_id}/pages").text
    hits = client.post("/api/search", json={"query": "accessory kit"})
    assert hits.status_code == 200 and hits.json()["hits"], hits.text
    assert "ocr_words" not in hits.text
