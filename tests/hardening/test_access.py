"""Access control: with a token, no route but health answers without it (every route of the app
and of its OpenAPI schema is tried); CORS is closed unless configured; nothing listens beyond
the loopback without a token."""

from __future__ import annotations

import io
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.routing import iter_route_contexts
from fastapi.testclient import TestClient
from huggingface_hub import constants as hf_constants

from quire.api.auth import OPEN_PATHS, BindRefused, check_bind, is_loopback
from quire.app import create_app
from quire.config import Settings
from tests.api.test_documents import assert_error_shape
from tests.conftest import REPO
from tests.e2e.helpers import quire
from tests.runtime import drain, make_app

TOKEN = "s3cret-token-for-tests-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
WRONG: list[dict[str, str]] = [
    {},
    {"Authorization": "Bearer wrong-token-of-some-length"},
    {"Authorization": f"Bearer {TOKEN}x"},
    {"Authorization": f"Basic {TOKEN}"},
    {"Authorization": TOKEN},
    {"Authorization": "Bearer "},
]


def _settings(tmp_path: Path, **extra: Any) -> Settings:
    return Settings(
        data_dir=tmp_path / "data", max_upload_mb=5, llm_backends="none", api_token=TOKEN, **extra
    )


@pytest.fixture
def app(tmp_path: Path) -> FastAPI:
    return create_app(_settings(tmp_path))


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app) as c:
        yield c


def _concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "1", path)


def _every_endpoint(app: FastAPI) -> set[tuple[str, str]]:
    """(method, path) of every route the app serves, in the OpenAPI schema or not."""
    found: set[tuple[str, str]] = set()
    # FastAPI keeps included routers as such; this flattens them (the app's own routing order).
    for route in iter_route_contexts(app.routes):
        assert route.path, f"a route without a path: {route!r}"
        for method in route.methods or {"GET"}:
            found.add((method, route.path))
    schema_ops = {
        (method.upper(), path)
        for path, ops in app.openapi()["paths"].items()
        for method in ops
        if method in ("get", "post", "put", "patch", "delete", "head", "options")
    }
    assert schema_ops <= found, schema_ops - found
    return found


def _assert_401(response: Any, header_sent: bool) -> None:
    assert response.status_code == 401, (response.request.url, response.text)
    if response.request.method != "HEAD":
        assert_error_shape(response.json(), 401, "unauthorized")
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer")
    assert ('error="invalid_token"' in challenge) == header_sent


def test_no_route_answers_without_the_token(app: FastAPI, client: TestClient) -> None:
    endpoints = _every_endpoint(app)
    # Every route of the schema, plus the ones it does not list (docs UI, its schema).
    assert ("GET", "/api/docs") in endpoints and ("GET", "/api/openapi.json") in endpoints
    assert {p for _, p in endpoints} >= {"/api/chat", "/api/jobs/{job_id}/events", "/v1/models"}
    checked = 0
    for method, path in sorted(endpoints):
        url = _concrete(path)
        for headers in WRONG:
            r = client.request(method, url, headers=headers)
            if path in OPEN_PATHS:
                assert r.status_code != 401
                continue
            _assert_401(r, header_sent="Authorization" in headers)
            checked += 1
    assert checked >= 20 * len(WRONG)
    # Paths no route serves are refused the same way: nothing tells what exists.
    for url in ("/api/nope", "/", "/v1/other", "/api/health/", "/api//health", "/API/health"):
        _assert_401(client.get(url), header_sent=False)
    # Methods a route does not have, too.
    _assert_401(client.request("OPTIONS", "/api/documents"), header_sent=False)
    _assert_401(client.put("/api/documents/1"), header_sent=False)


def test_with_the_token_every_route_answers(
    app: FastAPI, client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # POST /api/models/reranker/pull starts a pull: offline, it ends at once and asks no hub.
    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", True)
    for method, path in sorted(_every_endpoint(app)):
        r = client.request(method, _concrete(path), headers=AUTH)
        assert r.status_code != 401, (method, path, r.text)
    assert client.get("/api/health").status_code == 200
    assert client.get("/api/documents", headers=AUTH).json() == {"documents": []}
    # The scheme's name is case-insensitive (RFC 7235).
    r = client.get("/api/documents", headers={"Authorization": f"bearer {TOKEN}"})
    assert r.status_code == 200
    # Two Authorization headers are ambiguous: refused.
    r = client.get(
        "/api/documents", headers=[("Authorization", f"Bearer {TOKEN}"), ("Authorization", "x")]
    )
    assert r.status_code == 401


def test_streams_and_uploads_need_the_token_and_work_with_it(
    client: TestClient, tmp_path: Path
) -> None:
    # An upload without the token is refused before the body is looked at.
    big = io.BytesIO(b"x" * (6 << 20))
    _assert_401(client.post("/api/documents", files={"files": ("a.txt", big)}), False)
    r = client.post(
        "/api/documents",
        files={"files": ("notes.md", b"# Notes\n\nThe heron waited by the weir.\n")},
        headers=AUTH,
    )
    assert r.status_code == 202, r.text
    job_id = r.json()["files"][0]["job_id"]
    drain(_settings(tmp_path))
    _assert_401(client.get(f"/api/jobs/{job_id}/events"), False)
    with client.stream("GET", f"/api/jobs/{job_id}/events", headers=AUTH) as events:
        assert events.status_code == 200
        assert "event: done" in events.read().decode()
    _assert_401(client.post("/api/chat", json={"message": "heron"}), False)
    with client.stream("POST", "/api/chat", json={"message": "heron"}, headers=AUTH) as chat:
        assert chat.status_code == 200
        body = chat.read().decode()
    assert body.startswith("event: start") and "event: done" in body
    r = client.post(
        "/v1/chat/completions",
        json={"model": "quire-extractive", "messages": [{"role": "user", "content": "heron"}]},
        headers=AUTH,
    )
    assert r.status_code == 200 and "weir" in r.json()["choices"][0]["message"]["content"]


PREFLIGHT = {"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}


@pytest.mark.parametrize("token", [None, TOKEN])
def test_cors_is_closed_by_default(tmp_path: Path, token: str | None) -> None:
    settings = Settings(data_dir=tmp_path / "data", api_token=token)
    with TestClient(make_app(settings)) as c:
        r = c.options(
            "/api/search",
            headers={**PREFLIGHT, "Access-Control-Request-Headers": "authorization"},
        )
        assert r.status_code in (401, 405)
        assert "access-control-allow-origin" not in r.headers
        r = c.get("/api/health", headers={"Origin": "https://evil.example"})
        assert r.status_code == 200 and "access-control-allow-origin" not in r.headers


def test_cors_allows_only_the_configured_origins(tmp_path: Path) -> None:
    settings = _settings(tmp_path, cors_origins="https://quire.example, http://localhost:5173/")
    with TestClient(make_app(settings)) as c:
        good = {**PREFLIGHT, "Origin": "https://quire.example"}
        r = c.options(
            "/api/search", headers={**good, "Access-Control-Request-Headers": "authorization"}
        )
        assert r.status_code == 200
        assert r.headers["access-control-allow-origin"] == "https://quire.example"
        assert "authorization" in r.headers["access-control-allow-headers"].lower()
        r = c.options("/api/search", headers=PREFLIGHT)
        assert r.status_code == 400 and "access-control-allow-origin" not in r.headers
        # A refused request still carries CORS headers, so the web app can read the 401.
        r = c.get("/api/documents", headers={"Origin": "http://localhost:5173"})
        assert r.status_code == 401
        assert r.headers["access-control-allow-origin"] == "http://localhost:5173"
        r = c.get("/api/documents", headers={"Origin": "https://evil.example", **AUTH})
        assert r.status_code == 200 and "access-control-allow-origin" not in r.headers


def test_loopback_rule() -> None:
    assert all(map(is_loopback, ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"]))
    assert not any(map(is_loopback, ["0.0.0.0", "::", "192.168.1.5", "example.org", ""]))
    open_settings = Settings()
    check_bind("127.0.0.1", open_settings)
    with pytest.raises(BindRefused, match="QUIRE_API_TOKEN"):
        check_bind("0.0.0.0", open_settings)
    check_bind("0.0.0.0", Settings(api_token=TOKEN))
    check_bind("0.0.0.0", Settings(allow_open_bind=True))
    assert Settings().host == "127.0.0.1"
    assert "${QUIRE_WEB_LISTEN:-127.0.0.1:8080}" in (REPO / "scripts" / "run.sh").read_text()


@pytest.mark.parametrize(
    "weak", ["short", "has a space in it, long enough", "ünïcode-token-long-enough"]
)
def test_weak_tokens_are_refused_at_start(weak: str) -> None:
    with pytest.raises(ValueError, match="16 printable ASCII"):
        Settings(api_token=weak)
    assert Settings(api_token="  ").api_token is None


def test_serve_refuses_a_public_address_without_a_token(tmp_path: Path) -> None:
    for args, env in (
        (["serve", "--host", "0.0.0.0", "--port", "9"], {}),
        (["serve", "--port", "9"], {"QUIRE_HOST": "::"}),
        (["up", "--host", "0.0.0.0", "--port", "9"], {}),
    ):
        r = quire(tmp_path / "data", *args, timeout=60, **env)
        assert r.returncode == 2, (r.stdout, r.stderr)
        assert "without an API token" in r.stderr and "QUIRE_API_TOKEN" in r.stderr


def test_nginx_refuses_a_public_address_without_a_token(tmp_path: Path) -> None:
    for listen in ("0.0.0.0:18080", "18080", "[::]:18080"):
        r = subprocess.run(
            [str(REPO / "nginx" / "run.sh"), str(tmp_path / "ngx"), listen, "127.0.0.1:9", "."],
            env={"PATH": "/usr/bin:/bin:/usr/sbin"},
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert r.returncode == 2 and "without an API token" in r.stderr, (listen, r.stderr)
