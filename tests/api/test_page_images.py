"""Image documents through the API: a batch with bad images in it, the page image endpoint
(PNG, upright as OCR read it) and the word boxes that lie on it."""

from __future__ import annotations

import io
import struct
import zlib

from fastapi.testclient import TestClient
from PIL import Image

from quire.config import Settings
from tests.api.test_documents import upload
from tests.conftest import DOCS
from tests.runtime import drain

TYPEWRITER = DOCS / "office" / "images" / "linzensoep-typewriter-nl.png"


def _bomb() -> bytes:
    """A PNG whose header claims 30,000 × 30,000 pixels."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    ihdr = struct.pack(">IIBBBBB", 30_000, 30_000, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IEND", b"")


def test_a_sideways_scan_is_served_upright_with_its_words_on_it(
    client: TestClient, settings: Settings
) -> None:
    with Image.open(TYPEWRITER) as im:
        small = im.convert("L").reduce(2)
    sideways = io.BytesIO()
    small.rotate(90, expand=True).save(sideways, "PNG")
    tiff = (DOCS / "office" / "images" / "magazine-pages-2p.tif").read_bytes()
    r = upload(
        client,
        ("recipe.png", sideways.getvalue()),
        ("bomb.png", _bomb()),
        ("cut.tif", tiff[: len(tiff) // 2]),
        ("zero.png", b""),
    )
    assert r.status_code == 202
    recipe, bomb, cut, zero = r.json()["files"]
    assert recipe["kind"] == bomb["kind"] == cut["kind"] == "image"
    assert zero["status"] == "rejected" and zero["error"]["code"] == "empty_file"
    drain(settings)

    errors = {d["filename"]: d for d in client.get("/api/documents").json()["documents"]}
    assert errors["bomb.png"]["status"] == "failed"
    assert "decompression-bomb" in errors["bomb.png"]["error"]
    assert errors["cut.tif"]["status"] == "failed"
    assert "damaged or truncated" in errors["cut.tif"]["error"]
    doc = errors["recipe.png"]
    assert doc["status"] == "ready" and doc["page_count"] == 1

    page = client.get(f"/api/documents/{doc['id']}/pages/1").json()
    assert page["source"] == "ocr" and page["metadata"]["rotated"] == 90
    assert "Linzensoep a la Waterman" in page["text"]
    image = client.get(f"/api/documents/{doc['id']}/pages/1/image")
    assert image.status_code == 200 and image.headers["content-type"] == "image/png"
    with Image.open(io.BytesIO(image.content)) as shown:
        assert shown.size == small.size  # upright again
    boxes = page["metadata"]["ocr_words"]
    assert (boxes["width"], boxes["height"], boxes["unit"]) == (*small.size, "px")
    width, height = small.size
    assert all(
        0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height for x0, y0, x1, y1, _ in boxes["words"]
    )

    original = client.get(f"/api/documents/{doc['id']}/file")
    assert original.headers["content-type"] == "image/png"
    assert client.get(f"/api/documents/{doc['id']}/pages/2/image").status_code == 404
    hits = client.post("/api/search", json={"query": "linzensoep waterman"}).json()["hits"]
    assert hits and hits[0]["document_id"] == doc["id"] and hits[0]["page"] == 1
