"""A small real library for the MCP tests, built once: the Grumman service bulletin (a scan,
OCRed), the DMCA summary (PDF) and Alice (EPUB), through the real intake and worker."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from quire.config import Settings
from quire.ingest.intake import add_file
from quire.storage.migrate import open_database
from tests.conftest import DOCS
from tests.runtime import drain

GRUMMAN = DOCS / "pdf" / "scan-grumman-175.pdf"
DMCA = DOCS / "pdf" / "dmca-summary.pdf"
ALICE = DOCS / "epub" / "alice-epub3.epub"
FILES = (GRUMMAN, DMCA, ALICE)


@pytest.fixture(scope="session")
def mcp_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The library's data directory; tests that write use a copy (``copy_library``)."""
    data = tmp_path_factory.mktemp("mcp-library") / "data"
    settings = Settings(data_dir=data, ocr_dpi=200, llm_backends="none")
    db = open_database(settings)
    for path in FILES:
        add_file(
            db,
            settings.files_dir,
            path,
            path.name,
            max_bytes=settings.max_upload_bytes,
            source_key=f"path:{path.resolve()}",
        )
    db.dispose()
    drain(settings)
    return data


def copy_library(library: Path, into: Path) -> Path:
    """A copy of the library's data directory (nothing has it open between tests)."""
    return Path(shutil.copytree(library, into / "data"))
