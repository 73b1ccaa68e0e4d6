"""The web app served beside the API by ``quire up`` (api/webapp.py), as nginx serves it in
front of ``make run``: hashed assets cached for good, pages revalidated, client-side routes
answered with index.html, and every path the API owns left to the API (its JSON errors, its
token, its upload limit)."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from quire.api.webapp import (
    CHECKOUT,
    IMMUTABLE,
    REVALIDATE,
    WebAppMissing,
    api_prefixes,
    find_web_app,
    serve_web_app,
)
from quire.config import Settings
from tests.runtime import make_app

INDEX = '<!doctype html><div id="app"></div><script type="module" src="/assets/index-Ab12.js">'
BUNDLE = "export const answer = 42;\n" * 200  # over GZipMiddleware's 1 KB threshold


@pytest.fixture
def dist(tmp_path: Path) -> Path:
    root = tmp_path / "dist"
    (root / "assets").mkdir(parents=True)
    (root / "index.html").write_text(INDEX)
    (root / "favicon.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    (root / "assets" / "index-Ab12.js").write_text(BUNDLE)
    (root / "assets" / "pdf.worker-Cd34.mjs").write_text("self.onmessage = () => {};\n")
    (tmp_path / "secret.txt").write_text("outside the web app")
    return root


@pytest.fixture
def web(settings: Settings, dist: Path) -> Iterator[TestClient]:
    with TestClient(serve_web_app(make_app(settings), dist)) as c:
        yield c


@pytest.mark.parametrize("path", ["/", "/chat", "/library/3/pages/7", "/settings", "/apiary"])
def test_client_side_routes_get_the_page_revalidated(web: TestClient, path: str) -> None:
    r = web.get(path)
    assert r.status_code == 200
    assert r.text == INDEX
    assert r.headers["content-type"].startswith("text/html")
    assert r.headers["cache-control"] == REVALIDATE
    assert r.headers["x-content-type-options"] == "nosniff"


def test_hashed_assets_are_cached_for_good_and_gzipped(web: TestClient) -> None:
    r = web.get("/assets/index-Ab12.js", headers={"Accept-Encoding": "gzip"})
    assert r.status_code == 200 and r.text == BUNDLE
    assert r.headers["cache-control"] == IMMUTABLE
    assert r.headers["content-encoding"] == "gzip"
    assert r.headers["content-type"].startswith("text/javascript")
    raw = web.get("/assets/index-Ab12.js", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in raw.headers and raw.text == BUNDLE
    assert len(gzip.compress(BUNDLE.encode())) < len(BUNDLE)  # worth it: the point of gzip
    # pdf.js's module worker is refused by the browser unless served as JavaScript.
    worker = web.get("/assets/pdf.worker-Cd34.mjs")
    assert worker.headers["content-type"].startswith("text/javascript")
    # Revalidated by its ETag: 304, still immutable.
    again = web.get("/assets/index-Ab12.js", headers={"If-None-Match": r.headers["etag"]})
    assert again.status_code == 304


def test_top_level_files_are_served_as_they_are(web: TestClient) -> None:
    r = web.get("/favicon.svg")
    assert r.status_code == 200 and r.headers["content-type"] == "image/svg+xml"
    assert r.headers["cache-control"] == REVALIDATE
    assert web.head("/").status_code == 200


def test_a_missing_asset_is_a_404_not_the_page(web: TestClient) -> None:
    r = web.get("/assets/index-OLD1.js")
    assert r.status_code == 404
    assert INDEX not in r.text


@pytest.mark.parametrize(
    "path", ["/../secret.txt", "/%2e%2e/secret.txt", "/assets/../../secret.txt", "/..%2fsecret.txt"]
)
def test_nothing_outside_the_web_app_is_served(web: TestClient, path: str) -> None:
    r = web.get(path)
    assert "outside the web app" not in r.text
    assert r.status_code in (200, 404)  # the page (a client-side route) or not found


@pytest.mark.parametrize("path", ["/api", "/api/", "/api/nothing-here", "/v1/nothing-here"])
def test_the_apis_paths_stay_the_apis(web: TestClient, path: str) -> None:
    r = web.get(path)
    assert r.status_code == 404
    assert r.json()["error"]["code"] == "not_found"  # the API's one error shape, not the page
    assert web.get("/api/health").json()["status"] == "ok"
    assert web.post("/library").status_code == 405  # a page path takes no POST


def test_every_path_the_api_mounts_is_left_to_it(settings: Settings) -> None:
    app = make_app(settings)
    prefixes = api_prefixes(app)
    assert {"api", "v1", "mcp"} <= prefixes
    for path in app.openapi()["paths"]:
        assert path.strip("/").split("/", 1)[0] in prefixes, path


def test_the_page_needs_no_token_the_api_does(tmp_path: Path, dist: Path) -> None:
    """Behind nginx the page is public and asks for the token; served by the API, the same."""
    settings = Settings(data_dir=tmp_path / "data", api_token="s3cret-token-for-the-test")
    with TestClient(serve_web_app(make_app(settings), dist)) as web:
        assert web.get("/library").text == INDEX
        assert web.get("/assets/index-Ab12.js").status_code == 200
        assert web.get("/api/documents").status_code == 401
        ok = web.get(
            "/api/documents", headers={"Authorization": "Bearer s3cret-token-for-the-test"}
        )
        assert ok.status_code == 200


def test_the_upload_limit_holds_without_nginx(web: TestClient, settings: Settings) -> None:
    body = b"x" * (settings.max_upload_bytes + 1)
    r = web.post("/api/documents", files={"file": ("big.txt", body, "text/plain")})
    assert r.status_code == 413
    assert r.json()["error"]["code"] == "too_large"


def test_the_web_app_is_found_in_the_checkout_or_said_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, dist: Path
) -> None:
    monkeypatch.setattr("quire.api.webapp.PACKAGED", dist)
    assert find_web_app() == dist
    monkeypatch.setattr("quire.api.webapp.PACKAGED", tmp_path / "none")
    monkeypatch.setattr("quire.api.webapp.CHECKOUT", tmp_path / "neither")
    with pytest.raises(WebAppMissing, match="make frontend"):
        find_web_app()
    assert CHECKOUT.parts[-2:] == ("frontend", "dist")
