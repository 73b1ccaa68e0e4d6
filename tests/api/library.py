"""A small real library for API tests: Alice (EPUB) and the DMCA summary (PDF), uploaded
through the API and ingested by a real worker."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from quire.config import Settings
from tests.conftest import DOCS
from tests.runtime import drain, make_app

FILES = (DOCS / "epub" / "alice-epub3.epub", DOCS / "pdf" / "dmca-summary.pdf")


def load_library(client: TestClient, settings: Settings, paths: Sequence[Path] = FILES) -> None:
    """Upload ``paths`` (FILES) through ``client`` and drain the queue with a worker."""
    for path in paths:
        r = client.post(
            "/api/documents", files={"files": (path.name, io.BytesIO(path.read_bytes()))}
        )
        assert r.status_code == 202, r.text
    drain(settings)


def make_client(library: Settings, ollama_url: str, **overrides: Any) -> TestClient:
    """An app on ``library`` that answers with the Ollama at ``ollama_url`` (no retries)."""
    values: dict[str, Any] = {"llm_backends": "ollama", "llm_retries": 0, **overrides}
    settings = Settings(
        data_dir=library.data_dir,
        database_url=library.database_url,
        ollama_url=ollama_url,
        **values,
    )
    return TestClient(make_app(settings))
