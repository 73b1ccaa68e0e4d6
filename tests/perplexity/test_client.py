"""The endpoints through real Chromium's in-page fetch against the fake site: login, paging,
cursors, retries on 429/5xx, and the errors that stop a sync."""

from __future__ import annotations

import json
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from quire.config import Settings
from quire.errors import NotFound
from quire.sources.perplexity import browser as pbrowser
from quire.sources.perplexity.checkpoint import auth_path
from quire.sources.perplexity.client import PerplexityClient, retry_after_s
from quire.sources.perplexity.errors import LoginRequired, PerplexityUnavailable
from tests.fakes.perplexity import LIST_PATH, PINNED_PATH, FakePerplexity, make_thread
from tests.perplexity.conftest import fast_settings, log_in

pytestmark = pytest.mark.slow  # real Chromium against the fake site

THREADS = [make_thread(i, turns=3, pinned=i == 5) for i in range(1, 6)]


@pytest.fixture(scope="module")
def settings(
    tmp_path_factory: pytest.TempPathFactory, fake: FakePerplexity, chromium: Browser
) -> Settings:
    s = fast_settings(tmp_path_factory.mktemp("client") / "data", fake)
    log_in(s, fake, chromium)
    return s


@pytest.fixture
def client(
    settings: Settings, fake: FakePerplexity, chromium: Browser
) -> Iterator[PerplexityClient]:
    fake.reset()
    with pbrowser.logged_in_page(settings, browser=chromium) as page:
        yield PerplexityClient(pbrowser.page_fetch(page, settings), settings)
    fake.reset()


def test_login_saves_an_owner_only_storage_state(settings: Settings, fake: FakePerplexity) -> None:
    path = auth_path(settings)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    cookies = json.loads(path.read_text())["cookies"]
    assert [c["name"] for c in cookies] == ["next-auth.session-token"]
    assert cookies[0]["value"] in fake.sessions


def test_login_times_out_with_a_clear_message(
    tmp_path: Path, fake: FakePerplexity, chromium: Browser
) -> None:
    s = fast_settings(tmp_path / "data", fake)
    started = time.monotonic()
    with pytest.raises(LoginRequired, match=r"not logged in after 2 s"):
        pbrowser.login(s, headless=True, timeout_s=2, browser=chromium)
    assert time.monotonic() - started < 6
    assert not auth_path(s).exists()


def test_list_pages_with_limit_and_offset_and_merges_pinned(
    client: PerplexityClient, fake: FakePerplexity
) -> None:
    threads = client.list_threads()
    assert [t["uuid"] for t in threads] == [t.uuid for t in fake.listed()]
    bodies = [r.body for r in fake.requests_to(LIST_PATH)]
    assert [(b["limit"], b["offset"]) for b in bodies] == [(2, 0), (2, 2), (2, 4)]
    assert all(
        r.query == {"version": "2.18", "source": "default"} for r in fake.requests_to(LIST_PATH)
    )
    assert bodies[0]["ascending"] is False and bodies[0]["send_last_entry"] is True
    assert len(fake.requests_to(PINNED_PATH)) == 1
    assert all(r.authed for r in fake.requests)  # the cookie went with every fetch
    # A pinned thread the regular list does not show is merged in, once.
    hidden = make_thread(9, pinned=True)
    hidden.last_query_datetime = "2000-01-01T00:00:00"
    fake.threads[hidden.slug] = hidden
    try:
        assert [t["uuid"] for t in client.list_threads(limit=2)] == [
            THREADS[4].uuid,
            THREADS[3].uuid,
        ]
        assert hidden.uuid in [t["uuid"] for t in client.list_threads()]
    finally:
        fake.delete(hidden.slug)


def test_thread_follows_the_cursor(client: PerplexityClient, fake: FakePerplexity) -> None:
    data = client.thread(THREADS[0].slug)
    assert [e["uuid"] for e in data.entries] == [e["uuid"] for e in THREADS[0].entries]
    assert data.metadata["uuid"] == THREADS[0].uuid
    requests = fake.requests_to(f"/rest/thread/{THREADS[0].slug}")
    assert len(requests) == 3 and "cursor" not in requests[0].query
    assert (
        requests[1].query["cursor"] and requests[1].query["cursor"] != requests[2].query["cursor"]
    )


def test_429_honours_retry_after_then_succeeds(
    client: PerplexityClient, fake: FakePerplexity
) -> None:
    fake.fail_next(1, status=429, path=LIST_PATH, retry_after="1")
    assert len(client.list_threads()) == 5
    first, second = fake.requests_to(LIST_PATH)[:2]
    assert second.at - first.at >= 0.95  # the server's Retry-After, not the 0.05 s backoff


def test_5xx_is_retried_with_backoff(client: PerplexityClient, fake: FakePerplexity) -> None:
    fake.fail_next(2, status=502, path="/rest/thread/")
    assert len(client.thread(THREADS[1].slug).entries) == 3
    assert len(fake.requests_to(f"/rest/thread/{THREADS[1].slug}")) == 5  # 2 failed + 3 pages


def test_5xx_beyond_the_retries_is_unavailable(
    client: PerplexityClient, fake: FakePerplexity
) -> None:
    fake.fail_next(3, status=503, path="/rest/thread/")
    with pytest.raises(PerplexityUnavailable, match=r"HTTP 503 .* after 3 tries"):
        client.thread(THREADS[1].slug)
    assert len(fake.requests_to("/rest/thread/")) == 3


@pytest.mark.parametrize("status", [401, 403])
def test_auth_errors_are_not_retried(
    client: PerplexityClient, fake: FakePerplexity, status: int
) -> None:
    fake.fail_next(1, status=status, path="/rest/thread/")
    with pytest.raises(LoginRequired, match=rf"{status} .*quire perplexity login"):
        client.thread(THREADS[1].slug)
    assert len(fake.requests_to("/rest/thread/")) == 1


def test_unknown_thread_is_not_found(client: PerplexityClient) -> None:
    with pytest.raises(NotFound):
        client.thread("no-such-thread")


def test_retry_after_parsing() -> None:
    assert retry_after_s("3") == 3.0
    assert retry_after_s("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past
    assert retry_after_s("soon") is None and retry_after_s(None) is None


def test_without_the_cookie_lists_are_empty_and_threads_401(
    settings: Settings, fake: FakePerplexity, chromium: Browser
) -> None:
    with pbrowser.site_page(settings, chromium, state=None) as page:
        anonymous = PerplexityClient(pbrowser.page_fetch(page, settings), settings)
        assert anonymous.session() == {}
        assert anonymous.list_threads() == []  # Perplexity's logged-out answer: 200 with []
        with pytest.raises(LoginRequired, match="401"):
            anonymous.thread(THREADS[0].slug)
    assert not any(r.authed for r in fake.requests)


def test_a_broken_saved_login_asks_for_a_new_one(
    tmp_path: Path, fake: FakePerplexity, chromium: Browser
) -> None:
    s = fast_settings(tmp_path / "data", fake)
    auth_path(s).parent.mkdir(parents=True)
    auth_path(s).write_text("{not json")
    with (
        pytest.raises(LoginRequired, match="cannot be read"),
        pbrowser.logged_in_page(s, browser=chromium),
    ):
        pass
    log_in(s, fake, chromium)  # a new login replaces it
    assert json.loads(auth_path(s).read_text())["cookies"]


def test_a_visible_browser_without_a_display_and_a_missing_chromium_are_explained(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with pytest.raises(PerplexityUnavailable, match="needs a display"):
        with pbrowser.launch(Settings(data_dir=tmp_path), headless=False):
            pass
    missing = Settings(data_dir=tmp_path, chromium=tmp_path / "no-chromium")
    with pytest.raises(PerplexityUnavailable, match="Chromium not found .* QUIRE_CHROMIUM"):
        with pbrowser.launch(missing, headless=True):
            pass
