"""The local site every link test fetches from (one per module), and a library that may
fetch from it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from quire.config import Settings
from tests.runtime import seed_sqlite
from tests.web.server import Site


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    served = Site().start()
    yield served
    served.stop()


def link_library(data_dir: Path, template: Path, **over: object) -> Settings:
    """A library that may fetch from 127.0.0.1, with small limits (3 MB, 1.5 s)."""
    values: dict[str, object] = {
        "data_dir": data_dir,
        "fetch_allow_hosts": "127.0.0.1",
        "fetch_timeout_s": 1.5,
        "max_upload_mb": 3,
    }
    settings = Settings(**{**values, **over})  # type: ignore[arg-type]
    seed_sqlite(template, settings.data_dir)
    return settings
