"""Build a faster variant of the packaged model: dynamic int8 quantisation, per channel.

The packaged ``model.onnx`` stores int8 weights that a ``Cast`` + ``Mul(scale)`` turn back
into fp32 at run time, so it runs at fp32 speed. Here those pairs are folded into fp32
initializers (``onnx`` + numpy) and the graph is re-quantised with
``onnxruntime.quantization.quantize_dynamic(per_channel=True)``, whose integer MatMuls are
about twice as fast. The file is derived from the installed package, never downloaded, and
cached under a name that carries the source file's hash and the recipe version.

Its vectors differ from the packaged model's (cosine ~0.99), so it has its own
:data:`OPTIMIZED_NAME`: never mix its vectors with the default model's in one index. It is not
the default; switch only after checking the retrieval metric (``quire eval``).
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from quire.embed.local import LocalEmbedder, default_model_path
from quire.errors import EmbedderUnavailable
from quire.hashing import sha256_file

log = logging.getLogger(__name__)

OPTIMIZED_NAME = "local:all-MiniLM-L6-v2-dynint8"
RECIPE = "fold-cast-mul+quantize_dynamic-qint8-per-channel-v1"


def optimized_model_path(cache_dir: Path, source: Path | None = None) -> Path:
    """Where the optimised model for ``source`` lives in ``cache_dir`` (built or not)."""
    source = source or default_model_path()
    key = hashlib.sha256(f"{sha256_file(source)}:{RECIPE}".encode()).hexdigest()[:16]
    return cache_dir / f"all-MiniLM-L6-v2-dynint8-{key}.onnx"


def fold_int8_weights(model: Any) -> int:
    """Replace each ``Cast(int8 initializer) -> Mul(scale initializer)`` by an fp32 initializer.

    Returns how many weights were folded. ``model`` is an ``onnx.ModelProto``, edited in place.
    """
    from onnx import TensorProto, numpy_helper

    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    consumers: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)

    drop_nodes: list[Any] = []
    drop_inits: set[str] = set()
    new_inits: list[Any] = []
    for cast in graph.node:
        if cast.op_type != "Cast" or cast.input[0] not in inits:
            continue
        users = consumers.get(cast.output[0], [])
        if len(users) != 1 or users[0].op_type != "Mul":
            continue
        mul = users[0]
        scale_name = next((str(i) for i in mul.input if i != cast.output[0]), "")
        if scale_name not in inits:
            continue
        to = next((a.i for a in cast.attribute if a.name == "to"), None)
        if to != TensorProto.FLOAT:
            continue
        q = numpy_helper.to_array(inits[cast.input[0]])
        scale = numpy_helper.to_array(inits[scale_name])
        weight = (q.astype(np.float32) * scale.astype(np.float32)).astype(np.float32)
        new_inits.append(numpy_helper.from_array(weight, name=mul.output[0]))
        drop_nodes += [cast, mul]
        drop_inits.update({cast.input[0], scale_name})

    for node in drop_nodes:
        graph.node.remove(node)
    still_used = {name for node in graph.node for name in node.input}
    keep = [i for i in graph.initializer if i.name not in drop_inits or i.name in still_used]
    del graph.initializer[:]
    graph.initializer.extend(keep + new_inits)
    return len(new_inits)


def load_folded(source: Path) -> Any:
    """The packaged model as an ``onnx.ModelProto`` with its int8 weights folded to fp32
    (the starting point of both rebuilds: this one and embed/static.py's)."""
    try:
        import onnx
    except ImportError as e:
        raise EmbedderUnavailable("rebuilding the embedding model needs `pip install onnx`") from e
    model = onnx.load(str(source))
    if fold_int8_weights(model) == 0:
        raise EmbedderUnavailable(f"{source} has no int8 Cast/Mul weights to fold")
    return model


def build_optimized_model(cache_dir: Path, source: Path | None = None) -> Path:
    """Build (once) the per-channel dynamic int8 model into ``cache_dir``; returns its path."""
    source = source or default_model_path()
    target = optimized_model_path(cache_dir, source)
    if target.is_file():
        return target
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model = load_folded(source)
    cache_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache_dir) as tmp:
        fp32 = Path(tmp) / "fp32.onnx"
        onnx.save(model, str(fp32))
        out = Path(tmp) / "int8.onnx"
        quantize_dynamic(
            fp32,
            out,
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul"],  # the embedding Gather stays fp32
        )
        os.replace(out, target)  # atomic: a concurrent builder never sees half a file
    log.info("built %s from %s", target, source)
    return target


def optimized_embedder(cache_dir: Path, *, threads: int = 1, batch_size: int = 64) -> LocalEmbedder:
    """A LocalEmbedder over the optimised model (built into ``cache_dir`` on first call)."""
    path = build_optimized_model(cache_dir)
    return LocalEmbedder(
        threads=threads, batch_size=batch_size, model_path=path, name=OPTIMIZED_NAME
    )
