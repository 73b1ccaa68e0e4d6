"""The safe fetcher against a local site on 127.0.0.1 (allowed by QUIRE_FETCH_ALLOW_HOSTS) and
against names an injected resolver points wherever a test needs: the SSRF and hostile cases
are each refused with their reason, and the fetcher keeps working after each."""

from __future__ import annotations

import io
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from quire.config import Settings
from quire.errors import FetchFailed, FetchRefused, FileTooLarge, InputError
from quire.web.fetch import AddressGuard, Fetcher, why_not_public
from quire.web.links import (
    decode_html,
    is_html,
    needs_javascript,
    normalise_url,
    page_fingerprint,
)
from tests.conftest import DOCS
from tests.web.server import CAFE_WORDS, HTML_DIR, Site

LIMIT_MB = 2


def make_settings(tmp: Path, **over: object) -> Settings:
    values: dict[str, object] = {
        "data_dir": tmp,
        "fetch_allow_hosts": "127.0.0.1",
        "fetch_timeout_s": 1.5,
        "max_upload_mb": LIMIT_MB,
    }
    values.update(over)
    return Settings(**values)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def fetcher(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fetcher]:
    with Fetcher(make_settings(tmp_path_factory.mktemp("fetch"))) as f:
        yield f


def get(fetcher: Fetcher, url: str) -> tuple[bytes, object]:
    out = io.BytesIO()
    fetched = fetcher.fetch(url, out)
    return out.getvalue(), fetched


def still_works(fetcher: Fetcher, site: Site) -> None:
    body, _ = get(fetcher, site.url("/pdf/dmca-summary.pdf"))
    assert body == (DOCS / "pdf" / "dmca-summary.pdf").read_bytes()


def test_a_saved_page_and_a_pdf_are_fetched_as_served(fetcher: Fetcher, site: Site) -> None:
    body, fetched = get(fetcher, site.url("/html/readability-v8-blog.html"))
    assert body == (HTML_DIR / "readability-v8-blog.html").read_bytes()
    assert fetched.media_type == "text/html" and fetched.charset == "utf-8"  # type: ignore[attr-defined]
    assert is_html(body, "text/html")
    pdf, fetched = get(fetcher, site.url("/pdf/naacl06-shinyama.pdf"))
    assert pdf == (DOCS / "pdf" / "naacl06-shinyama.pdf").read_bytes()
    assert fetched.filename == "naacl06-shinyama.pdf"  # type: ignore[attr-defined]
    assert not is_html(pdf, "application/pdf")


def test_gzip_is_unpacked(fetcher: Fetcher, site: Site) -> None:
    body, _ = get(fetcher, site.url("/gzipped/readability-lwn-1.html"))
    assert body == (HTML_DIR / "readability-lwn-1.html").read_bytes()


def test_redirects_are_followed_up_to_five(fetcher: Fetcher, site: Site) -> None:
    body, fetched = get(fetcher, site.url("/hops/4"))
    assert body.startswith(b"%PDF-")
    assert fetched.url == site.url("/pdf/dmca-summary.pdf")  # type: ignore[attr-defined]
    assert len(fetched.redirects) == 5  # type: ignore[attr-defined]
    with pytest.raises(FetchFailed, match="more than 5 redirects"):
        get(fetcher, site.url("/hops/5"))


def test_a_redirect_loop_is_refused(fetcher: Fetcher, site: Site) -> None:
    with pytest.raises(FetchFailed, match="loop") as err:
        get(fetcher, site.url("/loop/a"))
    assert err.value.detail["redirects"][-1] == site.url("/loop/a")
    still_works(fetcher, site)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://127.0.0.1/", "loopback"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://[::1]/", "loopback"),
        ("http://[::ffff:127.0.0.1]/", "loopback"),
        ("http://10.0.0.8/", "private"),
        ("http://100.64.0.1/", "carrier-grade"),
        ("http://0.0.0.0/", "unspecified"),
        ("http://224.0.0.1/", "multicast"),
        ("http://[fe80::1]/", "link-local"),
        ("http://2130706433/", "loopback"),  # 127.0.0.1 as one number
    ],
)
def test_private_addresses_are_refused(tmp_path: Path, url: str, reason: str) -> None:
    with Fetcher(make_settings(tmp_path, fetch_allow_hosts="")) as strict:
        with pytest.raises(FetchRefused, match=reason) as err:
            get(strict, url)
    assert err.value.code == "fetch_refused" and err.value.status_code == 403
    assert "QUIRE_FETCH_ALLOW_HOSTS" in err.value.message


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "gopher://127.0.0.1:70/_GET", "ftp://example.org/x"]
)
def test_other_schemes_are_refused(fetcher: Fetcher, url: str) -> None:
    with pytest.raises(FetchRefused, match="http and https links only"):
        get(fetcher, url)


def test_a_public_looking_name_that_resolves_to_a_private_address_is_refused(
    tmp_path: Path, site: Site
) -> None:
    asked: list[str] = []

    def resolver(host: str, port: int) -> list[str]:
        asked.append(host)
        answers = {
            "news.example.com": ["10.20.30.40"],
            "mixed.example.com": ["93.184.215.14", "127.0.0.1"],
        }
        return answers[host]

    with Fetcher(make_settings(tmp_path, fetch_allow_hosts=""), resolver=resolver) as f:
        with pytest.raises(FetchRefused, match="news.example.com resolves to 10.20.30.40"):
            get(f, "https://news.example.com/story")
        # Every address counts: one private address among public ones is enough.
        with pytest.raises(FetchRefused, match="mixed.example.com resolves to 127.0.0.1"):
            get(f, "http://mixed.example.com/")
    assert asked == ["news.example.com", "mixed.example.com"]


def test_the_connection_goes_to_the_checked_address_with_the_name_as_host(
    tmp_path: Path, site: Site
) -> None:
    """One resolution per connection, the socket opened to its answer (no second lookup that
    DNS rebinding could answer differently), and the name kept in the Host header."""
    port = int(site.url("").rsplit(":", 1)[1])
    asked: list[str] = []

    def resolver(host: str, port_: int) -> list[str]:
        asked.append(host)
        return ["127.0.0.1"]

    with Fetcher(make_settings(tmp_path), resolver=resolver) as f:
        body, _ = get(f, f"http://docs.example.org:{port}/host")
    assert body.endswith(b"host seen\n")
    assert site.hosts[-1] == f"docs.example.org:{port}"
    assert asked == ["docs.example.org"]


def test_a_redirect_from_an_allowed_host_to_a_private_one_is_refused(
    fetcher: Fetcher, site: Site
) -> None:
    with pytest.raises(FetchRefused, match="169.254.169.254 is a link-local address"):
        get(fetcher, site.url("/to-private"))
    still_works(fetcher, site)


def test_a_response_that_never_ends_stops_at_the_time_limit(fetcher: Fetcher, site: Site) -> None:
    start = time.monotonic()
    with pytest.raises(FetchFailed, match=r"not fetched within 1.5 s \(QUIRE_FETCH_TIMEOUT_S\)"):
        get(fetcher, site.url("/forever"))
    assert time.monotonic() - start < 4
    still_works(fetcher, site)


def test_a_500_mb_body_is_refused_at_the_limit_without_reading_it(
    fetcher: Fetcher, site: Site
) -> None:
    with pytest.raises(FileTooLarge, match=f"over the {LIMIT_MB} MB limit") as err:
        get(fetcher, site.url("/huge"))
    assert err.value.code == "too_large"
    time.sleep(0.2)  # the server notices the hang-up
    assert site.sent["huge"] < 40 * 1024 * 1024, site.sent  # socket buffers, never 500 MB
    with pytest.raises(FileTooLarge, match="500.0 MB are over"):
        get(fetcher, site.url("/huge-declared"))
    still_works(fetcher, site)


def test_a_gzip_bomb_is_refused_at_the_unpacked_limit(fetcher: Fetcher, site: Site) -> None:
    assert len(site.bomb) < 200_000
    with pytest.raises(FileTooLarge, match="unpacks to over .* bomb"):
        get(fetcher, site.url("/bomb"))
    still_works(fetcher, site)


def test_an_encoding_not_asked_for_is_refused(fetcher: Fetcher, site: Site) -> None:
    with pytest.raises(FetchFailed, match="as br, which Quire did not ask for"):
        get(fetcher, site.url("/brotli"))


def test_http_errors_and_unknown_hosts_are_clear(tmp_path: Path, site: Site) -> None:
    def resolver(host: str, port: int) -> list[str]:
        if host == "127.0.0.1":
            return ["127.0.0.1"]
        raise OSError(-2, "Name or service not known")

    with Fetcher(make_settings(tmp_path), resolver=resolver) as f:
        with pytest.raises(FetchFailed, match="HTTP 500") as err:
            get(f, site.url("/status/500"))
        assert err.value.status_code == 502 and err.value.code == "fetch_failed"
        with pytest.raises(FetchFailed, match="nowhere.invalid: no such host"):
            get(f, "https://nowhere.invalid/")


def test_links_with_credentials_or_no_host_are_refused(fetcher: Fetcher) -> None:
    with pytest.raises(FetchRefused, match="user name or password"):
        get(fetcher, "https://me:secret@example.org/")
    with pytest.raises(InputError):
        get(fetcher, "http:///nohost")


def test_a_page_declaring_the_wrong_charset_is_read_as_what_it_is(
    fetcher: Fetcher, site: Site
) -> None:
    words = CAFE_WORDS
    for case in ("cp1252-says-utf8", "utf8-says-latin1"):
        body, fetched = get(fetcher, site.url(f"/charset/{case}"))
        text = decode_html(body, fetched.charset)  # type: ignore[attr-defined]
        assert words in text, case
        assert "\ufffd" not in text and "Ã" not in text


def test_allow_hosts_names_hosts_addresses_and_networks(tmp_path: Path) -> None:
    answers = {"wiki.intranet": ["192.168.1.5"], "a": ["10.9.9.9"], "b": ["::1"]}
    answers["c"] = ["192.168.1.5"]
    guard = AddressGuard(["wiki.intranet", "10.0.0.0/8", "::1"], lambda h, p: answers[h])
    assert guard.addresses("wiki.intranet", 80) == ["192.168.1.5"]
    assert guard.addresses("a", 80) == ["10.9.9.9"]
    assert guard.addresses("b", 80) == ["::1"]
    with pytest.raises(FetchRefused):
        guard.addresses("c", 80)
    with pytest.raises(InputError, match="QUIRE_FETCH_ALLOW_HOSTS: 'http://wiki.intranet/'"):
        Fetcher(make_settings(tmp_path, fetch_allow_hosts="wiki,http://wiki.intranet/"))


def test_public_addresses_pass() -> None:
    import ipaddress

    for text in ("93.184.215.14", "2606:4700:4700::1111", "1.1.1.1"):
        assert why_not_public(ipaddress.ip_address(text)) is None


def test_pages_that_need_javascript_are_told_apart_from_real_pages() -> None:
    from tests.web.server import SPA

    assert needs_javascript(SPA.decode())
    for page in sorted(HTML_DIR.glob("*.html")):
        assert not needs_javascript(decode_html(page.read_bytes())), page.name


def test_urls_are_normalised_for_their_source_key() -> None:
    assert normalise_url("HTTPS://Example.ORG:443/a/b?utm_source=x&id=3#frag") == (
        "https://example.org/a/b?id=3"
    )
    assert normalise_url("http://example.org") == "http://example.org/"
    assert normalise_url("http://example.org:8080/x?fbclid=1") == "http://example.org:8080/x"
    assert normalise_url("https://b\u00fccher.de/") == "https://xn--bcher-kva.de/"


def test_a_refetched_page_is_the_same_page_but_for_what_changes_on_every_fetch() -> None:
    page = decode_html((HTML_DIR / "readability-v8-blog.html").read_bytes())
    refetched = re.sub(
        r"(<body\b[^>]*>)",
        r"\1<input type='hidden' name='csrf' value='zz9'>",
        page.replace(
            "</head>",
            '<script nonce="r4nd0m">window.t = 1733400000</script>'
            '<meta name="csrf-token" content="abc123"><!-- served by edge-7 --></head>',
        ),
        count=1,
    )
    assert refetched != page and "zz9" in refetched
    assert page_fingerprint(refetched) == page_fingerprint(page)
    words = "V8"
    assert words in page
    edited = page.replace(words, "Vee-Eight", 3)
    assert page_fingerprint(edited) != page_fingerprint(page)
