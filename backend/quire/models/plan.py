"""What to download from a repo, and how to turn it into int8 ONNX: pure functions of its file
list, so every layout is tested without a hub.

    plan = choose(files, converters=available_converters())
    plan.source, plan.model, plan.files   # "int8", "onnx/model_quint8_avx2.onnx", (...)

    int8 ONNX for this CPU (onnx/model_quint8_avx2.onnx ...)  taken as is, with tokenizer.json
    fp32 ONNX (model.onnx, onnx/model.onnx)                   quantised: dynamic, per channel
    int8 ONNX for another CPU                                 taken when nothing can quantise
    PyTorch / safetensors weights + config.json               exported by optimum, quantised
"""

from __future__ import annotations

import importlib.util
import platform
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

from quire.errors import QuireError
from quire.models.errors import EXTRA, ConverterMissing, HubUnreachable, NotAModel
from quire.models.hub import ModelSpec, Source

TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.txt",
    "special_tokens_map.json",
)
_OWN_ARCH = "arm64" if platform.machine().lower() in ("arm64", "aarch64") else "avx2"


@dataclass(frozen=True)
class Step:
    """Progress of one stage, for a progress bar: bytes of a download, or a conversion."""

    label: str
    completed: float = 0.0
    total: float | None = None
    done: bool = False


Report = Callable[[Step], None]


@dataclass(frozen=True)
class Listing:
    """The files of one commit of a repo, with their sizes (None: unknown)."""

    commit: str
    files: Mapping[str, int | None]
    cached: bool  # read from the local cache, not from the hub


@dataclass(frozen=True)
class Plan:
    """What to download and how to turn it into an int8 ONNX model."""

    source: Source
    model: str  # the ONNX file, or the weights file to export
    files: tuple[str, ...]  # every file to download, the model included

    def size(self, listing: Listing) -> int:
        """Bytes to download (unknown sizes count as 0)."""
        return sum(listing.files.get(f) or 0 for f in self.files)


def choose(files: Mapping[str, int | None], *, converters: frozenset[str]) -> Plan | None:
    """The plan for a repo's files: int8 ONNX for this CPU, else fp32 ONNX to quantise, else
    another CPU's int8, else weights to export; None when nothing fits (or can be converted)."""
    tokenizer = _tokenizer_files(files)
    config = ("config.json",) if "config.json" in files else ()
    onnx = sorted(f for f in files if f.endswith(".onnx") and _parent(f) in ("", "onnx"))

    def with_data(model: str) -> tuple[str, ...]:
        # Models over 2 GB keep their weights in files beside the graph.
        data = tuple(f for f in files if f in (f"{model}_data", f"{model}.data"))
        return (model, *data, *tokenizer, *config)

    int8 = sorted((f for f in onnx if _int8_rank(f) is not None), key=lambda f: _int8_rank(f) or 0)
    own = [f for f in int8 if _int8_rank(f) in (0, 1)]
    fp32 = sorted((f for f in onnx if PurePosixPath(f).stem == "model"), key=_parent)
    if tokenizer and own:
        return Plan("int8", own[0], with_data(own[0]))
    if tokenizer and fp32 and "quantise" in converters:
        return Plan("quantised", fp32[0], with_data(fp32[0]))
    if tokenizer and int8:
        return Plan("int8", int8[0], with_data(int8[0]))
    weights = _weights(files)
    if weights and config and tokenizer and "export" in converters:
        return Plan("exported", weights[0], (*weights, *tokenizer, *config))
    return None


def available_converters() -> frozenset[str]:
    """Which conversions this install can do: ``quantise`` needs onnx, ``export`` optimum."""
    onnx, optimum = (importlib.util.find_spec(n) is not None for n in ("onnx", "optimum"))
    return frozenset(
        ({"quantise"} if onnx else set()) | ({"export"} if onnx and optimum else set())
    )


def no_model(spec: ModelSpec, listing: Listing) -> QuireError:
    files = listing.files
    if listing.cached:
        return HubUnreachable(
            f"the cached copy of {spec.repo}@{spec.revision} holds no complete model "
            f"({', '.join(sorted(files)) or 'no files'}); pull with the network"
        )
    onnx_fp32 = any(PurePosixPath(f).stem == "model" and f.endswith(".onnx") for f in files)
    if not _tokenizer_files(files):
        return NotAModel(f"{spec.repo} has no tokenizer (tokenizer.json or tokenizer_config.json)")
    if onnx_fp32:
        return ConverterMissing(
            f"{spec.repo} publishes only fp32 ONNX; quantising it needs {EXTRA}"
        )
    if _weights(files) and "config.json" in files:
        return ConverterMissing(
            f"{spec.repo} publishes only PyTorch weights; exporting needs {EXTRA}"
        )
    return NotAModel(
        f"{spec.repo} publishes no ONNX model and no PyTorch/safetensors weights with a "
        "config.json: not a model Quire can use"
    )


def _int8_rank(name: str) -> int | None:
    """0 a generic int8 export, 1 int8 for this CPU, 2 int8 for another CPU, None not int8."""
    stem = PurePosixPath(name).stem.lower()
    if not ("quantized" in stem or "int8" in stem):
        return None
    if stem in ("model_quantized", "model_int8", "model_qint8", "model_quint8"):
        return 0
    return 1 if _OWN_ARCH in stem else 2


def _tokenizer_files(files: Mapping[str, int | None]) -> tuple[str, ...]:
    if "tokenizer.json" not in files and "tokenizer_config.json" not in files:
        return ()
    return tuple(f for f in TOKENIZER_FILES if f in files)


def _weights(files: Mapping[str, int | None]) -> tuple[str, ...]:
    if "model.safetensors" in files:
        return ("model.safetensors",)
    if "model.safetensors.index.json" in files:
        shards = sorted(f for f in files if f.startswith("model-") and f.endswith(".safetensors"))
        return ("model.safetensors.index.json", *shards)
    return ("pytorch_model.bin",) if "pytorch_model.bin" in files else ()


def _parent(name: str) -> str:
    parent = PurePosixPath(name).parent.as_posix()
    return "" if parent == "." else parent
