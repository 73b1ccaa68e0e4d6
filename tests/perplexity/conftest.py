"""Shared pieces: the fake site, one Chromium per module, settings aimed at the fake."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser

from quire.config import Settings
from quire.ingest.worker import Worker
from quire.sources.perplexity import browser as pbrowser
from quire.storage.db import Database
from tests.fakes.perplexity import FakePerplexity


def fast_settings(data_dir: Path, fake: FakePerplexity, **extra: Any) -> Settings:
    """Settings aimed at the fake, with short pacing and backoff so tests stay quick."""
    values: dict[str, Any] = {
        "data_dir": data_dir,
        "perplexity_url": fake.url,
        "perplexity_delay_s": 0,
        "perplexity_backoff_s": 0.05,
        "perplexity_backoff_max_s": 2,
        "perplexity_retries": 2,
        "perplexity_timeout_s": 10,
        "perplexity_page_size": 2,
        "perplexity_checkpoint_every": 1,
        "perplexity_login_timeout_s": 15,
    }
    values.update(extra)
    return Settings(**values)


@pytest.fixture(scope="module")
def fake(request: pytest.FixtureRequest) -> Iterator[FakePerplexity]:
    """The fake site for the module, serving the module's ``THREADS``."""
    with FakePerplexity(list(getattr(request.module, "THREADS", []))) as site:
        yield site


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    """One headless Chromium for the module (each sync opens its own context)."""
    with pbrowser.launch(Settings(), headless=True) as b:
        yield b


def log_in(settings: Settings, fake: FakePerplexity, chromium: Browser) -> dict[str, Any]:
    """The real login flow, the fake's home page signing the browser in."""
    fake.auto_login = True
    try:
        return pbrowser.login(settings, headless=True, browser=chromium)
    finally:
        fake.auto_login = False


def drain(settings: Settings, db: Database) -> int:
    """Run the queued ingest jobs; returns how many ran."""
    worker = Worker(settings, db=db)
    try:
        return worker.run(drain=True)
    finally:
        worker.close()


def job_count(db: Database) -> int:
    with db.read() as conn:
        return int(conn.exec_driver_sql("SELECT count(*) FROM ingest_jobs").scalar_one())


def chunk_counts(db: Database) -> dict[str, int]:
    """Chunks per Perplexity document, keyed by source key."""
    with db.read() as conn:
        rows = conn.exec_driver_sql(
            "SELECT d.source_key, count(c.id) FROM documents d "
            "LEFT JOIN page_chunks c ON c.document_id = d.id GROUP BY d.id"
        ).all()
    return {str(r[0]): int(r[1]) for r in rows}
