"""One real stack (nginx → API, worker) for the hardening tests that need processes, with an API
token and tight per-job limits, so that hostile files hit them in seconds."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.e2e.stack import Stack, run_stack

TOKEN = "hardening-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
# The slow PDF burns all of it; good files need a few seconds, more with 3 xdist workers busy.
JOB_TIMEOUT_S = 30
JOB_MEMORY_MB = 1024
MAX_UPLOAD_MB = 20  # run_stack's QUIRE_MAX_UPLOAD_MB; nginx allows 30m


@pytest.fixture(scope="package")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    env = {
        "QUIRE_API_TOKEN": TOKEN,
        "QUIRE_LLM_BACKENDS": "none",
        "QUIRE_JOB_TIMEOUT_S": str(JOB_TIMEOUT_S),
        "QUIRE_JOB_MEMORY_MB": str(JOB_MEMORY_MB),
    }
    with run_stack(tmp_path_factory.mktemp("hardening-stack"), **env) as running:
        yield running


@pytest.fixture
def web(stack: Stack) -> Iterator[httpx.Client]:
    """A client of the stack through nginx, with the token."""
    with httpx.Client(base_url=stack.web, headers=AUTH, timeout=60) as client:
        yield client
