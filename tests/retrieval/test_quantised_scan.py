"""The 4-bit candidate scan of the dense mirror: the hand-written ONNX model computes what its
quantised rows say, and the mirror with 4-bit blocks returns what exact float search returns."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

from quire.config import Settings
from quire.embed.base import Embedder
from quire.retrieval.dense import mirror as dense
from quire.retrieval.dense.quantised_scan import (
    QuantisedBlocks,
    matmul_4bit_model,
    padded,
    quantise,
)
from quire.storage.db import Database

pytestmark = pytest.mark.slow  # a library ingested, its vectors quantised


def dequantise(packed: np.ndarray, scales: np.ndarray) -> np.ndarray:
    nibbles = np.empty((*packed.shape[:2], packed.shape[2] * 2), dtype=np.float32)
    nibbles[:, :, 0::2] = packed & 0x0F
    nibbles[:, :, 1::2] = packed >> 4
    values = (nibbles - 8) * scales.reshape(packed.shape[0], -1)[:, :, None]
    return values.reshape(packed.shape[0], -1)


def test_quantise_and_the_model_agree() -> None:
    rng = np.random.default_rng(1)
    rows = rng.standard_normal((300, 200)).astype(np.float32)  # 200 dims: padded to 256
    rows[5] = 0  # a zero row keeps finite scales
    packed, scales = quantise(rows)
    assert padded(200) == 256 and packed.shape == (300, 2, 64) and scales.shape == (600,)
    values = dequantise(packed, scales)
    assert np.all(values[:, 200:] == 0) and np.all(values[5] == 0)
    step = np.repeat(scales.reshape(300, 2), 128, axis=1)[:, :200]
    assert np.all(np.abs(values[:, :200] - rows) <= step / 2 + 1e-6)
    session = ort.InferenceSession(
        matmul_4bit_model(packed, scales), providers=["CPUExecutionProvider"]
    )
    q = np.zeros((1, 256), np.float32)
    q[0, :200] = rng.standard_normal(200)
    got = session.run(None, {"A": q})[0]
    # The kernel quantises the query to int8 per block: agreement to that precision.
    np.testing.assert_allclose(got[0], values @ q[0], atol=0.02 * np.abs(values @ q[0]).max())


def test_blocks_cover_full_blocks_only() -> None:
    rng = np.random.default_rng(2)
    rows = rng.standard_normal((1000, 32)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    blocks = QuantisedBlocks(block_rows=256)
    blocks.add(rows[:256])
    blocks.add(rows[256:512])
    assert len(blocks) == 2 and blocks.rows == 512
    with pytest.raises(ValueError, match="256 rows"):  # the rest waits for a full block
        blocks.add(rows[512:600])
    blocks.add(rows[512:768])
    assert blocks.rows == 768
    approx = blocks.scores(rows[7])
    np.testing.assert_allclose(approx, rows[:768] @ rows[7], atol=0.1)
    assert int(np.argmax(approx)) == 7


def test_mirror_with_quantised_blocks_returns_exact_neighbours(
    library: tuple[Settings, Database], embedder: Embedder
) -> None:
    _, db = library
    exact, quantised = dense.DenseMirror(), dense.DenseMirror(block_rows=16)
    try:
        with db.read() as conn:
            exact.refresh(conn)
            quantised.refresh(conn)
        n = len(quantised.ids)
        assert n >= 48 and quantised._blocks.rows == n - n % 16 and exact._blocks.rows == 0
        questions = ["rabbit hole", "safe harbor for service providers", "Oregon population"]
        for q in embedder.embed(questions):
            for k in (1, 10, n + 5):
                got, want = quantised.knn(q, k=k), exact.knn(q, k=k)
                assert [c for c, _ in got] == [c for c, _ in want]
                np.testing.assert_allclose([s for _, s in got], [s for _, s in want], atol=1e-6)
            doc = int(quantised.docs[0])
            only = quantised.knn(q, k=5, allowed_docs={doc})
            docs = {int(quantised.docs[np.flatnonzero(quantised.ids == c)[0]]) for c, _ in only}
            assert only and docs == {doc}
    finally:
        exact.close()
        quantised.close()


def test_appends_fill_the_unfilled_block_and_stay_exact(
    library: tuple[Settings, Database], embedder: Embedder
) -> None:
    _, db = library
    exact, quantised = dense.DenseMirror(), dense.DenseMirror(block_rows=16)
    texts = [f"an added passage about rabbits and harbors, number {i}" for i in range(20)]
    vecs = embedder.embed(texts)
    with db.read() as conn:
        exact.refresh(conn)
        quantised.refresh(conn)
        base = int(conn.exec_driver_sql("SELECT max(rowid) FROM vec.page_vecs").scalar_one())
    new_ids = [base + 1000 + i for i in range(len(texts))]
    try:
        for part in (slice(0, 7), slice(7, 20)):  # two commits: the second crosses a block
            with db.write() as conn:
                for cid, vec in zip(new_ids[part], vecs[part], strict=True):
                    conn.exec_driver_sql(
                        "INSERT INTO vec.page_vecs(rowid, embedding) VALUES (?, ?)",
                        (cid, vec.tobytes()),
                    )
            with db.read() as conn:
                exact.refresh(conn)
                quantised.refresh(conn)
            n = len(quantised.ids)
            assert quantised._blocks.rows == n - n % 16 and quantised.ids.tolist() == (
                exact.ids.tolist()
            )
            np.testing.assert_array_equal(quantised.matrix, exact.matrix)
            for q in embedder.embed(["rabbit hole", "an added passage number 12"]):
                got, want = quantised.knn(q, k=10), exact.knn(q, k=10)
                assert [c for c, _ in got] == [c for c, _ in want]
                np.testing.assert_allclose([s for _, s in got], [s for _, s in want], atol=1e-6)
    finally:
        with db.write() as conn:
            for cid in new_ids:
                conn.exec_driver_sql("DELETE FROM vec.page_vecs WHERE rowid = ?", (cid,))
        exact.close()
        quantised.close()
