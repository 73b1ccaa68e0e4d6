"""A tiny randomly initialised cross-encoder, built once, published on a fake Hugging Face Hub
in the three shapes a repo can have: PyTorch weights only, fp32 ONNX, int8 ONNX."""

from __future__ import annotations

import os
import platform
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from quire.config import Settings
from quire.models.hub import ModelSpec, model_spec
from tests.fakes.hub import FakeHub
from tests.retrieval.cross_encoder import export, quantise, tiny_cross_encoder

TOKENIZER = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json")
OWN_INT8 = (
    "onnx/model_qint8_arm64.onnx"
    if platform.machine().lower() in ("arm64", "aarch64")
    else "onnx/model_quint8_avx2.onnx"
)
OTHER_INT8 = (
    "onnx/model_quint8_avx2.onnx"
    if OWN_INT8.endswith("arm64.onnx")
    else "onnx/model_qint8_arm64.onnx"
)


@dataclass
class Built:
    torch_model: Any
    tokenizer: dict[str, bytes]
    config: bytes
    safetensors: bytes
    fp32: bytes
    int8: bytes


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    model, tok_dir = tiny_cross_encoder()
    root = tmp_path_factory.mktemp("hub-model")
    model.save_pretrained(root / "weights", safe_serialization=True)
    export(model, root / "model.onnx", token_types=True)
    quantise(root / "model.onnx", root / "model_int8.onnx")
    return Built(
        torch_model=model,
        tokenizer={name: (tok_dir / name).read_bytes() for name in TOKENIZER},
        config=(root / "weights" / "config.json").read_bytes(),
        safetensors=(root / "weights" / "model.safetensors").read_bytes(),
        fp32=(root / "model.onnx").read_bytes(),
        int8=(root / "model_int8.onnx").read_bytes(),
    )


@pytest.fixture(scope="session")
def hub(built: Built) -> Iterator[FakeHub]:
    readme = {"README.md": b"# a tiny random cross-encoder for tests\n"}
    common = readme | built.tokenizer | {"config.json": built.config}
    with FakeHub() as server:
        server.add_repo("test/weights-only", common | {"model.safetensors": built.safetensors})
        server.add_repo("test/fp32-onnx", common | {"onnx/model.onnx": built.fp32})
        # The layout of cross-encoder/ms-marco-MiniLM-L-6-v2: weights, fp32 and per-CPU int8.
        server.add_repo(
            "test/int8-onnx",
            common
            | {
                "model.safetensors": built.safetensors,
                "onnx/model.onnx": built.fp32,
                OWN_INT8: built.int8,
                OTHER_INT8: built.int8,
                "onnx/model_qint8_avx512.onnx": built.int8,
            },
        )
        server.add_repo(
            "test/not-a-model",
            common | {"onnx/model.onnx": b"<!doctype html><title>Login</title>\n" * 50},
        )
        yield server


@pytest.fixture
def hub_env(hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The environment of a `quire` process that talks to the fake hub only."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(
        HF_ENDPOINT=hub.url,
        HF_HOME=str(tmp_path / "hf"),
        HF_HUB_DISABLE_TELEMETRY="1",
        NO_PROXY="127.0.0.1,localhost",
        QUIRE_DATA_DIR=str(tmp_path / "data"),
    )
    return env


def spec_for(repo: str, tmp_path: Path) -> tuple[Settings, ModelSpec]:
    settings = Settings(data_dir=tmp_path / "data", rerank_repo=repo, rerank_min_logit=-1e9)
    return settings, model_spec("reranker", settings)


def fresh_cache(tmp_path: Path) -> Path:
    cache = tmp_path / "hf" / "hub"
    shutil.rmtree(cache, ignore_errors=True)
    return cache
