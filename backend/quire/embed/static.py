"""A faster, batch-independent int8 form of the packaged model: per-row activation scales.

:mod:`quire.embed.optimize`'s ``quantize_dynamic`` model is fast but its vectors depend on
the batch: ``DynamicQuantizeLinear`` picks one activation scale per tensor, over every token
of every (padded) text in the run. Here each weight ``MatMul`` is rewritten so that every
token row gets its own scale, which depends on that row alone::

    s    = max(|x|) / 127                       per row (ReduceMax over the last axis)
    x_u8 = QuantizeLinear(x / s, 1, 128)        symmetric, stored as uint8 around 128
    y    = MatMulInteger(x_u8, W_s8, 128) * s * w_scale      (int32 sums are exact)

except at the feed-forward output products, whose input (the GELU's) is lopsided: there a
row's [min, max] maps onto 0..255 with its own zero point ``zp``, taken off afterwards as
``zp * column sums of W_s8`` (ONNX Runtime's ``MatMulInteger`` takes one zero point only). So
a text's vector is the same alone or in any batch, padded or not (the integer products do
not depend on the other rows; the rest of the graph is the packaged fp32 one). The int8
weights are the packaged ones (per output column), recovered by
:func:`~quire.embed.optimize.fold_int8_weights` and re-quantised per column; the embedding
``Gather`` and the attention products stay fp32. Built from the installed package, never
downloaded, cached like the dynamic model under a name with the source hash and recipe.

Its vectors differ a little from the packaged model's, so it has its own
:data:`STATIC_NAME` (``QUIRE_EMBEDDER=local-sint8``): never mix the two in one index.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from pathlib import Path
from typing import Any, Literal

import numpy as np

from quire.embed.local import LocalEmbedder, default_model_path
from quire.embed.optimize import load_folded
from quire.errors import EmbedderUnavailable
from quire.hashing import sha256_file

log = logging.getLogger(__name__)

#: Stored beside the vectors. A RECIPE change that changes the vectors must rename it too:
#: the library re-embeds on a name change, not on a new model file.
STATIC_NAME = "local:all-MiniLM-L6-v2-sint8"
RECIPE = "fold-cast-mul+drop-nan-guards+per-row-u8-activations(asym-ffn-out)+per-column-s8-v1"
#: Activation rows are quantised to [-QMAX, QMAX] around the uint8 zero point ZERO.
QMAX = 127.0
ZERO = 128
#: Which products get per-row asymmetric activations (see :func:`quantize_rows`).
Asymmetry = Literal["none", "ffn-out", "all"]
#: Measured on SciFact (test, 300 queries; packaged: hybrid nDCG@10 0.7247, 1.00x):
#: none 0.7215 and 1.80x, ffn-out 0.7224 and 1.77x, all 0.7247 and 1.55x (1 thread).
ASYMMETRY: Asymmetry = "ffn-out"


def static_model_path(cache_dir: Path, source: Path | None = None) -> Path:
    """Where the per-row int8 model for ``source`` lives in ``cache_dir`` (built or not)."""
    source = source or default_model_path()
    key = hashlib.sha256(f"{sha256_file(source)}:{RECIPE}".encode()).hexdigest()[:16]
    return cache_dir / f"all-MiniLM-L6-v2-sint8-{key}.onnx"


def _weight_matmuls(model: Any) -> list[tuple[Any, Any]]:
    """``(MatMul node, 2-D fp32 weight initializer)`` pairs: the layers' dense products."""
    from onnx import TensorProto

    inits = {i.name: i for i in model.graph.initializer}
    found = []
    for node in model.graph.node:
        if node.op_type != "MatMul" or node.input[1] not in inits:
            continue
        weight = inits[node.input[1]]
        if len(weight.dims) == 2 and weight.data_type == TensorProto.FLOAT:
            found.append((node, weight))
    return found


def quantize_rows(model: Any, *, asymmetric: Asymmetry = "none") -> int:
    """Rewrite each weight MatMul of ``model`` (edited in place) with per-row activation
    scales and per-column int8 weights; returns how many were rewritten.

    ``asymmetric``: where each row's [min, max] (not [-max|x|, max|x|]) is mapped onto
    0..255, with a zero point per row, subtracted after the integer product as
    ``zp * column sums of W``: nowhere, at the feed-forward output products only (their input
    is the GELU's, mostly >= -0.17: a symmetric range wastes half the codes), or everywhere.
    """
    from onnx import TensorProto, helper, numpy_helper

    graph = model.graph
    pairs = _weight_matmuls(model)
    consts = [
        numpy_helper.from_array(np.array(1.0 / QMAX, dtype=np.float32), "rowq_inv_qmax"),
        numpy_helper.from_array(np.array(1e-12, dtype=np.float32), "rowq_eps"),
        numpy_helper.from_array(np.array(1.0, dtype=np.float32), "rowq_one"),
        numpy_helper.from_array(np.array(ZERO, dtype=np.uint8), "rowq_zero"),
        numpy_helper.from_array(np.array(0, dtype=np.uint8), "rowq_u8_zero"),
        numpy_helper.from_array(np.array(0.0, dtype=np.float32), "rowq_f_zero"),
        numpy_helper.from_array(np.array(1.0 / 255.0, dtype=np.float32), "rowq_inv_255"),
    ]
    graph.initializer.extend(consts)
    drop_inits = set()
    for k, (node, weight) in enumerate(pairs):
        w = numpy_helper.to_array(weight).astype(np.float32)
        w_scale = np.maximum(np.abs(w).max(axis=0), np.float32(1e-12)) / np.float32(QMAX)
        w_q = np.clip(np.rint(w / w_scale), -QMAX, QMAX).astype(np.int8)
        p = f"rowq{k}"
        graph.initializer.extend(
            [
                numpy_helper.from_array(w_q, f"{p}_w"),
                numpy_helper.from_array(w_scale.astype(np.float32), f"{p}_w_scale"),
            ]
        )
        drop_inits.add(weight.name)
        x, y = node.input[0], node.output[0]
        if asymmetric == "all" or (asymmetric == "ffn-out" and w.shape[0] > w.shape[1]):
            colsum = w_q.astype(np.float32).sum(axis=0)
            graph.initializer.append(numpy_helper.from_array(colsum, f"{p}_colsum"))
            new = [
                helper.make_node("ReduceMax", [x], [f"{p}_max"], axes=[-1], keepdims=1),
                helper.make_node("ReduceMin", [x], [f"{p}_min"], axes=[-1], keepdims=1),
                helper.make_node("Max", [f"{p}_max", "rowq_f_zero"], [f"{p}_max0"]),
                helper.make_node("Min", [f"{p}_min", "rowq_f_zero"], [f"{p}_min0"]),
                helper.make_node("Sub", [f"{p}_max0", f"{p}_min0"], [f"{p}_range"]),
                helper.make_node("Max", [f"{p}_range", "rowq_eps"], [f"{p}_range_eps"]),
                helper.make_node("Mul", [f"{p}_range_eps", "rowq_inv_255"], [f"{p}_a_scale"]),
                helper.make_node("Div", [f"{p}_min0", f"{p}_a_scale"], [f"{p}_nzp"]),
                helper.make_node("Round", [f"{p}_nzp"], [f"{p}_nzp_r"]),
                helper.make_node("Neg", [f"{p}_nzp_r"], [f"{p}_zp"]),
                helper.make_node("Div", [x, f"{p}_a_scale"], [f"{p}_scaled"]),
                helper.make_node("Add", [f"{p}_scaled", f"{p}_zp"], [f"{p}_shifted"]),
                helper.make_node(
                    "QuantizeLinear", [f"{p}_shifted", "rowq_one", "rowq_u8_zero"], [f"{p}_xq"]
                ),
                helper.make_node("MatMulInteger", [f"{p}_xq", f"{p}_w"], [f"{p}_i32"]),
                helper.make_node("Cast", [f"{p}_i32"], [f"{p}_f32"], to=TensorProto.FLOAT),
                helper.make_node("Mul", [f"{p}_zp", f"{p}_colsum"], [f"{p}_corr"]),
                helper.make_node("Sub", [f"{p}_f32", f"{p}_corr"], [f"{p}_centred"]),
                helper.make_node("Mul", [f"{p}_centred", f"{p}_w_scale"], [f"{p}_cols"]),
                helper.make_node("Mul", [f"{p}_cols", f"{p}_a_scale"], [y]),
            ]
        else:
            new = [
                helper.make_node("Abs", [x], [f"{p}_abs"]),
                helper.make_node("ReduceMax", [f"{p}_abs"], [f"{p}_amax"], axes=[-1], keepdims=1),
                helper.make_node("Max", [f"{p}_amax", "rowq_eps"], [f"{p}_amax_eps"]),
                helper.make_node("Mul", [f"{p}_amax_eps", "rowq_inv_qmax"], [f"{p}_a_scale"]),
                helper.make_node("Div", [x, f"{p}_a_scale"], [f"{p}_scaled"]),
                helper.make_node(
                    "QuantizeLinear", [f"{p}_scaled", "rowq_one", "rowq_zero"], [f"{p}_xq"]
                ),
                helper.make_node("MatMulInteger", [f"{p}_xq", f"{p}_w", "rowq_zero"], [f"{p}_i32"]),
                helper.make_node("Cast", [f"{p}_i32"], [f"{p}_f32"], to=TensorProto.FLOAT),
                helper.make_node("Mul", [f"{p}_f32", f"{p}_w_scale"], [f"{p}_cols"]),
                helper.make_node("Mul", [f"{p}_cols", f"{p}_a_scale"], [y]),
            ]
        at = list(graph.node).index(node)
        graph.node.remove(node)
        for offset, n in enumerate(new):
            n.name = f"{p}_{n.op_type}_{offset}"
            graph.node.insert(at + offset, n)
    still_used = {name for n in graph.node for name in n.input}
    keep = [i for i in graph.initializer if i.name not in drop_inits or i.name in still_used]
    del graph.initializer[:]
    graph.initializer.extend(keep)
    return len(pairs)


def drop_nan_guards(model: Any) -> int:
    """Remove each ``Where(IsNaN(p), 0, p)`` after a ``Softmax`` (edited in place).

    The exporter guards the attention probabilities against a fully masked row, but this
    model's mask adds ``float32.min``, never ``-inf``: a softmax of finite scores has no NaN,
    so the guard always returns ``p`` bit for bit, at ~15 % of the run time (a ``Where`` over
    every ``batch x heads x tokens x tokens`` probability). Returns how many were removed.
    """
    from onnx import numpy_helper

    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    producer = {out: n for n in graph.node for out in n.output}
    drop: list[Any] = []
    rename: dict[str, str] = {}
    for where in graph.node:
        if where.op_type != "Where" or len(where.input) != 3:
            continue
        cond, zero, probs = where.input
        isnan, softmax = producer.get(cond), producer.get(probs)
        if isnan is None or isnan.op_type != "IsNaN" or isnan.input[0] != probs:
            continue
        if softmax is None or softmax.op_type != "Softmax" or zero not in inits:
            continue
        if np.any(numpy_helper.to_array(inits[zero]) != 0):
            continue
        rename[where.output[0]] = probs
        drop.append(where)
        if sum(cond in n.input for n in graph.node) == 1:
            drop.append(isnan)
    if any(out.name in rename for out in graph.output):
        return 0  # a guard feeding the graph output directly: leave the graph alone
    for node in drop:
        graph.node.remove(node)
    for node in graph.node:
        for i, name in enumerate(node.input):
            if name in rename:
                node.input[i] = rename[name]
    return len(rename)


def build_static_model(cache_dir: Path, source: Path | None = None) -> Path:
    """Build (once) the per-row int8 model into ``cache_dir``; returns its path."""
    source = source or default_model_path()
    target = static_model_path(cache_dir, source)
    if target.is_file():
        return target
    import onnx

    model = load_folded(source)
    cache_dir.mkdir(parents=True, exist_ok=True)
    guards = drop_nan_guards(model)
    rewritten = quantize_rows(model, asymmetric=ASYMMETRY)
    if rewritten == 0:
        raise EmbedderUnavailable(f"{source} has no weight MatMul to quantise")
    onnx.checker.check_model(model)
    with tempfile.TemporaryDirectory(dir=cache_dir) as tmp:
        out = Path(tmp) / "sint8.onnx"
        onnx.save(model, str(out))
        os.replace(out, target)  # atomic: a concurrent builder never sees half a file
    log.info(
        "built %s from %s (%d MatMuls per-row int8, %d NaN guards dropped)",
        target,
        source,
        rewritten,
        guards,
    )
    return target


def static_embedder(cache_dir: Path, *, threads: int = 1, batch_size: int = 64) -> LocalEmbedder:
    """A LocalEmbedder over the per-row int8 model (built into ``cache_dir`` on first call)."""
    path = build_static_model(cache_dir)
    return LocalEmbedder(threads=threads, batch_size=batch_size, model_path=path, name=STATIC_NAME)
