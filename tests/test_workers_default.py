"""How many ingest workers `make run` (and `quire up`) start: QUIRE_WORKERS, else one per
core as memory allows."""

from __future__ import annotations

import os

import pytest

from quire.config import Settings


def test_one_ingest_worker_per_core_as_memory_allows(monkeypatch: pytest.MonkeyPatch) -> None:
    from quire.cli import common

    monkeypatch.setattr(common.os, "cpu_count", lambda: 16)
    monkeypatch.setattr(common, "_memory_mb", lambda: 64 << 10)
    assert common.default_workers(Settings()) == 16  # no cap of 4 any more
    monkeypatch.setattr(common, "_memory_mb", lambda: 8 << 10)  # half of 8 GB holds 4
    assert common.default_workers(Settings()) == 4
    monkeypatch.setattr(common, "_memory_mb", lambda: 1 << 10)
    assert common.default_workers(Settings()) == 1
    assert common.default_workers(Settings(workers=3)) == 3  # QUIRE_WORKERS decides
    monkeypatch.undo()
    assert 1 <= common.default_workers() <= (os.cpu_count() or 1)
