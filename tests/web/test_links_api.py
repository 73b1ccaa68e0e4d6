"""``POST /api/documents/url`` end to end against a local site on 127.0.0.1 (allowed by
QUIRE_FETCH_ALLOW_HOSTS): a PDF and an EPUB behind links read by their readers, re-adding
(unchanged; changed content updates the same document), the extension's HTML, and every
hostile case refused in the one error shape while the API keeps serving."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from quire.config import Settings
from quire.storage import people
from quire.storage.migrate import open_database
from tests.api.test_documents import assert_error_shape
from tests.conftest import DOCS
from tests.runtime import drain, make_app
from tests.web.conftest import link_library
from tests.web.server import CAFE_PAGE, CAFE_WORDS, HTML_DIR, Site


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory, sqlite_template: Path) -> Settings:
    return link_library(tmp_path_factory.mktemp("links") / "data", sqlite_template)


@pytest.fixture(scope="module")
def client(library: Settings) -> Iterator[TestClient]:
    with TestClient(make_app(library)) as c:
        yield c


def add(client: TestClient, url: str, **extra: Any) -> Any:
    return client.post("/api/documents/url", json={"url": url, **extra})


def still_serving(client: TestClient) -> None:
    assert client.get("/api/health").status_code == 200
    assert client.get("/api/documents").status_code == 200


def test_a_pdf_behind_a_link_is_read_by_the_pdf_reader(
    client: TestClient, library: Settings, site: Site
) -> None:
    url = site.url("/pdf/dmca-summary.pdf?utm_source=feed#page=2")
    r = add(client, url)
    assert r.status_code == 202, r.text
    body = r.json()
    assert body["status"] == "added" and body["job"]["status"] == "queued"
    doc = body["document"]
    assert doc["kind"] == "pdf" and doc["origin"] == "web"
    assert drain(library) >= 1
    doc = client.get(f"/api/documents/{doc['id']}").json()
    assert doc["status"] == "ready" and doc["page_count"] == 18
    meta = doc["metadata"]
    assert meta["url"] == site.url("/pdf/dmca-summary.pdf")  # no fragment, no utm_*
    assert meta["fetched_at"].startswith("20")
    assert meta["origin"]["url"] == site.url("/pdf/dmca-summary.pdf")
    query = {"query": "Digital Millennium Copyright Act", "rerank": False}
    hits = client.post("/api/search", json=query).json()
    assert any(h["document_id"] == doc["id"] for h in hits["hits"])

    again = add(client, site.url("/pdf/dmca-summary.pdf"))
    assert again.status_code == 200, again.text
    assert again.json()["status"] == "unchanged" and again.json()["job"] is None
    assert again.json()["document"]["id"] == doc["id"]


def test_an_epub_served_as_octet_stream_is_read_as_an_epub(
    client: TestClient, library: Settings, site: Site
) -> None:
    r = add(client, site.url("/epub/alice-epub3.epub"))
    assert r.status_code == 202, r.text
    assert r.json()["document"]["kind"] == "epub"
    drain(library)
    doc = client.get(f"/api/documents/{r.json()['document']['id']}").json()
    assert doc["status"] == "ready" and doc["title"] and "Alice" in doc["title"]


def test_changed_content_updates_the_same_document(
    client: TestClient, library: Settings, site: Site
) -> None:
    site.state["changing"] = (DOCS / "pdf" / "dmca-summary.pdf").read_bytes()
    url = site.url("/changing")
    first = add(client, url).json()
    assert first["status"] in ("added", "unchanged")  # the same bytes as the first test's PDF
    site.state["changing"] = (DOCS / "pdf" / "polish-invoice-identity-cmap.pdf").read_bytes()
    r = add(client, url)
    assert r.status_code == 202, r.text
    updated = r.json()
    assert updated["status"] in ("added", "updated")
    drain(library)
    again = add(client, url)
    assert again.status_code == 200 and again.json()["status"] == "unchanged"
    doc_id = again.json()["document"]["id"]
    assert doc_id == updated["document"]["id"]
    site.state["changing"] = (DOCS / "pdf" / "naacl06-shinyama.pdf").read_bytes()
    changed = add(client, url).json()
    assert changed["status"] == "updated" and changed["document"]["id"] == doc_id
    assert changed["job"]["status"] == "queued"
    drain(library)
    doc = client.get(f"/api/documents/{doc_id}").json()
    assert doc["status"] == "ready" and doc["filename"] == "changing"
    assert doc["sha256"] == changed["document"]["sha256"]
    page = client.get(f"/api/documents/{doc_id}/pages/1").json()
    assert "Preemptive Information Extraction" in page["text"]


def test_a_web_page_behind_a_link_is_read_by_the_web_reader(
    client: TestClient, library: Settings, site: Site
) -> None:
    """A saved page served by the site: added, read, re-added unchanged although its nonce and
    CSRF token change on every request; edited, it is a new version of the same document."""
    url = site.url("/fresh/readability-v8-blog.html")
    r = add(client, url)
    assert r.status_code == 202, r.text
    doc = r.json()["document"]
    assert doc["kind"] == "web" and doc["filename"] == "127.0.0.1-fresh-readability-v8-blog.html"
    drain(library)
    doc = client.get(f"/api/documents/{doc['id']}").json()
    assert doc["status"] == "ready", doc["error"]
    assert doc["title"] == "Outside the web: standalone WebAssembly binaries using Emscripten"
    assert doc["metadata"]["url"] == url and doc["metadata"]["fetched_at"]
    page = client.get(f"/api/documents/{doc['id']}/pages/1").json()
    assert "Emscripten has always focused first and foremost" in page["text"]
    again = add(client, url)
    assert again.status_code == 200, again.text
    assert again.json()["status"] == "unchanged" and again.json()["document"]["id"] == doc["id"]

    site.state["page"] = (HTML_DIR / "readability-lwn-1.html").read_bytes()
    first = add(client, site.url("/page")).json()
    assert first["status"] == "added"
    site.state["page"] = site.state["page"].replace(
        b"A trademark battle", b"A famous trademark battle"
    )
    edited = add(client, site.url("/page")).json()
    assert edited["status"] == "updated" and edited["document"]["id"] == first["document"]["id"]
    drain(library)
    text = client.get(f"/api/documents/{first['document']['id']}/pages/1").json()["text"]
    assert "A famous trademark battle" in text

    # Declared UTF-8, sent as cp1252: read as what it is.
    wrong = add(client, site.url("/charset/cp1252-says-utf8")).json()
    drain(library)
    text = client.get(f"/api/documents/{wrong['document']['id']}/pages/1").json()["text"]
    assert CAFE_WORDS in text and "\ufffd" not in text


def test_the_extensions_html_is_stored_without_fetching(
    client: TestClient, library: Settings
) -> None:
    # The page as the reader's browser shows it (not the bytes another test fetched).
    html = CAFE_PAGE.replace("{}", CAFE_WORDS).replace("<h1>", "<p>Subscribers only.</p><h1>")
    url = "https://paywalled.example.com/article/1"  # never fetched: no such host
    r = add(client, url, html=html, title="Notes from the browser")
    assert r.status_code == 202, r.text
    doc = r.json()["document"]
    assert doc["kind"] == "web" and doc["title"] == "Notes from the browser"
    drain(library)
    doc = client.get(f"/api/documents/{doc['id']}").json()
    assert doc["status"] == "ready", doc["error"]
    assert doc["metadata"]["url"] == url and doc["metadata"]["fetched_at"]
    assert CAFE_WORDS in client.get(f"/api/documents/{doc['id']}/pages/1").json()["text"]
    again = add(client, url, html=html)
    assert again.status_code == 200 and again.json()["status"] == "unchanged"
    assert again.json()["document"]["id"] == doc["id"]


@pytest.mark.parametrize(
    ("path_or_url", "status", "code", "message"),
    [
        ("http://169.254.169.254/latest/meta-data/", 403, "fetch_refused", "link-local"),
        ("http://[::1]:9/", 403, "fetch_refused", "loopback"),
        ("http://10.1.1.1/", 403, "fetch_refused", "private"),
        ("file:///etc/passwd", 403, "fetch_refused", "http and https links only"),
        ("gopher://127.0.0.1:70/", 403, "fetch_refused", "http and https links only"),
        ("/to-private", 403, "fetch_refused", "169.254.169.254 is a link-local"),
        ("/loop/a", 502, "fetch_failed", "loop"),
        ("/hops/5", 502, "fetch_failed", "more than 5 redirects"),
        ("/forever", 502, "fetch_failed", "QUIRE_FETCH_TIMEOUT_S"),
        ("/huge", 413, "too_large", "over the 3 MB limit"),
        ("/bomb", 413, "too_large", "bomb"),
        ("/status/500", 502, "fetch_failed", "HTTP 500"),
        ("/spa", 422, "needs_javascript", "browser extension"),
    ],
)
def test_hostile_links_are_refused_and_the_api_keeps_serving(
    client: TestClient, site: Site, path_or_url: str, status: int, code: str, message: str
) -> None:
    before = client.get("/api/documents").json()["documents"]
    url = site.url(path_or_url) if path_or_url.startswith("/") else path_or_url
    r = add(client, url)
    assert r.status_code == status, r.text
    assert_error_shape(r.json(), status, code)
    assert message in r.json()["error"]["message"]
    assert client.get("/api/documents").json()["documents"] == before
    still_serving(client)
    assert not list((Path(client.app.state.settings.data_dir) / "tmp").glob("link-*"))


def test_people_add_links_as_they_upload_files(
    tmp_path: Path, sqlite_template: Path, site: Site
) -> None:
    """A private link is its adder's: another person adding the same content is refused
    without learning more, and the adder's own re-add answers unchanged."""
    settings = link_library(tmp_path / "data", sqlite_template)
    db = open_database(settings)
    try:
        with db.write() as conn:
            people.add_user(conn, "alice")
            people.add_user(conn, "bob")
            alice = people.issue_token(conn, "alice")[1]
            bob = people.issue_token(conn, "bob")[1]
    finally:
        db.dispose()
    url = site.url("/pdf/polish-invoice-identity-cmap.pdf")
    with TestClient(make_app(settings)) as c:
        as_alice = {"Authorization": f"Bearer {alice}"}
        as_bob = {"Authorization": f"Bearer {bob}"}
        r = c.post(
            "/api/documents/url", json={"url": url, "visibility": "private"}, headers=as_alice
        )
        assert r.status_code == 202, r.text
        assert r.json()["document"]["visibility"] == "private"
        assert r.json()["document"]["owner"] == "alice"
        refused = c.post("/api/documents/url", json={"url": url}, headers=as_bob)
        assert refused.status_code == 409, refused.text
        assert_error_shape(refused.json(), 409, "conflict")
        assert c.get("/api/documents", headers=as_bob).json()["documents"] == []
        again = c.post("/api/documents/url", json={"url": url}, headers=as_alice)
        assert again.status_code == 200 and again.json()["status"] == "unchanged"
        no_person = c.post("/api/documents/url", json={"url": url, "visibility": "private"})
        assert no_person.status_code == 401


def test_the_api_keeps_serving_while_a_link_hangs(client: TestClient, site: Site) -> None:
    """A fetch runs in a worker thread: other requests are answered while it waits."""
    answers: list[int] = []
    site.held.clear()
    site.release.clear()
    hanging = threading.Thread(
        target=lambda: answers.append(add(client, site.url("/hold")).status_code)
    )
    hanging.start()
    try:
        assert site.held.wait(10)
        still_serving(client)
        assert client.get("/api/documents/999").status_code == 404
        assert hanging.is_alive() and not answers  # the fetch was still waiting meanwhile
    finally:
        site.release.set()
        hanging.join(timeout=10)
    assert answers and answers[0] in (200, 202)
