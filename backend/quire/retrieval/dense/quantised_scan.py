"""Approximate inner products over the dense mirror in 4 bits, through ONNX Runtime.

Scanning 100k float32 vectors of 384 dims reads 150 MB, ~10-15 ms here however it is computed:
it is memory-bound. In 4 bits (with one float scale per 128 values) the same vectors take 20 MB,
and ONNX Runtime's ``MatMulNBits`` (the kernel behind 4-bit LLM decoding, a one-row product
like this one) packs such a constant matrix once at session creation and multiplies with
int8 VNNI/AVX2 kernels: 18 blocks of 16k rows in 9 ms where int8 ``MatMulInteger`` took 15 and
numpy float32 47 (same run, loaded machine). The 4-bit scores only choose candidates; the dense
leg re-scores those from the float32 rows, so it returns exact cosines (recall of that
candidate set on real embeddings: docs/benchmarks/retrieval.md).

The rows go in blocks of ``BLOCK_ROWS``, one session per block, built once when the block is
full, so appends only ever build the newest block; rows after the last full block are scored
in float32 by the caller.

ONNX ships no model builder at run time (``onnx`` is a dev dependency), and this one-node
graph is a few protobuf fields, so it is written here by hand.
"""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path

import numpy as np
import numpy.typing as npt
import onnxruntime as ort

BLOCK_ROWS = 16_384
DIMS_PER_SCALE = 128  # MatMulNBits block_size: values sharing one float scale
_LEVELS = 7  # signed 4-bit values -7..7, stored as unsigned nibbles with zero point 8
# ONNX TensorProto.DataType and AttributeProto.AttributeType
_UINT8, _FLOAT, _ATTR_INT = 2, 1, 2


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _int(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value)


def _bytes(field: int, value: bytes | str) -> bytes:
    raw = value.encode() if isinstance(value, str) else value
    return _varint(field << 3 | 2) + _varint(len(raw)) + raw


def _tensor(name: str, dtype: int, dims: list[int], raw: bytes) -> bytes:
    """A TensorProto: dims (1), data_type (2), name (8), raw_data (9)."""
    return b"".join(_int(1, d) for d in dims) + _int(2, dtype) + _bytes(8, name) + _bytes(9, raw)


def _value_info(name: str, dtype: int, dims: list[int]) -> bytes:
    """A ValueInfoProto: name (1), type (2) = TypeProto.tensor_type (1) = elem_type (1),
    shape (2) = TensorShapeProto.dim (1) = Dimension.dim_value (1)."""
    shape = b"".join(_bytes(1, _int(1, d)) for d in dims)
    return _bytes(1, name) + _bytes(2, _bytes(1, _int(1, dtype) + _bytes(2, shape)))


def _attribute(name: str, value: int) -> bytes:
    """An integer AttributeProto: name (1), i (3), type (20)."""
    return _bytes(1, name) + _int(3, value) + _int(20, _ATTR_INT)


def matmul_4bit_model(packed: npt.NDArray[np.uint8], scales: npt.NDArray[np.float32]) -> bytes:
    """An ONNX model with input ``A`` (float32, 1 x dims) and output ``Y`` (float32, 1 x rows):
    ``A @ rows.T`` for rows given as ``quantise`` returns them."""
    rows, blocks, half = packed.shape
    dims = blocks * half * 2
    attributes = [("K", dims), ("N", rows), ("bits", 4), ("block_size", half * 2)]
    # accuracy_level 4: the query is quantised to int8 per block too, for the VNNI kernels.
    attributes.append(("accuracy_level", 4))
    node = b"".join(_bytes(1, n) for n in ("A", "B", "scales")) + _bytes(2, "Y")
    node += _bytes(4, "MatMulNBits") + _bytes(7, "com.microsoft")
    node += b"".join(_bytes(5, _attribute(n, v)) for n, v in attributes)
    graph = (
        _bytes(1, node)
        + _bytes(2, "quantised_scan")
        + _bytes(5, _tensor("B", _UINT8, [rows, blocks, half], packed.tobytes()))
        + _bytes(5, _tensor("scales", _FLOAT, [rows * blocks], scales.tobytes()))
        + _bytes(11, _value_info("A", _FLOAT, [1, dims]))
        + _bytes(12, _value_info("Y", _FLOAT, [1, rows]))
    )
    # ModelProto: ir_version (1), graph (7), opset_import (8) = domain (1), version (2).
    opsets = _bytes(8, _bytes(1, "") + _int(2, 17)) + _bytes(
        8, _bytes(1, "com.microsoft") + _int(2, 1)
    )
    return _int(1, 9) + _bytes(7, graph) + opsets


def padded(dims: int) -> int:
    """Dimensions rounded up to whole quantisation blocks (zeros fill the rest)."""
    return -(-dims // DIMS_PER_SCALE) * DIMS_PER_SCALE


def quantise(
    rows: npt.NDArray[np.float32],
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.float32]]:
    """Rows as 4-bit values (two a byte, the even index in the low nibble; shape rows x blocks
    x 64) and one float scale per block of 128 values: value ~= (nibble - 8) * scale."""
    n, dims = rows.shape
    work = np.zeros((n, padded(dims)), dtype=np.float32)
    work[:, :dims] = rows
    blocks = work.reshape(n, -1, DIMS_PER_SCALE)
    scales = np.abs(blocks).max(axis=2) / _LEVELS
    scales[scales == 0] = 1.0
    blocks /= scales[:, :, None]
    np.rint(blocks, out=blocks)
    np.clip(blocks, -_LEVELS, _LEVELS, out=blocks)
    blocks += 8
    nibbles = blocks.astype(np.uint8)
    packed = nibbles[:, :, 0::2] | (nibbles[:, :, 1::2] << 4)
    return np.ascontiguousarray(packed), scales.astype(np.float32).reshape(-1)


class QuantisedBlocks:
    """4-bit copies of the first ``len(self) * block_rows`` rows of a growing matrix, one block
    of ``block_rows`` rows at a time (the mirror keeps the rows of an unfilled block)."""

    def __init__(self, block_rows: int | None = None) -> None:
        self.block_rows = block_rows or BLOCK_ROWS
        self._lock = threading.Lock()
        self._sessions: list[ort.InferenceSession] = []

    def __len__(self) -> int:
        return len(self._sessions)

    @property
    def rows(self) -> int:
        """How many leading rows the blocks cover."""
        return len(self._sessions) * self.block_rows

    def add(self, rows: npt.NDArray[np.float32]) -> None:
        """The next block: ``block_rows`` rows."""
        if len(rows) != self.block_rows:
            raise ValueError(f"a block holds {self.block_rows} rows, not {len(rows)}")
        model = matmul_4bit_model(*quantise(rows))
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.enable_cpu_mem_arena = False  # the packed matrix is all it holds
        # From a file, not bytes: an InferenceSession keeps model bytes it was given for
        # its whole life (another copy of the block).
        with tempfile.TemporaryDirectory(prefix="quire-scan-") as tmp:
            path = Path(tmp) / "block.onnx"
            path.write_bytes(model)
            session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        with self._lock:
            self._sessions.append(session)

    def scores(self, query: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Approximate ``matrix[: self.rows] @ query``."""
        with self._lock:
            sessions = list(self._sessions)
        out = np.empty(len(sessions) * self.block_rows, dtype=np.float32)
        a = np.zeros((1, padded(len(query))), dtype=np.float32)
        a[0, : len(query)] = query
        for i, session in enumerate(sessions):
            out[i * self.block_rows : (i + 1) * self.block_rows] = session.run(None, {"A": a})[0][0]
        return out
