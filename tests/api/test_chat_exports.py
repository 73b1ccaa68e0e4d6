"""A ChatGPT or Claude export uploaded through POST /api/documents: detected from its content,
a document per conversation, searchable with its turn and web sources cited."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from quire.config import Settings
from tests.api.test_documents import assert_error_shape
from tests.conftest import DOCS
from tests.runtime import drain

pytestmark = pytest.mark.both_backends


def _export() -> bytes:
    convs = []
    for f in sorted((DOCS / "chatgpt").glob("*.json")):
        data = json.loads(f.read_text(encoding="utf-8"))
        convs += data if isinstance(data, list) else [data]
    return json.dumps(convs).encode()


def _upload(client: TestClient, name: str, data: bytes) -> dict:  # type: ignore[type-arg]
    r = client.post("/api/documents", files={"files": (name, io.BytesIO(data))})
    return {"status": r.status_code, **r.json()}


@pytest.mark.slow  # a whole export ingested and embedded
def test_upload_imports_each_conversation_and_search_cites_a_turn(
    client: TestClient, settings: Settings
) -> None:
    body = _upload(client, "conversations.json", _export())
    assert body["status"] == 202, body
    (result,) = body["files"]
    assert result["kind"] == "chatgpt" and result["status"] == "queued" and result["job_id"]
    docs = client.get("/api/documents").json()["documents"]
    assert sorted(d["kind"] for d in docs) == ["chatgpt"] * 7
    drain(settings)  # the reembed job: vectors for the new chunks
    assert client.get(f"/api/jobs/{result['job_id']}").json()["status"] == "done"

    r = client.post(
        "/api/search", json={"query": "fuel consumption of vw transporter with 8 people"}
    )
    assert r.status_code == 200, r.text
    hit = r.json()["hits"][0]
    assert hit["kind"] == "chatgpt" and hit["page"] == 1
    assert hit["heading_path"].startswith("What is the fuel consumption of vw transporter")
    assert hit["metadata"]["url"].startswith("https://chatgpt.com/c/")

    cited = client.post("/api/search", json={"query": "combined cycle fuel consumption 8.2 litres"})
    hits = [h for h in cited.json()["hits"] if h["web_sources"]]
    assert hits and hits[0]["web_sources"][0]["url"].startswith("https://")

    again = _upload(client, "conversations.json", _export())
    assert again["files"][0]["status"] == "duplicate" and again["files"][0]["job_id"] is None
    assert len(client.get("/api/documents").json()["documents"]) == 7


def test_bad_exports_get_a_clear_error_and_change_nothing(
    client: TestClient, tmp_path: Path
) -> None:
    data = _export()
    r = client.post(
        "/api/documents",
        files={"files": ("conversations.json", io.BytesIO(data[: len(data) // 3]))},
    )
    assert r.status_code == 422, r.text
    assert_error_shape(r.json(), 422, "corrupt_file")
    assert "not valid JSON" in r.json()["error"]["message"]

    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(
            "conversations.json", b'[{"create_time": 1, "mapping": {}' + b" " * (40 << 20) + b"}]"
        )
    r = client.post("/api/documents", files={"files": ("export.zip", io.BytesIO(bomb.getvalue()))})
    assert r.status_code == 422, r.text
    assert_error_shape(r.json(), 422, "resource_limit")

    evil = io.BytesIO()
    with zipfile.ZipFile(evil, "w") as zf:
        zf.writestr("conversations.json", data)
        zf.writestr("../escape.json", b"[]")
    r = client.post("/api/documents", files={"files": ("export.zip", io.BytesIO(evil.getvalue()))})
    assert r.status_code == 422 and "unsafe path" in r.json()["error"]["message"]
    assert client.get("/api/documents").json()["documents"] == []
