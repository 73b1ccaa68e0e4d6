"""A Perplexity thread's cited pages added in one action: the API's stream of per-address
outcomes and ``quire add --sources-of``, against a local site on 127.0.0.1. The thread is a
real Perplexity export whose footnotes were pointed at the local site."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from quire.cli import main
from quire.ingest.intake import add_file
from quire.storage.migrate import open_database
from tests.api.sse import parse_sse
from tests.conftest import DOCS
from tests.runtime import drain, make_app
from tests.web.conftest import link_library
from tests.web.server import Site

THREAD = DOCS / "perplexity" / "Epoch AI Models Dataset.md"


def cited(site: Site) -> list[str]:
    """What the thread's 11 footnotes point at, in order (the last ones repeat the first)."""
    first = [
        site.url("/pdf/naacl06-shinyama.pdf"),
        site.url("/epub/alice-epub3.epub"),
        "http://169.254.169.254/latest/meta-data/",
        site.url("/status/404"),
        site.url("/html/readability-v8-blog.html"),
        site.url("/hops/5"),
    ]
    # Two spellings of the first address: one page, added once.
    return [*first, site.url("/pdf/naacl06-shinyama.pdf#page=2"), *first[:4]]


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory, sqlite_template: Path, site: Site) -> Any:
    data_dir = tmp_path_factory.mktemp("sources") / "data"
    settings = link_library(data_dir, sqlite_template, fetch_timeout_s=3)
    urls = iter(cited(site))
    text = re.sub(
        r"^(\[\^\d+\]: )https?://\S+",
        lambda m: m.group(1) + next(urls),
        THREAD.read_text(),
        flags=re.M,
    )
    thread = settings.data_dir / "thread.md"
    thread.write_text(text)
    db = open_database(settings)
    try:
        intake = add_file(db, settings.files_dir, thread, thread.name, max_bytes=1 << 20)
        plain = settings.data_dir / "plain.md"
        plain.write_text("# Plain notes\n\nNothing cited here, and no links either.\n")
        other = add_file(db, settings.files_dir, plain, plain.name, max_bytes=1 << 20)
    finally:
        db.dispose()
    drain(settings)
    return settings, intake.document_id, other.document_id


@pytest.fixture(scope="module")
def client(library: Any) -> Iterator[TestClient]:
    with TestClient(make_app(library[0])) as c:
        yield c


def add_sources(client: TestClient, document_id: int) -> list[tuple[str, Any]]:
    with client.stream("POST", f"/api/documents/{document_id}/sources/add") as r:
        assert r.status_code == 200, r.read()
        assert r.headers["content-type"].startswith("text/event-stream")
        return list(parse_sse(r.iter_lines()))


def test_a_threads_cited_pages_are_added_with_an_outcome_each(
    client: TestClient, library: Any, site: Site
) -> None:
    settings, thread_id, _ = library
    events = add_sources(client, thread_id)
    names = [name for name, _ in events]
    assert names == ["outcome"] * 6 + ["done"]
    done = events[-1][1]
    by_n = {o["n"]: o for o in done["outcomes"]}
    assert [o["n"] for o in done["outcomes"]] == [1, 2, 3, 4, 5, 6]  # each address once
    assert by_n[1]["url"] == site.url("/pdf/naacl06-shinyama.pdf")
    assert by_n[1]["status"] == "added" and by_n[1]["job_id"]
    assert by_n[2]["status"] == "added"
    assert by_n[3]["status"] == "refused"
    assert by_n[3]["error"]["code"] == "fetch_refused"
    assert "link-local" in by_n[3]["error"]["message"]
    assert by_n[4]["status"] == "refused" and by_n[4]["error"]["code"] == "fetch_failed"
    assert "HTTP 404" in by_n[4]["error"]["message"]
    assert by_n[5]["status"] == "added"  # a web page, read by the web reader
    assert by_n[6]["error"]["code"] == "fetch_failed"
    assert "more than 5 redirects" in by_n[6]["error"]["message"]
    assert done["counts"] == {"added": 3, "updated": 0, "unchanged": 0, "refused": 3}

    drain(settings)
    docs = {d["id"]: d for d in client.get("/api/documents").json()["documents"]}
    pdf, epub = docs[by_n[1]["document_id"]], docs[by_n[2]["document_id"]]
    assert pdf["status"] == "ready" and pdf["kind"] == "pdf" and pdf["origin"] == "web"
    assert epub["kind"] == "epub" and epub["metadata"]["url"] == site.url("/epub/alice-epub3.epub")

    again = add_sources(client, thread_id)[-1][1]
    assert [o["status"] for o in again["outcomes"]][:2] == ["unchanged", "unchanged"]
    assert client.get("/api/health").status_code == 200


def test_a_document_citing_nothing_is_refused_clearly(client: TestClient, library: Any) -> None:
    _, _, plain_id = library
    r = client.post(f"/api/documents/{plain_id}/sources/add")
    assert r.status_code == 400, r.text
    assert "cites no web pages" in r.json()["error"]["message"]
    assert client.post("/api/documents/99999/sources/add").status_code == 404


def test_quire_add_sources_of_reports_each_address(library: Any, site: Site) -> None:
    settings, thread_id, _ = library
    env = {
        "QUIRE_DATA_DIR": str(settings.data_dir),
        "QUIRE_FETCH_ALLOW_HOSTS": "127.0.0.1",
        "QUIRE_FETCH_TIMEOUT_S": "3",
        "QUIRE_MAX_UPLOAD_MB": "3",
    }
    result = CliRunner().invoke(
        main, ["add", "--sources-of", str(thread_id), site.url("/pdf/dmca-summary.pdf")], env=env
    )
    out = result.output
    assert result.exit_code == 1, out  # some addresses were refused
    assert re.search(r"dmca-summary.pdf → document \d+ \(queued\)", out), out
    # Queued, or unchanged when the API's test added it first (either may run first).
    assert re.search(r"\[1\] \S+naacl06-shinyama.pdf → document \d+ \((queued|unchanged)", out)
    assert "[3] http://169.254.169.254/latest/meta-data/: 169.254.169.254 is a link-local" in out
    summary = re.search(r"cites 6 web pages: (.*)", out)
    assert summary, out
    counts = {status: int(n) for n, status in re.findall(r"(\d+) (\w+)", summary.group(1))}
    assert sum(counts.values()) == 6 and counts["refused"] == 3, counts
    assert "[4] http://127.0.0.1" in out and "/status/404: the server answered HTTP 404" in out
    ingest = CliRunner().invoke(main, ["ingest", site.url("/pdf/dmca-summary.pdf")], env=env)
    assert ingest.exit_code == 0 and "unchanged, already in the library" in ingest.output
