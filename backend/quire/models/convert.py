"""Turn downloaded files into one int8 ONNX model folder, and check that it scores.

    model_file = build(plan, snapshot, staging, report)   # int8 ONNX + tokenizer.json (+ config)
    check(staging)                                        # loads it, scores two pairs

fp32 ONNX is quantised with onnxruntime.quantization (dynamic, per channel); PyTorch weights
are exported by optimum first. Both need the ``models`` extra and run at pull time only.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import numpy as np

from quire.models.errors import EXTRA, ConverterMissing, NotAModel
from quire.models.plan import Plan, Report, Step
from quire.retrieval.rerank import CrossEncoderReranker, RerankerUnavailable

#: One pair that matches and one that does not: the check scores both.
CHECK_QUERY = "what does a cross-encoder score?"
CHECK_PASSAGES = (
    "A cross-encoder reads the question and a passage together and scores their relevance.",
    "The harbour froze early that winter, and the ferries stopped until March.",
)


def build(plan: Plan, snapshot: Path, staging: Path, report: Report) -> str:
    """Fill ``staging`` with the int8 ONNX file, tokenizer.json and config.json; returns the
    ONNX file's name."""
    if plan.source == "int8":
        # The graph and its external weights (if any) side by side, as the graph names them.
        for name in (plan.model, f"{plan.model}_data", f"{plan.model}.data"):
            if name in plan.files:
                _place(snapshot / name, staging / PurePosixPath(name).name)
        model_file = PurePosixPath(plan.model).name
    elif plan.source == "quantised":
        _quantise(snapshot / plan.model, staging / "model_quantized.onnx", report)
        model_file = "model_quantized.onnx"
    else:
        export = staging / ".export"
        _export(snapshot, export, report)
        _quantise(export / "model.onnx", staging / "model_quantized.onnx", report)
        if (export / "tokenizer.json").is_file() and not (snapshot / "tokenizer.json").is_file():
            shutil.copyfile(export / "tokenizer.json", staging / "tokenizer.json")
        shutil.rmtree(export)
        model_file = "model_quantized.onnx"
    if (snapshot / "config.json").is_file():
        _place(snapshot / "config.json", staging / "config.json")
    if not (staging / "tokenizer.json").is_file():
        if (snapshot / "tokenizer.json").is_file():
            _place(snapshot / "tokenizer.json", staging / "tokenizer.json")
        else:
            _make_tokenizer_json(snapshot, staging)
    return model_file


def _quantise(src: Path, dst: Path, report: Report) -> None:
    label = "quantise to int8"
    report(Step(label))
    try:
        with _quiet():
            from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as e:
        raise ConverterMissing(
            f"quantising an fp32 ONNX model needs the onnx package: {EXTRA}"
        ) from e
    try:
        with _quiet():
            # QInt8 weights per channel, as tests/ and bench/ measure (the int8 speed-up there).
            quantize_dynamic(src, dst, per_channel=True, weight_type=QuantType.QInt8)
    except OSError as e:
        if e.errno == errno.ENOSPC:
            raise
        raise NotAModel(f"{src.name} is not an ONNX model ({type(e).__name__}: {e})") from e
    except Exception as e:  # noqa: BLE001 - onnx raises DecodeError, ValidationError ...
        raise NotAModel(f"{src.name} is not an ONNX model that can be quantised: {e}") from e
    report(Step(label, done=True))


def _export(src: Path, out: Path, report: Report) -> None:
    label = "export PyTorch weights to ONNX"
    report(Step(label))
    try:
        with _quiet():
            from optimum.exporters.onnx import main_export
    except ImportError as e:
        raise ConverterMissing(
            f"this repo publishes only PyTorch weights; exporting them needs optimum: {EXTRA}"
        ) from e
    try:
        with _quiet():
            main_export(
                str(src),
                output=out,
                task="text-classification",
                library_name="transformers",
                device="cpu",
            )
    except OSError as e:
        if e.errno == errno.ENOSPC:
            raise
        raise NotAModel(f"the weights in {src} cannot be exported: {e}") from e
    except Exception as e:  # noqa: BLE001 - transformers and torch raise anything
        raise NotAModel(f"the weights cannot be exported as a sequence classifier: {e}") from e
    if not (out / "model.onnx").is_file():
        raise NotAModel("optimum wrote no model.onnx for these weights")
    report(Step(label, done=True))


def _make_tokenizer_json(src: Path, staging: Path) -> None:
    """Write tokenizer.json from a repo's tokenizer_config.json + vocab.txt (transformers)."""
    if not (src / "tokenizer_config.json").is_file():
        raise NotAModel("the repo has no tokenizer (tokenizer.json or tokenizer_config.json)")
    try:
        with _quiet():
            from transformers import AutoTokenizer
    except ImportError as e:
        raise ConverterMissing(f"the repo has no tokenizer.json; making one needs {EXTRA}") from e
    out = staging / ".tokenizer"
    try:
        with _quiet():
            tokenizer = AutoTokenizer.from_pretrained(str(src), use_fast=True)  # type: ignore[no-untyped-call]
            tokenizer.save_pretrained(str(out))
        shutil.copyfile(out / "tokenizer.json", staging / "tokenizer.json")
    except Exception as e:  # noqa: BLE001 - a broken tokenizer config raises anything
        raise NotAModel(f"no tokenizer.json could be made from the repo's tokenizer: {e}") from e
    finally:
        shutil.rmtree(out, ignore_errors=True)


def _place(src: Path, dst: Path) -> None:
    """``src`` (a cache symlink) at ``dst``: a hard link to the blob when possible, else a copy."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src.resolve(), dst)
    except OSError:
        shutil.copyfile(src, dst)


def check(folder: Path) -> str:
    """Load the model in ``folder`` and score two pairs: finite logits, one per pair. (A
    random or badly trained model may score them in any order, so the order is not checked.)"""
    try:
        with CrossEncoderReranker(folder, threads=1) as reranker:
            logits = reranker.score(CHECK_QUERY, list(CHECK_PASSAGES))
            name = reranker.name
    except RerankerUnavailable as e:
        raise NotAModel(f"the pulled model does not load: {e.message}") from e
    except Exception as e:  # noqa: BLE001 - ONNX Runtime raises plain errors at run time
        raise NotAModel(f"the pulled model fails on a test pair: {e}") from e
    if logits.shape != (len(CHECK_PASSAGES),) or not np.isfinite(logits).all():
        raise NotAModel(f"the pulled model returned {logits!r} for a test pair")
    return name


class _QuantiserLogs(logging.Filter):
    # onnxruntime.quantization logs through the root logger: a hint on every call, and a line
    # per tensor at INFO.
    def filter(self, record: logging.LogRecord) -> bool:
        path = record.pathname.replace("\\", "/")
        return record.levelno >= logging.ERROR or "onnxruntime/quantization" not in path


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Silence the converters' deprecation warnings and chatty loggers (not Quire's concern)."""
    names = ("transformers", "optimum", "torch", "onnxruntime", "huggingface_hub")
    loggers = [logging.getLogger(n) for n in names]
    levels = [lg.level for lg in loggers]
    hint = _QuantiserLogs()
    root = logging.getLogger()
    root.addFilter(hint)
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        root.removeFilter(hint)
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)
