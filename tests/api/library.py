"""A small real library for API tests: Alice (EPUB) and the DMCA summary (PDF), uploaded
through the API and ingested by a real worker."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

from fastapi.testclient import TestClient

from quire.config import Settings
from tests.conftest import DOCS
from tests.runtime import drain

FILES = (DOCS / "epub" / "alice-epub3.epub", DOCS / "pdf" / "dmca-summary.pdf")


def load_library(client: TestClient, settings: Settings, paths: Sequence[Path] = FILES) -> None:
    """Upload ``paths`` (FILES) through ``client`` and drain the queue with a worker."""
    for path in paths:
        r = client.post(
            "/api/documents", files={"files": (path.name, io.BytesIO(path.read_bytes()))}
        )
        assert r.status_code == 202, r.text
    drain(settings)
