"""``POST /api/models/reranker/pull`` against the fake Hugging Face Hub over HTTP: progress
events, then done, and the running app's next search reranks with the cross-encoder it pulled
(no restart); a hub that is down, a repo that is not there and a full disk are one clear error
event each with nothing installed; a second pull while one runs is refused (409)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from huggingface_hub import constants, file_download

from quire.config import Settings
from quire.models import pull as pull_module
from quire.retrieval.rerank import find_model_file, resolve_model_dir
from quire.retrieval.search import NO_CROSS_ENCODER
from tests.api.library import FILES
from tests.api.sse import parse_sse
from tests.fakes.hub import FakeHub
from tests.fakes.ollama import unused_url
from tests.libraries import library_copy
from tests.runtime import make_app

pytestmark = pytest.mark.slow  # a tiny model is built, a fake hub server runs

SEARCH = {"query": "What did the White Rabbit take out of its waistcoat-pocket?", "limit": 5}


@pytest.fixture(scope="module")
def library(request: pytest.FixtureRequest) -> Iterator[Settings]:
    yield from library_copy(request, "sqlite", FILES, llm_backends="none")


@pytest.fixture
def app_settings(
    library: Settings, hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Settings]:
    """The library with no reranker installed, pulling from the fake hub into a fresh cache
    (huggingface_hub read HF_ENDPOINT and HF_HOME at import: what it made of them is set)."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    endpoint(monkeypatch, hub.url)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    settings = Settings(
        data_dir=library.data_dir,
        llm_backends="none",
        rerank_repo="test/int8-onnx",
        rerank_min_logit=-1e9,
    )
    shutil.rmtree(settings.data_dir / "models", ignore_errors=True)
    hub.pace_s = 0.0
    yield settings
    hub.pace_s = 0.0
    shutil.rmtree(settings.data_dir / "models", ignore_errors=True)


def endpoint(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    """HF_ENDPOINT=url, as huggingface_hub would have read it at import."""
    monkeypatch.setattr(constants, "ENDPOINT", url)
    template = url + "/{repo_id}/resolve/{revision}/{filename}"
    monkeypatch.setattr(file_download, "HUGGINGFACE_CO_URL_TEMPLATE", template)


def pull(client: TestClient) -> list[tuple[str, Any]]:
    with client.stream("POST", "/api/models/reranker/pull") as r:
        assert r.status_code == 200, r.read()
        return list(parse_sse(r.iter_lines()))


def test_a_pull_reranks_the_next_search_without_a_restart(
    app_settings: Settings, hub: FakeHub
) -> None:
    hub.pace_s = 0.02  # the model's bytes arrive in parts: progress between 0 and 1
    with TestClient(make_app(app_settings)) as client:
        before = client.post("/api/search", json=SEARCH).json()
        assert before["rerank"] is None and NO_CROSS_ENCODER in before["notices"]
        status = client.get("/api/models").json()["reranker"]
        assert status == status | {"installed": False, "loaded": False, "pulling": False}

        events = pull(client)
        kinds = [e for e, _ in events]
        assert kinds[-1] == "done" and set(kinds[:-1]) == {"progress"}, kinds
        steps = [d for e, d in events if e == "progress"]
        model = next(d["step"] for d in steps if d["step"].endswith(".onnx"))
        fractions = [d["fraction"] for d in steps if d["step"] == model]
        assert any(0 < f < 1 for f in fractions if f is not None), fractions
        assert fractions[-1] == 1 and fractions == sorted(fractions), fractions
        assert any(d["step"].startswith("check") and d["done"] for d in steps)
        done = events[-1][1]
        assert done["loaded"] is True and done["up_to_date"] is False
        assert done["repo"] == "test/int8-onnx" and done["source"] == "int8 ONNX as published"
        assert Path(done["path"]).is_file() and done["size"] > 0

        after = client.post("/api/search", json=SEARCH).json()
        assert after["rerank"] is not None, after["notices"]
        assert after["rerank"]["model"].endswith(".onnx") and after["rerank"]["scored"] >= 1
        assert NO_CROSS_ENCODER not in after["notices"]
        assert all(h["rerank"] is not None for h in after["hits"])
        health = client.get("/api/health").json()["reranker"]
        assert health["loaded"] is True and health["error"] is None
        status = client.get("/api/models").json()["reranker"]
        assert status == status | {"installed": True, "loaded": True, "pulling": False}

        # Again: the same commit is installed, nothing is downloaded, search keeps reranking.
        asked = len(hub.requests)
        again = pull(client)
        assert again[-1][0] == "done" and again[-1][1]["up_to_date"] is True
        assert again[-1][1]["loaded"] is True
        assert not any("/lfs/" in path for _, path in hub.requests[asked:])
        assert client.post("/api/search", json=SEARCH).json()["rerank"]["scored"] >= 1


def test_a_second_pull_is_refused_and_leaving_does_not_stop_the_first(
    app_settings: Settings, hub: FakeHub
) -> None:
    hub.pace_s = 0.05
    with TestClient(make_app(app_settings)) as client:
        with client.stream("POST", "/api/models/reranker/pull") as first:
            assert first.status_code == 200
            events = parse_sse(first.iter_lines())
            assert next(events)[0] == "progress"
            second = client.post("/api/models/reranker/pull")
            assert second.status_code == 409, second.text
            error = second.json()["error"]
            assert error["code"] == "pull_in_progress" and "already" in error["message"]
            assert client.get("/api/models").json()["reranker"]["pulling"] is True
        # The page closed mid-download: the pull goes on to its end, and search uses it.
        deadline = time.monotonic() + 60
        while client.get("/api/models").json()["reranker"]["pulling"]:
            assert time.monotonic() < deadline, "the pull did not end"
            time.sleep(0.1)
        status = client.get("/api/models").json()["reranker"]
        assert status["installed"] and status["loaded"], status
        assert client.post("/api/search", json=SEARCH).json()["rerank"]["scored"] >= 1
    leftovers = [p.name for p in resolve_model_dir(app_settings).parent.iterdir()]
    assert not [n for n in leftovers if ".pull-" in n or ".old-" in n], leftovers


def test_failures_are_one_clear_error_and_install_nothing(
    app_settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    target = resolve_model_dir(app_settings)

    def failed(client: TestClient) -> dict[str, Any]:
        events = pull(client)
        assert [e for e, _ in events][-1] == "error" and [e for e, _ in events].count("error") == 1
        assert find_model_file(target) is None
        assert client.get("/api/models").json()["reranker"]["loaded"] is False
        assert client.post("/api/search", json=SEARCH).json()["rerank"] is None
        return dict(events[-1][1])

    with TestClient(make_app(app_settings)) as client:
        with monkeypatch.context() as down:
            endpoint(down, unused_url())
            error = failed(client)
        assert error["code"] == "hub_unreachable" and "HF_ENDPOINT" in error["message"], error

        usage = shutil.disk_usage(tmp_path)
        with monkeypatch.context() as full:
            full.setattr(pull_module.shutil, "disk_usage", lambda p: usage._replace(free=10**6))
            error = failed(client)
        assert error["code"] == "disk_full" and "MB are free" in error["message"], error

    missing = app_settings.model_copy(update={"rerank_repo": "test/no-such-model"})
    with TestClient(make_app(missing)) as client:
        error = failed(client)
    assert error["code"] == "model_repo_not_found", error
    assert "test/no-such-model" in error["message"]
