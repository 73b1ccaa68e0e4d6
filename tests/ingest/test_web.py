"""Saved web pages (formats/web.py): the real pages of ../shared/data/docs/office/html read with
their title, address and headings, the article without the navigation, comments and
related-links boxes around it, tables as rows with their header, code blocks line by line;
MHTML and SingleFile saves of a real page; pages in the wrong charset; hostile pages, each a
clear error; and the pages through the real worker into a real SQLite library (kind, metadata,
language, heading paths)."""

from __future__ import annotations

import base64
import json
import quopri
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from quire.config import Settings
from quire.errors import FileTooLarge, QuireError
from quire.formats.detect import detect_kind
from quire.formats.extract import extract_file
from quire.formats.types import Extracted
from quire.formats.web import read_html, read_web
from quire.ingest.intake import add_file
from quire.ingest.worker import Worker
from quire.storage import documents
from quire.storage.migrate import open_database
from quire.storage.records import place
from tests.conftest import DOCS
from tests.hardening.corpus import hostile_pages
from tests.runtime import seed_sqlite

HTML = DOCS / "office" / "html"
PAGES = sorted(HTML.glob("*.html"))
SRE = HTML / "readability-google-sre-book-1.html"
LEMONDE = HTML / "readability-lemonde-1.html"
PIXNET = HTML / "readability-pixnet.html"
BRANDENBURG = HTML / "trafilatura-brandenburg.de.homo-brandenburgensis.html"
PLURALSIGHT = HTML / "trafilatura-pluralsight.com.python.html"


def text_of(ex: Extracted) -> str:
    return "\n".join(page.text for page in ex.pages)


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def read() -> dict[str, Extracted]:
    return {path.name: read_web(path) for path in PAGES}


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.stem)
def test_every_saved_page_is_read_into_sections_with_heading_paths(
    path: Path, read: dict[str, Extracted]
) -> None:
    assert detect_kind(path) == "web"
    ex = read[path.name]
    assert ex.kind == "web" and ex.title and len(text_of(ex)) > 1000
    assert sum(bool(p.heading_path) for p in ex.pages) >= len(ex.pages) - 1
    for page in ex.pages:  # each unit cites its heading and its paragraphs
        assert place("web", page.number, page.label) == page.label
        assert page.label and page.label.endswith(tuple("0123456789"))


@pytest.mark.parametrize(
    ("name", "title", "url", "published", "first_heading"),
    [
        (
            LEMONDE.name,
            "Le projet de loi sur le renseignement massivement approuvé à l'Assemblée",
            "http://www.lemonde.fr/pixels/article/2015/05/04/que-contient-la-loi-sur-le-"
            "renseignement_4627068_4408996.html",
            "2015-05-04",
            "Le projet de loi sur le renseignement massivement approuvé à l'Assemblée",
        ),
        (
            BRANDENBURG.name,
            "Homo Brandenburgensis",
            "https://www.politische-bildung-brandenburg.de/themen/land-und-leute/"
            "homo-brandenburgensis",
            None,
            "Homo Brandenburgensis",
        ),
        (
            PLURALSIGHT.name,
            "Managing Python Environments",
            "https://www.pluralsight.com/tech-blog/managing-python-environments/",
            "2020-01-10",
            "Managing Python Environments",
        ),
        # The post's title heading sits outside what readability keeps; <title> names it.
        (PIXNET.name, "新竹尖石_美樹營地賞楓 (2)", None, None, "新竹尖石_美樹營地賞楓 (2)"),
        # No canonical link, no og:url, no date: none is made up.
        (SRE.name, "Google - Site Reliability Engineering", None, None, "Monitoring"),
    ],
)
def test_title_address_date_and_first_heading(
    read: dict[str, Extracted],
    name: str,
    title: str,
    url: str | None,
    published: str | None,
    first_heading: str,
) -> None:
    ex = read[name]
    assert ex.title == title
    if url is not None:
        assert ex.metadata["url"] == url
    elif name == SRE.name:
        assert ex.metadata["url"] is None and ex.metadata["site"] is None
    else:
        assert ex.metadata["url"].startswith("http://stevenhgm.pixnet.net/blog/post/39926056-")
    assert ex.metadata["published"] == published
    assert ex.pages[0].heading_path.startswith(first_heading)


def test_the_site_and_author_come_from_the_page(read: dict[str, Extracted]) -> None:
    assert read[LEMONDE.name].metadata["site"] == "Le Monde.fr"
    assert read["readability-dropbox-blog.html"].author == "Arun Sai Krishnan"
    assert read["trafilatura-laviedesidees.fr.evaluation.html"].author == "Florence Audier"
    # With no og:site_name, the host of the page's own address.
    assert read[PLURALSIGHT.name].metadata["site"] == "www.pluralsight.com"


@pytest.mark.parametrize(
    ("name", "kept", "left_out"),
    [
        (
            PIXNET.name,
            ["入園費$50元"],
            # The comment list, its heading, and the blog's sidebar boxes.
            ["留言列表", "嚮往大自然....再濕冷的天依舊衝衝衝", "我的好友", "文章分類", "熱門文章"],
        ),
        (
            BRANDENBURG.name,
            ["Nicht labern, ranklotzen"],
            # The comment form, the breadcrumb, the share box, the footer menu, the site logo.
            [
                "Neuen Kommentar hinzufügen",
                "Pfadnavigation",
                "Teilen auf",
                "Fußbereichsmenü",
                "Brandenburgische Landeszentrale\nfür politische Bildung",
            ],
        ),
        (
            "trafilatura-laviedesidees.fr.evaluation.html",
            ["les quinze revues d’Elsevier"],
            ["Articles les plus lus", "Nos partenaires", "Gardons le contact", "À lire aussi"],
        ),
        # "Lire aussi : <link>" inserts inside the article, and the follow-us box.
        (LEMONDE.name, ["six magistrats"], ["Lire aussi", "Suivez-nous"]),
        ("readability-wikipedia-mozilla.html", ["Mozilla Foundation"], ["[edit]", "Jump to"]),
    ],
)
def test_navigation_comments_and_related_links_are_left_out(
    read: dict[str, Extracted], name: str, kept: list[str], left_out: list[str]
) -> None:
    text = text_of(read[name])
    for phrase in kept:
        assert phrase in flat(text), phrase
    for phrase in left_out:
        assert phrase not in text, phrase


def test_a_table_is_read_as_rows_with_their_header(read: dict[str, Extracted]) -> None:
    [page] = [p for p in read[SRE.name].pages if "Symptom: " in p.text]
    assert page.heading_path == "Symptoms Versus Causes"
    assert (
        "Table 6-1. Example symptoms and causes\n\n"
        "Symptom: I’m serving HTTP 500s or 404s · Cause: Database servers are refusing "
        "connections\nSymptom: My responses are slow · Cause: CPUs are overloaded"
    ) in page.text


def test_code_blocks_keep_their_lines(read: dict[str, Extracted]) -> None:
    v8 = text_of(read["readability-v8-blog.html"])
    # A highlighted block whose lines are <br>-separated spans.
    code = "// add.c\n#include <emscripten.h>\n\nEMSCRIPTEN_KEEPALIVE\nint add(int x, int y) {"
    assert code in v8
    # A shell block inside a highlighter's <div> that readability drops: kept in its section.
    [page] = [p for p in read[PLURALSIGHT.name].pages if "$ poetry init" in p.text]
    assert page.heading_path.endswith("poetry in motion")
    assert "\n\n$ poetry init\n\n" in page.text


def test_lists_keep_their_items(read: dict[str, Extracted]) -> None:
    sre = text_of(read[SRE.name])
    assert "\n\n- " in sre
    assert "\n\n1. Record the current CPU utilization each second.\n\n2. Using buckets" in sre


def mhtml(page: bytes, url: str) -> bytes:
    """A page saved as Chrome saves it: MIME headers, the HTML quoted-printable, a picture."""
    boundary = "----MultipartBoundary--x1y2z3----"
    png = base64.encodebytes(b"\x89PNG\r\n\x1a\n" + bytes(64)).decode()
    head = (
        "From: <Saved by Blink>\r\n"
        f"Snapshot-Content-Location: {url}\r\n"
        "Subject: =?utf-8?Q?Homo_Brandenburgensis?=\r\n"
        "Date: Sat, 5 Dec 2026 18:00:00 -0000\r\n"
        "MIME-Version: 1.0\r\n"
        f'Content-Type: multipart/related;\r\n\ttype="text/html";\r\n\tboundary="{boundary}"\r\n'
        "\r\n\r\n"
        f"--{boundary}\r\n"
        "Content-Type: text/html\r\n"
        "Content-ID: <frame-1@mhtml.blink>\r\n"
        "Content-Transfer-Encoding: quoted-printable\r\n"
        f"Content-Location: {url}\r\n\r\n"
    ).encode()
    tail = (
        f"\r\n--{boundary}\r\n"
        "Content-Type: image/png\r\n"
        "Content-Transfer-Encoding: base64\r\n"
        "Content-Location: https://example.org/logo.png\r\n\r\n"
        f"{png}\r\n--{boundary}--\r\n"
    ).encode()
    return head + quopri.encodestring(page) + tail


def test_an_mhtml_save_is_read_as_its_page(tmp_path: Path, read: dict[str, Extracted]) -> None:
    url = "https://www.politische-bildung-brandenburg.de/saved-by-chrome"
    path = tmp_path / "homo.mhtml"
    path.write_bytes(mhtml(BRANDENBURG.read_bytes(), url))
    assert detect_kind(path) == "web"
    ex = extract_file(path, Settings(data_dir=tmp_path))
    assert ex.metadata["saved_with"] == "MHTML"
    # The page's own canonical link wins over where the browser saved it from.
    assert ex.metadata["url"] == read[BRANDENBURG.name].metadata["url"]
    assert text_of(ex) == text_of(read[BRANDENBURG.name])
    assert "=C3=" not in text_of(ex)  # quoted-printable decoded
    assert "Watt jibt’s n hier zu lachen?" in [p.heading_path.split(" > ")[-1] for p in ex.pages]


def test_a_singlefile_save_keeps_the_address_it_was_saved_from(tmp_path: Path) -> None:
    page = SRE.read_text(encoding="utf-8")
    mark = (
        "<!--\n Page saved with SingleFile \n url: https://sre.google/sre-book/monitoring-"
        "distributed-systems/ \n saved date: Sat Dec 05 2026 18:00:00 GMT+0000\n-->"
    )
    path = tmp_path / "sre.html"
    path.write_text(mark + page, encoding="utf-8")
    ex = read_web(path)
    assert ex.metadata["saved_with"] == "SingleFile"
    assert ex.metadata["url"] == "https://sre.google/sre-book/monitoring-distributed-systems/"
    assert ex.metadata["site"] == "sre.google"
    # Internet Explorer's and Chrome's old mark.
    path.write_text("<!-- saved from url=(0024)https://example.org/a/ -->\n" + page)
    assert read_web(path).metadata["url"] == "https://example.org/a/"


def test_a_known_address_wins_over_the_page_s_own() -> None:
    ex = read_html(LEMONDE.read_bytes(), url="https://www.lemonde.fr/fetched/")
    assert ex.metadata["url"] == "https://www.lemonde.fr/fetched/"


@pytest.mark.parametrize("declared", ["iso-8859-1", "windows-1252", "shift_jis"])
def test_a_page_declaring_the_wrong_charset_is_read_in_its_own(declared: str) -> None:
    page = LEMONDE.read_bytes().replace(b"charset=utf-8", f"charset={declared}".encode())
    text = text_of(read_html(page))
    assert "La Commission de contrôle" in text and "Ã" not in text


def test_a_heading_reads_as_set_a_line_break_a_space_and_inline_markup_none() -> None:
    page = (
        "<!DOCTYPE html><html><head><title>Origin</title></head><body><article>"
        "<h2>CHAPTER XII.<br>GEOGRAPHICAL DISTRIBUTION—<i>continued</i>.</h2><p>"
        + "Distribution of fresh-water productions on oceanic islands. " * 5
        + "</p></article></body></html>"
    )
    ex = read_html(page.encode())
    assert [p.heading_path for p in ex.pages] == [
        "CHAPTER XII. GEOGRAPHICAL DISTRIBUTION—continued."
    ]


def test_a_headings_note_marker_is_left_out_and_its_own_superscript_kept() -> None:
    text = "<p>" + "Distribution of fresh-water productions on oceanic islands. " * 5 + "</p>"
    page = (
        "<!DOCTYPE html><html><head><title>Notes</title></head><body><article>"
        f'<h2>Chapter 1<sup class="reference"><a href="#cite_note-2">[2]</a></sup></h2>{text}'
        f'<h2>Introduction<a role="doc-noteref" href="#n1">*</a></h2>{text}'
        f"<h2>E = mc<sup>2</sup></h2>{text}</article></body></html>"
    )
    ex = read_html(page.encode())
    assert [p.heading_path for p in ex.pages] == ["Chapter 1", "Introduction", "E = mc2"]


def test_a_latin1_page_declaring_utf8_is_read_as_latin1() -> None:
    page = (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>Café</title></head><body>'
        "<article><h1>Crème brûlée</h1><p>"
        + "La crème est cuite au bain-marie, puis le sucre brûlé au chalumeau. " * 5
        + "</p></article></body></html>"
    )
    ex = read_html(page.encode("cp1252"))
    assert ex.title == "Café" and ex.pages[0].heading_path == "Crème brûlée"
    assert "sucre brûlé" in text_of(ex)


def test_an_xhtml_page_is_read() -> None:
    page = (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" '
        '"http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">\n'
        '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>Herons</title></head><body>'
        "<h1>Herons</h1><p>" + "The grey heron waits in the shallows of the weir. " * 6 + "</p>"
        "<h2>Nests</h2><p>" + "Herons nest in colonies called heronries, high in trees. " * 6
        + "</p></body></html>"
    )  # fmt: skip
    ex = read_html(page.encode())
    assert [p.heading_path for p in ex.pages] == ["Herons", "Herons > Nests"]


@pytest.mark.parametrize("hostile", hostile_pages(), ids=lambda h: h.name)
def test_hostile_pages_end_in_their_own_clear_error(tmp_path: Path, hostile: Any) -> None:
    path = tmp_path / hostile.name
    path.write_bytes(hostile.data)
    with pytest.raises(QuireError) as caught:
        extract_file(path, Settings(data_dir=tmp_path))
    assert hostile.reason.lower() in str(caught.value).lower()
    assert "heron" not in str(caught.value)  # no entity was expanded into the message


def test_a_50_mb_page_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.html"
    path.write_bytes(b"<!DOCTYPE html><html><body>" + b"<p>heron</p>" * (50 * 2**20 // 12))
    started = time.perf_counter()
    with pytest.raises(FileTooLarge, match="50.0 MB of HTML, over the 16 MB a page may have"):
        extract_file(path, Settings(data_dir=tmp_path))
    assert time.perf_counter() - started < 2  # refused by its size, not parsed


# -- through the real worker into a real SQLite library ------------------------------------------
FETCHED: dict[str, Any] = {
    "type": "web",
    "url": "https://www.lemonde.fr/pixels/article/2015/05/04/renseignement.html",
    "cite": {
        "url": "https://www.lemonde.fr/pixels/article/2015/05/04/renseignement.html",
        "fetched_at": "2026-12-05T18:00:00+00:00",
    },
}


@pytest.fixture(scope="module")
def library(
    tmp_path_factory: pytest.TempPathFactory, sqlite_template: Path
) -> Iterator[tuple[Settings, dict[str, dict[str, Any]]]]:
    root = tmp_path_factory.mktemp("web-library")
    settings = Settings(data_dir=root / "data")
    seed_sqlite(sqlite_template, settings.data_dir)
    db = open_database(settings)
    saved = root / "homo.mhtml"
    saved.write_bytes(mhtml(BRANDENBURG.read_bytes(), "https://example.org/saved"))
    app = root / "app.html"  # first: the worker must go on after it
    app.write_bytes(hostile_pages()[-1].data)
    ids = {}
    for path in [app, SRE, LEMONDE, PIXNET, saved]:
        intake = add_file(db, settings.files_dir, path, path.name, max_bytes=10 << 20)
        ids[path.name] = intake.document_id
    # A page fetched by its address: the caller gives the URL as the origin's citation
    # metadata (as the URL fetcher and the browser extension do), which wins over the page's.
    with db.write() as conn:
        documents.set_origin(conn, ids[LEMONDE.name], FETCHED)
    worker = Worker(settings, db=db)
    worker.run(drain=True)
    worker.close()
    rows: dict[str, dict[str, Any]] = {}
    with db.read() as conn:
        for name, doc_id in ids.items():
            row = conn.exec_driver_sql(
                "SELECT kind, status, title, language, metadata, error FROM documents WHERE id = ?",
                (doc_id,),
            ).one()
            paths = conn.exec_driver_sql(
                "SELECT DISTINCT heading_path FROM page_chunks WHERE document_id = ?", (doc_id,)
            ).scalars()
            meta = row.metadata if isinstance(row.metadata, dict) else json.loads(row.metadata)
            rows[name] = {**row._asdict(), "metadata": meta, "chunk_paths": set(paths)}
    db.dispose()
    yield settings, rows


def test_saved_pages_ingest_with_their_metadata_language_and_headings(
    library: tuple[Settings, dict[str, dict[str, Any]]],
) -> None:
    _, rows = library
    for name, language in [(SRE.name, "en"), (LEMONDE.name, "fr"), (PIXNET.name, "zh-Hant")]:
        row = rows[name]
        assert (row["kind"], row["status"], row["language"]) == ("web", "ready", language), row
    lemonde = rows[LEMONDE.name]["metadata"]
    assert lemonde["url"] == FETCHED["cite"]["url"]  # not the page's canonical link
    assert lemonde["fetched_at"] == FETCHED["cite"]["fetched_at"]
    assert lemonde["site"] == "Le Monde.fr" and lemonde["published"] == "2015-05-04"
    assert "The Four Golden Signals" in rows[SRE.name]["chunk_paths"]
    assert "新竹尖石_美樹營地賞楓 (2)" in rows[PIXNET.name]["chunk_paths"]
    saved = rows["homo.mhtml"]
    assert (saved["kind"], saved["status"], saved["language"]) == ("web", "ready", "de")
    assert saved["title"] == "Homo Brandenburgensis"
    assert saved["metadata"]["saved_with"] == "MHTML"


def test_a_page_drawn_by_scripts_fails_with_a_notice_and_the_worker_goes_on(
    library: tuple[Settings, dict[str, dict[str, Any]]],
) -> None:
    _, rows = library
    app = rows["app.html"]
    assert app["status"] == "failed" and "JavaScript" in app["error"]
    assert "extension" in app["error"]


def test_the_stored_page_is_only_ever_a_download(client: TestClient) -> None:
    # Its scripts must never run in Quire's origin: text, an attachment, sandboxed.
    page = b"<!DOCTYPE html><html><body><script>alert(1)</script><p>heron</p></body></html>"
    r = client.post("/api/documents", files={"files": ("xss.html", page)})
    assert r.status_code == 202 and r.json()["files"][0]["kind"] == "web", r.text
    got = client.get(f"/api/documents/{r.json()['files'][0]['document_id']}/file")
    assert got.status_code == 200 and got.content == page
    assert got.headers["content-type"].startswith("text/plain")
    assert got.headers["content-disposition"].startswith("attachment")
    assert got.headers["content-security-policy"] == "sandbox"
    assert got.headers["x-content-type-options"] == "nosniff"


def test_settings_and_doctor_list_web_pages_as_read(client: TestClient) -> None:
    formats = {f["formats"]: f for f in client.get("/api/health").json()["formats"]}
    web = formats["web pages .html/.htm/.xhtml, .mhtml/.mht, SingleFile"]
    assert web["enabled"] is True and "readability-lxml" in web["why"]
