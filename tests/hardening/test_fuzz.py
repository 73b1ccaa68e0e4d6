"""Schemathesis against the app's own OpenAPI schema, over HTTP to a live uvicorn on 127.0.0.1:
no 500s, every error in the one JSON error shape, documented responses as documented. (Which
4xx a route may answer is not listed per route in the schema, so undocumented 4xx codes are
allowed as long as they have the one shape.)

Bounded: ``QUIRE_FUZZ_EXAMPLES`` examples per operation (default 25; about a minute here).
``GET /api/jobs/{job_id}/events`` is left out: for a job that no worker runs (the fuzzer
uploads files) it streams until the job ends, by design; it is tested in tests/api.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
import uvicorn
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
)

from quire.app import create_app
from quire.config import Settings
from quire.ingest.worker import Worker
from tests.conftest import DOCS
from tests.e2e.stack import free_port

pytestmark = pytest.mark.slow
TOKEN = "fuzzing-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
EXAMPLES = int(os.environ.get("QUIRE_FUZZ_EXAMPLES", "25"))
ERROR_KEYS = {"status", "code", "message", "detail"}

schema = schemathesis.openapi.from_dict(create_app(Settings(llm_backends="none")).openapi())
schema = schema.exclude(path="/api/jobs/{job_id}/events")
cases_run: list[tuple[str, int]] = []


@schemathesis.check
def one_error_shape(ctx: Any, response: schemathesis.Response, case: schemathesis.Case) -> None:
    """Every 4xx/5xx is {"error": {"status", "code", "message", "detail"}}, status matching."""
    if response.status_code < 400:
        return None
    body = response.json()
    assert isinstance(body, dict) and set(body) == {"error"}, body
    error = body["error"]
    assert set(error) == ERROR_KEYS, error
    assert error["status"] == response.status_code, error
    assert isinstance(error["code"], str) and error["code"], error
    assert isinstance(error["message"], str) and error["message"], error
    return None


@schemathesis.check
def success_content_type(
    ctx: Any, response: schemathesis.Response, case: schemathesis.Case
) -> bool | None:
    """Content-Type as documented, for successes. FastAPI documents a streaming route's errors
    under the stream's media type (text/event-stream) although they are JSON: reported, and
    left alone here, since fixing it changes the schema the web app's types come from."""
    if response.status_code >= 400:
        return None
    return content_type_conformance(ctx, response, case)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The API on a free port, with a small library (so that some ids exist)."""
    data: Path = tmp_path_factory.mktemp("fuzz") / "data"
    app_settings = Settings(
        data_dir=data, llm_backends="none", api_token=TOKEN, max_upload_mb=2, dense_mirror=False
    )
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(app_settings), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the API did not start"
        time.sleep(0.05)
    with httpx.Client(base_url=base, headers=AUTH, timeout=60) as http:
        for path in (
            DOCS / "perplexity" / "pnw-states-multiturn.md",
            DOCS / "pdf" / "dmca-summary.pdf",
        ):
            r = http.post("/api/documents", files={"files": (path.name, path.read_bytes())})
            assert r.status_code == 202, r.text
        worker = Worker(app_settings)
        worker.run(drain=True)
        worker.close()
        r = http.post("/api/chat", json={"message": "largest state", "llm": False})
        assert r.status_code == 200
    yield base
    server.should_exit = True
    thread.join(timeout=30)
    counts: dict[str, int] = {}
    for op, _ in cases_run:
        counts[op] = counts.get(op, 0) + 1
    statuses: dict[int, int] = {}
    for _, status in cases_run:
        statuses[status] = statuses.get(status, 0) + 1
    print(f"\nfuzz: {len(cases_run)} cases over {len(counts)} operations; statuses {statuses}")


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
def test_api_survives_fuzzing(case: schemathesis.Case, live: str) -> None:
    response = case.call(base_url=live, headers=AUTH, timeout=60)
    cases_run.append((case.operation.label, response.status_code))
    case.validate_response(
        response,
        checks=[
            not_a_server_error,
            one_error_shape,
            success_content_type,
            response_schema_conformance,
        ],
        headers=AUTH,
    )
