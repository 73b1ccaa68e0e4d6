"""The stack as `make run` starts it: nginx (own prefix) → uvicorn API, plus a worker process."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import yaml

from tests.conftest import DOCS, REPO
from tests.e2e.stack import run_stack

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def stack(
    tmp_path_factory: pytest.TempPathFactory, module_database_url: str | None
) -> Iterator[str]:
    """One stack per module and backend: its tests touch nothing the others read."""
    env = {"QUIRE_DATABASE_URL": module_database_url} if module_database_url else {}
    with run_stack(tmp_path_factory.mktemp("stack"), **env) as running:
        yield running.web


@pytest.mark.both_backends
def test_upload_through_nginx_streams_job_progress_to_ready(stack: str) -> None:
    pdf = DOCS / "pdf" / "dmca-summary.pdf"
    big = b"x" * (3 * 1024 * 1024)
    with httpx.Client(base_url=stack, timeout=60) as http:
        # Over nginx's default 1 MB body limit: accepted (then rejected by content type).
        r = http.post("/api/documents", files={"files": ("big.bin", b"\x00" + big)})
        assert r.status_code == 415 and r.json()["error"]["code"] == "unsupported_type"
        r = http.post("/api/documents", files={"files": (pdf.name, pdf.read_bytes())})
        assert r.status_code == 202, r.text
        job_id = r.json()["files"][0]["job_id"]
        doc_id = r.json()["files"][0]["document_id"]
        events: list[tuple[str, dict[str, object], float]] = []
        t0 = time.monotonic()
        with http.stream("GET", f"/api/jobs/{job_id}/events") as resp:
            assert resp.headers["content-type"].startswith("text/event-stream")
            event = ""
            for line in resp.iter_lines():
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: "):
                    events.append((event, json.loads(line[6:]), time.monotonic() - t0))
                    if event in ("done", "failed"):
                        break
        assert events[0][2] < 2.0, "the first event was held back (buffering?)"
        assert events[-1][0] == "done", events[-1]
        stages = [e[1]["stage"] for e in events]
        assert "embed" in stages or "extract" in stages
        progress = [float(e[1]["progress"]) for e in events]  # type: ignore[arg-type]
        assert progress == sorted(progress) and progress[-1] == 1.0
        page = http.get(f"/api/documents/{doc_id}/pages/1").json()
        assert page["page_count"] == 18 and page["text"].strip()


def test_spa_fallback_and_json_404_for_unknown_api_paths(stack: str) -> None:
    with httpx.Client(base_url=stack, timeout=10) as http:
        for path in ("/", "/library/42", "/chat", "/save"):
            r = http.get(path)
            assert r.status_code == 200 and "<title>Quire</title>" in r.text
            # The bookmarklet's window (/save) keeps its opener and may be opened from any page
            # (docs/using/browser-extension.md): nothing here may cut it off.
            for header in ("cross-origin-opener-policy", "content-security-policy"):
                assert header not in r.headers, (path, header)
        r = http.get("/api/definitely-not-a-route")
        assert r.status_code == 404
        assert r.headers["content-type"].startswith("application/json")
        assert r.json()["error"]["code"] == "not_found"
        assert http.get("/api/docs").status_code == 200


def test_compose_file_is_valid() -> None:
    for profile in ([], ["--profile", "team"]):
        out = subprocess.run(
            ["docker-compose", "-f", str(REPO / "docker-compose.yml"), *profile, "config", "-q"],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=REPO,
        )
        assert out.returncode == 0, out.stderr


def test_compose_profiles_split_the_single_and_the_team_library() -> None:
    """`docker compose up` starts one person's library (.env: COMPOSE_PROFILES=single);
    `--profile team` the PostgreSQL one instead, every service of it on the database and the
    shared originals. (Debian's docker-compose 1.29 lists every service in `config`, so the
    profiles are read from the resolved file.)"""
    out = subprocess.run(
        ["docker-compose", "-f", str(REPO / "docker-compose.yml"), "config"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert out.returncode == 0, out.stderr
    services = yaml.safe_load(out.stdout)["services"]
    profiles = {name: tuple(s.get("profiles", ())) for name, s in services.items()}
    assert profiles == {
        "ollama": (),
        "api": ("single",),
        "worker": ("single",),
        "watch": ("single",),
        "web": ("single",),
        "db": ("team",),
        "team-api": ("team",),
        "team-worker": ("team",),
        "team-web": ("team",),
    }
    env = (REPO / ".env").read_text()
    assert "COMPOSE_PROFILES=single" in env.splitlines()
    assert services["db"]["image"].startswith("pgvector/pgvector:")
    for name in ("team-api", "team-worker"):
        environment = services[name]["environment"]
        assert environment["QUIRE_DATABASE_URL"].startswith("postgresql+psycopg://quire:")
        assert "@db:5432/quire" in environment["QUIRE_DATABASE_URL"]
        assert "/originals" in _targets(services[name])
    for name in ("api", "worker", "watch"):
        assert "QUIRE_DATABASE_URL" not in services[name]["environment"]
    assert "api" in services["team-api"]["networks"]["default"]["aliases"]


def _targets(service: dict[str, Any]) -> set[str]:
    """Where a service's volumes are mounted (short "src:target:mode" or long syntax)."""
    return {
        v["target"] if isinstance(v, dict) else str(v).split(":")[1]
        for v in service.get("volumes", [])
    }
