"""A small run of bench/load.py: concurrent search and chat clients while the worker ingests a
PDF. It asserts correctness only (no error, no "database is locked", the PDF ingested), never
timings; the figures come from the full benchmark."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench import load

from tests.conftest import DOCS

pytestmark = pytest.mark.slow


def test_concurrent_clients_during_ingest_get_no_errors(tmp_path: Path) -> None:
    r = load.run(
        tmp_path,
        clients=6,
        pages=12,
        duration=12,
        max_requests=400,
        chat_share=0.2,
        idle_requests=5,
        busy_seconds=4,
        seed_files=[
            DOCS / "pdf" / "dmca-summary.pdf",
            DOCS / "perplexity" / "pnw-states-multiturn.md",
        ],
    )
    assert r["idle"]["errors"] == 0, r["idle"]["error_samples"]
    assert r["load"]["errors"] == 0, r["load"]["error_samples"]
    assert r["busy"]["errors"] == 0 and r["busy"]["search_n"] >= 5, r["busy"]
    assert r["load"]["locked"] == r["locked_in_logs"] == r["tracebacks_in_logs"] == 0, r
    assert r["load"]["search_n"] >= 10 and r["load"]["chat_n"] >= 1, r["load"]
    assert r["ingest"]["status"] == "ready" and r["ingest"]["chunks"] >= 12, r["ingest"]
