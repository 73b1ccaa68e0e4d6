"""Which files a pull takes from each repo layout, and how it turns them into int8 ONNX."""

from __future__ import annotations

import pytest

from quire.models.plan import choose
from tests.models.conftest import OTHER_INT8, OWN_INT8

REAL_REPO = [  # cross-encoder/ms-marco-MiniLM-L-6-v2's files
    ".gitattributes",
    "README.md",
    "config.json",
    "model.safetensors",
    "pytorch_model.bin",
    "special_tokens_map.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.txt",
    "onnx/model.onnx",
    "onnx/model_O1.onnx",
    "onnx/model_O2.onnx",
    "onnx/model_O3.onnx",
    "onnx/model_O4.onnx",
    "onnx/model_qint8_arm64.onnx",
    "onnx/model_qint8_avx512.onnx",
    "onnx/model_qint8_avx512_vnni.onnx",
    "onnx/model_quint8_avx2.onnx",
    "openvino/openvino_model.bin",
    "openvino/openvino_model.xml",
]
ALL = frozenset({"quantise", "export"})


@pytest.mark.parametrize(
    ("files", "converters", "source", "model"),
    [
        (REAL_REPO, ALL, "int8", OWN_INT8),
        (REAL_REPO, frozenset(), "int8", OWN_INT8),
        (["tokenizer.json", "model.onnx", "onnx/model.onnx"], ALL, "quantised", "model.onnx"),
        (["tokenizer.json", "onnx/model.onnx", OTHER_INT8], ALL, "quantised", "onnx/model.onnx"),
        (["tokenizer.json", "onnx/model.onnx", OTHER_INT8], frozenset(), "int8", OTHER_INT8),
        (["tokenizer.json", "onnx/model_quantized.onnx"], frozenset(), "int8", None),
        (["tokenizer.json", "config.json", "pytorch_model.bin"], ALL, "exported", None),
        (["tokenizer.json", "config.json", "model.safetensors"], {"quantise"}, None, None),
        (["tokenizer.json", "onnx/model.onnx"], frozenset(), None, None),
        (["config.json", "onnx/model_quantized.onnx"], ALL, None, None),  # no tokenizer
        (["tokenizer.json", "sub/dir/model_quantized.onnx"], ALL, None, None),
    ],
)
def test_which_files_a_pull_takes(
    files: list[str], converters: frozenset[str], source: str | None, model: str | None
) -> None:
    plan = choose(dict.fromkeys(files, 1), converters=frozenset(converters))
    if source is None:
        assert plan is None
        return
    assert plan is not None and plan.source == source
    if model is not None:
        assert plan.model == model
    assert "tokenizer.json" in plan.files
    assert not any(f.startswith("openvino/") or "_O" in f for f in plan.files)
