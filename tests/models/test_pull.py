"""``quire models pull`` against a fake Hugging Face Hub over HTTP (no network): the whole
pull → convert → check → install → load → rerank path, and each way a pull can fail."""

from __future__ import annotations

import errno
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import numpy as np
import pytest

from quire.errors import Conflict
from quire.ingest.intake import add_file
from quire.ingest.worker import Worker
from quire.models import convert as convert_module
from quire.models import pull as pull_module
from quire.models.hub import MANIFEST, inspect, read_manifest
from quire.models.pull import (
    DiskFull,
    HubUnreachable,
    NotAModel,
    RepoNotFound,
    Step,
    pull,
)
from quire.retrieval.options import SearchOptions
from quire.retrieval.rerank import CrossEncoderReranker, load_reranker
from quire.runtime import Runtime
from quire.storage.migrate import open_database
from tests.conftest import DOCS
from tests.fakes.hub import FakeHub
from tests.models.conftest import OTHER_INT8, OWN_INT8, Built, fresh_cache, spec_for

pytestmark = pytest.mark.slow  # a tiny model is built, a fake hub server runs

QUIRE = [sys.executable, "-m", "quire"]


def run(env: dict[str, str], *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*QUIRE, *args], env=env | extra, capture_output=True, text=True, timeout=300
    )


def files_fetched(hub: FakeHub, repo: str, since: int) -> set[str]:
    """The repo's files whose bytes were asked for after request ``since``: small files from
    their resolve URL, LFS files from the URL the hub redirected to."""
    fetched = set()
    for method, path in hub.requests[since:]:
        url = urlsplit(path)
        query = parse_qs(url.query)
        if method != "GET":
            continue
        if url.path.startswith(f"/{repo}/resolve/"):
            fetched.add(unquote(url.path).split("/", 5)[5])
        elif url.path.startswith("/lfs/") and query.get("repo") == [repo]:
            fetched.add(query["file"][0])
    return fetched


def no_leftovers(target: Path) -> bool:
    return not list(target.parent.glob(f".{target.name}.pull-*")) and not list(
        target.parent.glob(f".{target.name}.old-*")
    )


def test_a_weights_only_repo_is_exported_quantised_and_reranks_a_real_search(
    hub_env: dict[str, str], built: Built, tmp_path: Path
) -> None:
    data = Path(hub_env["QUIRE_DATA_DIR"])
    env = hub_env | {"QUIRE_RERANK_REPO": "test/weights-only"}
    missing = run(env, "models", "status", "reranker")
    assert missing.returncode == 1 and "quire models pull reranker" in missing.stdout

    r = run(env, "models", "pull")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PyTorch weights exported" in r.stdout and "checked" in r.stdout
    assert "download model.safetensors" in r.stderr  # the progress bars' labels

    status = json.loads(run(env, "models", "status", "--json").stdout)
    assert status[0]["present"] and status[0]["manifest"]["source"] == "exported"
    assert status[0]["manifest"]["repo"] == "test/weights-only"
    target = Path(status[0]["target"])
    assert sorted(p.name for p in target.iterdir()) == [
        "config.json",
        "model_quantized.onnx",
        MANIFEST,
        "tokenizer.json",
    ]
    assert no_leftovers(target)

    # The int8 export scores as the PyTorch model it came from does.
    import torch
    from tokenizers import Tokenizer

    query = "population of Washington state"
    passages = [
        "Washington has about eight million people.",
        "Oregon is larger in land area than Washington.",
        "Idaho's capital is Boise.",
        "The harbour froze early that winter.",
        "Bananas are rich in potassium.",
        "A cross-encoder reads both texts at once.",
    ]
    with CrossEncoderReranker(target) as reranker:
        pulled = reranker.score(query, passages)
    tok = Tokenizer.from_file(str(target / "tokenizer.json"))
    tok.no_padding()
    with torch.no_grad():
        reference = np.array(
            [
                built.torch_model(
                    input_ids=torch.tensor([(e := tok.encode(query, p)).ids]),
                    token_type_ids=torch.tensor([e.type_ids]),
                    attention_mask=torch.tensor([e.attention_mask]),
                ).logits.item()
                for p in passages
            ]
        )
    assert np.corrcoef(pulled, reference)[0, 1] > 0.9, (pulled, reference)

    # A real search through the runtime a user's `quire serve` opens.
    from quire.config import Settings

    settings = Settings(
        data_dir=data, rerank_repo="test/weights-only", rerank_min_logit=-1e9, ocr_dpi=200
    )
    db = open_database(settings)
    path = DOCS / "perplexity" / "pnw-states-multiturn.md"
    add_file(db, settings.files_dir, path, path.name, max_bytes=10**8)
    worker = Worker(settings, db=db)
    worker.run(drain=True)
    worker.close()
    db.dispose()
    with Runtime.open(settings, llm=False) as rt:
        assert rt.reranker is not None and "model_quantized.onnx" in rt.reranker.name
        result = rt.searcher.search("population of Washington", SearchOptions(limit=5))
    assert result.hits and result.rerank is not None and result.rerank.scored >= 1
    scores = [h.rerank for h in result.hits]
    assert all(s is not None for s in scores)
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]

    doctor = run(env, "doctor", QUIRE_OLLAMA_URL="http://127.0.0.1:9", COLUMNS="250")
    row = next(line for line in doctor.stdout.splitlines() if "reranker" in line)
    assert "ok" in row and "model_quantized.onnx" in row


def test_an_fp32_onnx_repo_is_quantised_at_pull_time(
    hub: FakeHub, built: Built, tmp_path: Path
) -> None:
    settings, spec = spec_for("test/fp32-onnx", tmp_path)
    since = len(hub.requests)
    steps: list[Step] = []
    result = pull(
        spec, endpoint=hub.url, offline=False, cache_dir=fresh_cache(tmp_path), report=steps.append
    )
    assert result.manifest.source == "quantised"
    assert result.manifest.model_file == "model_quantized.onnx"
    installed = spec.target / "model_quantized.onnx"
    assert 0 < installed.stat().st_size < len(built.fp32)
    assert not (spec.target / "onnx").exists()  # the fp32 file stays in the cache only
    assert files_fetched(hub, "test/fp32-onnx", since) >= {"onnx/model.onnx", "tokenizer.json"}
    assert "model.safetensors" not in files_fetched(hub, "test/fp32-onnx", since)
    assert any(s.label == "quantise to int8" and s.done for s in steps)
    assert any(s.label == "download onnx/model.onnx" and s.done for s in steps)
    assert load_reranker(settings) is not None


def test_an_int8_onnx_is_taken_as_published_and_a_second_pull_is_up_to_date(
    hub: FakeHub, built: Built, tmp_path: Path
) -> None:
    settings, spec = spec_for("test/int8-onnx", tmp_path)
    cache = fresh_cache(tmp_path)
    since = len(hub.requests)
    result = pull(spec, endpoint=hub.url, offline=False, cache_dir=cache)
    assert result.manifest.source == "int8"
    name = OWN_INT8.split("/")[1]
    assert result.manifest.model_file == name
    assert (spec.target / name).read_bytes() == built.int8
    fetched = files_fetched(hub, "test/int8-onnx", since)
    assert OWN_INT8 in fetched and "tokenizer.json" in fetched
    assert not fetched & {"onnx/model.onnx", "model.safetensors", OTHER_INT8}

    since = len(hub.requests)
    again = pull(spec, endpoint=hub.url, offline=False, cache_dir=cache)
    assert again.up_to_date and again.manifest.commit == result.manifest.commit
    assert files_fetched(hub, "test/int8-onnx", since) == set()
    assert load_reranker(settings) is not None


def test_offline_with_an_empty_cache_fails_clearly_without_a_request(
    hub_env: dict[str, str], hub: FakeHub
) -> None:
    env = hub_env | {"QUIRE_RERANK_REPO": "test/int8-onnx"}
    since = len(hub.requests)
    r = run(env, "models", "pull", HF_HUB_OFFLINE="1")
    assert r.returncode == 1
    assert "HF_HUB_OFFLINE is set" in r.stderr and "not in the Hugging Face cache" in r.stderr
    assert "Traceback" not in r.stderr
    assert hub.requests[since:] == []
    assert not list((Path(env["QUIRE_DATA_DIR"]) / "models").rglob("*.onnx"))

    # Once cached, an offline pull (into another library) uses the cache and asks nothing.
    assert run(env, "models", "pull").returncode == 0
    other = env | {"QUIRE_DATA_DIR": env["QUIRE_DATA_DIR"] + "-2"}
    since = len(hub.requests)
    r = run(other, "models", "pull", HF_HUB_OFFLINE="1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "offline: using the cached copy" in r.stderr
    assert hub.requests[since:] == []


def test_a_repo_that_does_not_exist_is_a_clear_error(hub_env: dict[str, str]) -> None:
    r = run(hub_env, "models", "pull", QUIRE_RERANK_REPO="test/no-such-model")
    assert r.returncode == 1
    assert "no model repository test/no-such-model" in r.stderr and "Traceback" not in r.stderr
    target = Path(hub_env["QUIRE_DATA_DIR"]) / "models" / "cross-encoder" / "ms-marco-MiniLM-L-6-v2"
    assert not target.exists() and no_leftovers(target)


def test_a_revision_that_does_not_exist_is_a_clear_error(hub: FakeHub, tmp_path: Path) -> None:
    settings, spec = spec_for("test/int8-onnx", tmp_path)
    spec = type(spec)(spec.name, spec.purpose, spec.repo, "v9.9", spec.target)
    with pytest.raises(RepoNotFound, match="no revision 'v9.9'"):
        pull(spec, endpoint=hub.url, offline=False, cache_dir=fresh_cache(tmp_path))


def test_an_interrupted_pull_installs_nothing_and_the_next_pull_succeeds(
    hub: FakeHub, built: Built, tmp_path: Path
) -> None:
    settings, spec = spec_for("test/fp32-onnx", tmp_path)
    cache = fresh_cache(tmp_path)
    hub.break_file("test/fp32-onnx", "onnx/model.onnx", at=len(built.fp32) // 2)
    try:
        with pytest.raises(HubUnreachable, match="download onnx/model.onnx") as failed:
            pull(spec, endpoint=hub.url, offline=False, cache_dir=cache)
        assert "again to resume" in failed.value.message
    finally:
        hub.heal()
    assert not spec.target.exists() and load_reranker(settings) is None
    assert no_leftovers(spec.target)
    assert (
        pull(spec, endpoint=hub.url, offline=False, cache_dir=cache).manifest.source == "quantised"
    )
    assert load_reranker(settings) is not None


def test_a_file_that_is_not_a_model_installs_nothing(hub: FakeHub, tmp_path: Path) -> None:
    settings, spec = spec_for("test/not-a-model", tmp_path)
    with pytest.raises(NotAModel, match="model.onnx is not an ONNX model"):
        pull(spec, endpoint=hub.url, offline=False, cache_dir=fresh_cache(tmp_path))
    assert not spec.target.exists() and no_leftovers(spec.target)


def test_a_model_that_fails_its_check_installs_nothing(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings, spec = spec_for("test/int8-onnx", tmp_path)
    real = CrossEncoderReranker.score

    def nan(self: CrossEncoderReranker, query: str, passages: Any) -> Any:
        return real(self, query, passages) * np.float32("nan")

    monkeypatch.setattr(CrossEncoderReranker, "score", nan)
    with pytest.raises(NotAModel, match="for a test pair"):
        pull(spec, endpoint=hub.url, offline=False, cache_dir=fresh_cache(tmp_path))
    assert not spec.target.exists() and no_leftovers(spec.target)


def test_too_little_disk_fails_before_downloading(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings, spec = spec_for("test/fp32-onnx", tmp_path)
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(pull_module.shutil, "disk_usage", lambda p: usage._replace(free=1_000_000))
    since = len(hub.requests)
    with pytest.raises(DiskFull, match="MB are free"):
        pull(spec, endpoint=hub.url, offline=False, cache_dir=fresh_cache(tmp_path))
    assert files_fetched(hub, "test/fp32-onnx", since) == set()


def test_a_disk_that_fills_up_mid_pull_installs_nothing(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings, spec = spec_for("test/int8-onnx", tmp_path)

    def full(src: Path, dst: Path) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(dst))

    monkeypatch.setattr(convert_module, "_place", full)
    with pytest.raises(DiskFull, match="nothing was installed"):
        pull(spec, endpoint=hub.url, offline=False, cache_dir=fresh_cache(tmp_path))
    assert not spec.target.exists() and no_leftovers(spec.target)


def test_a_model_installed_by_hand_is_replaced_only_with_force(
    hub: FakeHub, built: Built, tmp_path: Path
) -> None:
    settings, spec = spec_for("test/int8-onnx", tmp_path)
    spec.target.mkdir(parents=True)
    (spec.target / "model.onnx").write_bytes(built.fp32)
    (spec.target / "tokenizer.json").write_bytes(built.tokenizer["tokenizer.json"])
    cache = fresh_cache(tmp_path)
    with pytest.raises(Conflict, match="--force"):
        pull(spec, endpoint=hub.url, offline=False, cache_dir=cache)
    assert (spec.target / "model.onnx").is_file()
    assert (
        pull(spec, endpoint=hub.url, offline=False, cache_dir=cache, force=True).manifest.source
        == "int8"
    )
    assert not (spec.target / "model.onnx").exists() and no_leftovers(spec.target)


def test_what_a_killed_pull_left_is_tidied_and_a_model_moved_aside_comes_back(
    hub: FakeHub, tmp_path: Path
) -> None:
    settings, spec = spec_for("test/int8-onnx", tmp_path)
    cache = fresh_cache(tmp_path)
    first = pull(spec, endpoint=hub.url, offline=False, cache_dir=cache)
    # Killed between the two renames of an install: the old model is aside, no target.
    aside = spec.target.with_name(f".{spec.target.name}.old-0000")
    spec.target.rename(aside)
    (spec.target.parent / f".{spec.target.name}.pull-xyz").mkdir()
    again = pull(spec, endpoint=hub.url, offline=False, cache_dir=cache)
    assert again.up_to_date and again.manifest.commit == first.manifest.commit
    assert inspect(spec).present and no_leftovers(spec.target)
    assert read_manifest(spec.target) == first.manifest
