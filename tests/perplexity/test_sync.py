"""Sync against the fake site through real Chromium: export + ingest, incremental re-runs,
one changed thread, deleted threads kept, interruption and resume, logged-out sessions, and
search citing a thread's turn and URL.

The module syncs one library; each test measures before and after its own step, so the tests
do not depend on one another's order.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser

from quire.config import Settings
from quire.embed import make_embedder
from quire.retrieval.options import SearchOptions
from quire.retrieval.search import Searcher
from quire.sources.perplexity.checkpoint import Checkpoint, root
from quire.sources.perplexity.errors import (
    LoggedOut,
    LoginRequired,
    PerplexityUnavailable,
    SyncRunning,
)
from quire.sources.perplexity.status import SyncLock, read_status, status_report
from quire.sources.perplexity.sync import SyncCounts, SyncReport, run_sync
from quire.storage.db import Database
from quire.storage.migrate import open_database
from tests.e2e.helpers import integrity
from tests.fakes.perplexity import FakePerplexity, make_thread
from tests.perplexity.conftest import chunk_counts, drain, fast_settings, job_count, log_in

pytestmark = pytest.mark.slow  # real Chromium against the fake site

THREADS = [
    make_thread(i, turns=2 + i % 2, space="Research" if i % 2 else None) for i in range(1, 7)
]


@pytest.fixture(scope="module")
def env(
    tmp_path_factory: pytest.TempPathFactory, fake: FakePerplexity, chromium: Browser
) -> Iterator[tuple[Settings, Database]]:
    settings = fast_settings(tmp_path_factory.mktemp("sync") / "data", fake)
    db = open_database(settings)
    log_in(settings, fake, chromium)
    yield settings, db
    db.dispose()


@pytest.fixture(scope="module")
def first(env: tuple[Settings, Database], chromium: Browser) -> tuple[SyncReport, list[SyncCounts]]:
    settings, db = env
    seen: list[SyncCounts] = []
    report = run_sync(
        settings,
        db,
        browser=chromium,
        on_progress=lambda c, total, t: seen.append(SyncCounts(**vars(c))),
    )
    drain(settings, db)
    return report, seen


@pytest.fixture(autouse=True)
def _clean_fake(fake: FakePerplexity) -> Iterator[None]:
    fake.reset()
    yield
    fake.reset()


def sync(env: tuple[Settings, Database], chromium: Browser, **kw: Any) -> SyncReport:
    return run_sync(env[0], env[1], browser=chromium, **kw)


def files_state(settings: Settings) -> dict[str, tuple[int, int]]:
    """(mtime_ns, size) of every export, raw JSON and the checkpoint."""
    base = root(settings)
    paths = [*base.glob("exports/**/*.md"), *base.glob("raw/*.json"), base / "checkpoint.json"]
    return {str(p.relative_to(base)): (p.stat().st_mtime_ns, p.stat().st_size) for p in paths}


def doc_rows(db: Database) -> dict[str, tuple[int, str, int]]:
    with db.read() as conn:
        rows = conn.exec_driver_sql(
            "SELECT source_key, id, status, page_count FROM documents WHERE kind = 'perplexity'"
        ).all()
    return {str(r[0]): (int(r[1]), str(r[2]), int(r[3])) for r in rows}


def test_first_sync_exports_and_ingests_every_thread(
    env: tuple[Settings, Database], first: tuple[SyncReport, list[SyncCounts]], fake: FakePerplexity
) -> None:
    settings, db = env
    report, seen = first
    c = report.counts
    assert (c.listed, c.changed, c.exported, c.ingested, c.failed) == (6, 6, 6, 6, 0)
    assert len(report.job_ids) == 6 and not report.resumed
    assert (
        seen
        and seen[-1].exported == 6
        and [s.visited for s in seen] == sorted(s.visited for s in seen)
    )
    base = root(settings)
    for t in THREADS:
        space = "Research" if t.collection else "Library"
        md = base / "exports" / space / f"{t.title} ({t.slug}).md"
        assert md.read_text().startswith(f"# {t.title}\n"), md
        raw = json.loads((base / "raw" / f"{t.slug}.json").read_text())
        assert len(raw["entries"]) == len(t.entries) and raw["thread"]["uuid"] == t.uuid
    docs = doc_rows(db)
    assert set(docs) == {f"perplexity:{t.slug}" for t in THREADS}
    for t in THREADS:
        _, status, pages = docs[f"perplexity:{t.slug}"]
        assert status == "ready" and pages == len(t.entries)  # one page per turn
    checkpoint = Checkpoint.load(settings)
    assert {u: s.entries for u, s in checkpoint.threads.items()} == {
        t.uuid: len(t.entries) for t in THREADS
    }
    assert not (base / "run.json").exists()
    last = read_status(settings)["last_run"]
    assert last["outcome"] == "ok" and last["counts"]["exported"] >= 6


def test_second_sync_with_nothing_changed_writes_nothing(
    env: tuple[Settings, Database], first: Any, fake: FakePerplexity, chromium: Browser
) -> None:
    settings, db = env
    before = (files_state(settings), job_count(db), chunk_counts(db), doc_rows(db))
    report = sync(env, chromium)
    c = report.counts
    assert (c.changed, c.exported, c.ingested, c.failed) == (0, 0, 0, 0)
    assert c.unchanged == c.listed == len(fake.threads) and report.job_ids == []
    assert (files_state(settings), job_count(db), chunk_counts(db), doc_rows(db)) == before


def test_changing_one_thread_reexports_and_reingests_only_it(
    env: tuple[Settings, Database], first: Any, fake: FakePerplexity, chromium: Browser
) -> None:
    settings, db = env
    target = THREADS[2]
    before_files, before_jobs, before_chunks = (
        files_state(settings),
        job_count(db),
        chunk_counts(db),
    )
    fake.edit_answer(target.slug, 1, "Revised: the glimmerstone count of topic 3 is now 777777.")
    report = sync(env, chromium)
    assert (report.counts.changed, report.counts.exported, report.counts.ingested) == (1, 1, 1)
    assert job_count(db) == before_jobs + 1
    after_files = files_state(settings)
    changed = {k for k in after_files if after_files[k] != before_files.get(k)}
    md = f"exports/Research/{target.title} ({target.slug}).md"
    assert changed == {md, f"raw/{target.slug}.json", "checkpoint.json"}
    drain(settings, db)
    assert chunk_counts(db) == before_chunks  # replaced, not added
    checks = integrity(db)
    assert checks["duplicate_positions"] == checks["orphan_vectors"] == checks["orphan_chunks"] == 0
    assert checks["chunks"] == checks["vectors"] == checks["fts"]
    with db.read() as conn:
        texts = [
            r[0]
            for r in conn.exec_driver_sql(
                "SELECT c.text FROM page_chunks c JOIN documents d ON d.id = c.document_id "
                "WHERE d.source_key = ? AND c.page = 2",
                (f"perplexity:{target.slug}",),
            )
        ]
    assert any("777777" in t for t in texts) and not any("3001" in t for t in texts)


def test_search_finds_a_synced_fact_and_cites_its_turn_and_url(
    env: tuple[Settings, Database], first: Any, fake: FakePerplexity
) -> None:
    settings, db = env
    target = THREADS[3]
    embedder = make_embedder(settings)
    searcher = Searcher(db, settings, embedder)
    try:
        result = searcher.search(
            "glimmerstone count of topic 4 is 4001",
            SearchOptions(kinds=("perplexity",), rerank=False, limit=5),
        )
    finally:
        searcher.close()
        embedder.close()
    hit = result.hits[0]
    assert "4001" in hit.text and hit.kind == "perplexity"
    assert hit.page == 2  # the second turn
    assert hit.heading_path == "What is fact 1 of topic 4?"
    assert hit.metadata["url"] == f"{fake.url}/search/{target.slug}"
    assert hit.title == target.title


def test_interrupted_sync_resumes_without_redoing_finished_threads(
    env: tuple[Settings, Database], first: Any, fake: FakePerplexity, chromium: Browser
) -> None:
    settings, db = env
    new = [make_thread(i) for i in range(20, 25)]  # newest: listed first
    for t in new:
        fake.threads[t.slug] = t
    try:
        fake.fail_after_threads = (2, 503)  # the site goes down after two threads
        with pytest.raises(PerplexityUnavailable, match="3 threads in a row failed"):
            sync(env, chromium)
        run = json.loads((root(settings) / "run.json").read_text())
        assert run["done"] == [new[4].uuid, new[3].uuid]
        assert set(Checkpoint.load(settings).threads) >= {new[4].uuid, new[3].uuid}
        assert read_status(settings)["last_run"]["outcome"] == "perplexity_unavailable"

        fake.reset()
        report = sync(env, chromium)
        assert report.resumed and report.counts.resumed == 2
        assert report.counts.exported == 3 and report.counts.failed == 0
        fetched = {
            r.path.rsplit("/", 1)[1]
            for r in fake.requests_to("/rest/thread/")
            if "list" not in r.path
        }
        assert new[4].slug not in fetched and new[3].slug not in fetched
        assert {t.slug for t in new[:3]} <= fetched
        assert not (root(settings) / "run.json").exists()
        assert {f"perplexity:{t.slug}" for t in new} <= set(doc_rows(db))
        drain(settings, db)
        assert integrity(db)["duplicate_positions"] == 0
    finally:
        for t in new:
            fake.threads.pop(t.slug, None)
        sync(env, chromium)  # the five are now deleted upstream: kept, marked


def test_threads_deleted_upstream_are_kept_and_marked(
    env: tuple[Settings, Database], first: Any, fake: FakePerplexity, chromium: Browser
) -> None:
    settings, db = env
    gone = fake.delete(THREADS[0].slug)
    try:
        docs_before = doc_rows(db)
        report = sync(env, chromium)
        assert report.counts.deleted_upstream >= 1
        state = Checkpoint.load(settings).threads[gone.uuid]
        assert state.deleted_upstream and state.missing_since
        assert (root(settings) / state.markdown).is_file()
        assert doc_rows(db) == docs_before  # nothing deleted from the library
        assert status_report(settings)["threads"]["deleted_upstream"] >= 1
    finally:
        fake.threads[gone.slug] = gone
    report = sync(env, chromium)
    assert not Checkpoint.load(settings).threads[gone.uuid].deleted_upstream
    assert report.counts.changed == 0  # it came back unchanged: not exported again


def test_logged_out_session_stops_and_changes_nothing(
    env: tuple[Settings, Database], first: Any, fake: FakePerplexity, chromium: Browser
) -> None:
    settings, db = env
    before = (files_state(settings), job_count(db), doc_rows(db))
    checkpoint_bytes = (root(settings) / "checkpoint.json").read_bytes()
    fake.list_logged_out = True  # 200 with [] from both lists
    with pytest.raises(LoggedOut, match=r"listed no threads, but \d+ were synced before"):
        sync(env, chromium)
    assert (files_state(settings), job_count(db), doc_rows(db)) == before
    assert (root(settings) / "checkpoint.json").read_bytes() == checkpoint_bytes
    assert not (root(settings) / "run.json").exists()
    status = status_report(settings)
    assert status["last_run"]["outcome"] == "perplexity_logged_out"
    assert status["login"]["valid"] is False and not status["running"]


def test_expired_login_asks_to_log_in_again(
    env: tuple[Settings, Database], first: Any, fake: FakePerplexity, chromium: Browser
) -> None:
    settings, db = env
    before = files_state(settings)
    fake.revoke_sessions()
    with pytest.raises(LoginRequired, match="quire perplexity login"):
        sync(env, chromium)
    assert files_state(settings) == before
    assert status_report(settings)["login"]["valid"] is False
    log_in(settings, fake, chromium)
    assert status_report(settings)["login"]["valid"] is True
    report = sync(env, chromium)
    assert report.counts.failed == 0 and read_status(settings)["login"]["valid"] is True


def test_401_in_the_middle_stops_and_the_next_run_resumes(
    env: tuple[Settings, Database], first: Any, fake: FakePerplexity, chromium: Browser
) -> None:
    settings, _ = env
    fake.fail_next(1, status=401, path=f"/rest/thread/{fake.listed()[2].slug}")
    with pytest.raises(LoginRequired, match="401"):
        sync(env, chromium)
    done = json.loads((root(settings) / "run.json").read_text())["done"]
    assert done == [t.uuid for t in fake.listed()[:2]]
    report = sync(env, chromium)
    assert report.resumed and report.counts.resumed == 2
    assert not (root(settings) / "run.json").exists()


def test_limit_visits_only_the_newest_and_marks_nothing_deleted(
    env: tuple[Settings, Database], first: Any, fake: FakePerplexity, chromium: Browser
) -> None:
    settings, _ = env
    missing_before = status_report(settings)["threads"]["deleted_upstream"]
    report = sync(env, chromium, limit=1)
    assert report.counts.listed == 1 and report.counts.visited == 1
    fetched = {r.path for r in fake.requests_to("/rest/thread/") if "list" not in r.path}
    assert fetched == {f"/rest/thread/{fake.listed()[0].slug}"}
    assert status_report(settings)["threads"]["deleted_upstream"] == missing_before


def test_one_sync_at_a_time(env: tuple[Settings, Database], first: Any, chromium: Browser) -> None:
    settings, _ = env
    lock = SyncLock(settings).acquire_or_raise()
    try:
        assert status_report(settings)["running"] is True
        with pytest.raises(SyncRunning):
            sync(env, chromium)
    finally:
        lock.release()
    assert status_report(settings)["running"] is False


def test_exports_are_where_the_checkpoint_says(env: tuple[Settings, Database], first: Any) -> None:
    settings, _ = env
    for state in Checkpoint.load(settings).threads.values():
        assert (root(settings) / state.markdown).is_file()
        assert Path(state.markdown).parts[0] == "exports"
