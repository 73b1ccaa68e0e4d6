"""The dense mirror: nearest chunks to a query vector, served from memory on SQLite.

sqlite-vec's ``vec0`` table is the store of record. Its KNN is a brute-force scan (~100 ms at
100k float vectors here), so searches are served from an in-memory matrix mirror that follows
the table: after a commit to the vector file its signature (model, count, max and sum of
rowids) is compared, new rows are appended, anything else reloads it. Chunk ids are never
reused (AUTOINCREMENT), which makes that signature sound.

A float32 scan of the mirror is memory-bound (~10 ms at 100k x 384 here), so full blocks of
rows get a 4-bit copy (quantised_scan.py, ~7x less to read): their scores pick
``max(8 k, 200)`` candidates and the float32 rows re-score them, so the cosines returned are
exact; rows after the last full block are kept and scored in float32. Below one block (16k
vectors) the whole search is exact float32. The float32 rows of full blocks are not held in
memory: they are written to an unnamed temporary file in the data directory and the few
hundred candidates are read back with ``pread`` (the page cache keeps them; at 1M rows the
process held 1.5 GB for them before). vec0 cannot serve that: 40 point lookups took ~20 ms.

The signature is read from vec0's rowid shadow table (``page_vecs_rowids``, a plain table with
the same rows) rather than by scanning the vec0 table itself.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
from pathlib import Path

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection

from quire.retrieval.dense.quantised_scan import QuantisedBlocks
from quire.storage.backends.sqlite import (
    DataVersion,
    VectorSignature,
    vector_batches,
    vector_signature,
)

log = logging.getLogger(__name__)

Vector = npt.NDArray[np.float32]
RESCORE_FACTOR = 8  # 4-bit candidates per neighbour asked for
MIN_RESCORE = 200
# Rows fetched at a time while the mirror loads (a 100k load held 162 MB more at 32k rows).
_LOAD_BATCH = 4_096


class _RowFile:
    """The float32 rows in mirror order, in an unnamed temporary file (gone with the process,
    even a killed one) read with ``pread``: the candidates the 4-bit scan picks are re-scored
    from it, so the exact rows cost page cache, not the process's memory (1.5 GB at 1M)."""

    def __init__(self, directory: Path | None) -> None:
        self._file = tempfile.TemporaryFile(dir=directory, prefix="quire-mirror-")
        self._fd = self._file.fileno()
        self.dim = 0

    def write(self, first: int, matrix: Vector) -> None:
        self.dim = self.dim or matrix.shape[1]
        data = np.ascontiguousarray(matrix, dtype=np.float32).tobytes()
        os.pwrite(self._fd, data, first * self.dim * 4)

    def read(self, rows: npt.NDArray[np.int64]) -> Vector:
        """Rows by position (ascending reads best), as a (len(rows), dim) matrix."""
        size = self.dim * 4
        if len(rows) and len(rows) == int(rows[-1]) - int(rows[0]) + 1:  # one run: one read
            raw = os.pread(self._fd, size * len(rows), int(rows[0]) * size)
        else:
            raw = b"".join(os.pread(self._fd, size, int(r) * size) for r in rows)
        return np.frombuffer(raw, dtype=np.float32).reshape(len(rows), self.dim)

    def close(self) -> None:
        self._file.close()

    def __del__(self) -> None:
        # A reload replaces the file while a search may still read the old one: it closes
        # when the last reader lets go of it.
        self._file.close()


class DenseMirror:
    """An in-memory copy of ``vec.page_vecs`` with each row's document id, kept in step."""

    def __init__(self, *, block_rows: int | None = None, spill_dir: Path | None = None) -> None:
        self._lock = threading.Lock()
        self._watch = DataVersion("vec")
        self._version: int | None = None
        self._block_rows = block_rows
        self._spill_dir = spill_dir
        self._sig: VectorSignature | None = None
        self._reset()

    def _reset(self) -> None:
        self._blocks = QuantisedBlocks(self._block_rows)
        self._rows = _RowFile(self._spill_dir)
        # The rows after the last full 4-bit block, in memory: the first one's position, and a
        # buffer of one block whose first ``len(ids) - _tail_start`` rows are filled. Appends
        # write after those (a search may be reading them); a full buffer becomes a block and
        # a new buffer starts.
        self._tail_start = 0
        self._tail_buf: Vector = np.zeros((0, 0), dtype=np.float32)
        self.ids: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self.docs: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)

    @property
    def matrix(self) -> Vector:
        """Every row in float32 (read back from the spill file: for checks and benchmarks)."""
        with self._lock:
            rows, n = self._rows, len(self.ids)
        return rows.read(np.arange(n, dtype=np.int64))

    def _changed(self, conn: Connection) -> bool:
        """Whether the vector file may have changed since the last look, in O(1)."""
        version = self._watch.read(conn)
        if version == self._version:
            return False
        self._version = version
        return True

    def _load(
        self, conn: Connection, after: int
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], Vector]:
        """The rows above ``after`` at once (the few an ingest added)."""
        parts = list(vector_batches(conn, after, _LOAD_BATCH))
        if not parts:
            dim = self._rows.dim
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, dim), np.float32)
        return (
            np.concatenate([p[0] for p in parts]),
            np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]),
        )

    def _append(
        self, ids: npt.NDArray[np.int64], docs: npt.NDArray[np.int64], matrix: Vector
    ) -> None:
        """Add rows: to the spill file, to the tail, and each block the tail fills to 4-bit."""
        if len(ids) == 0:
            return
        self._rows.write(len(self.ids), matrix)
        size = self._blocks.block_rows
        filled, done = len(self.ids) - self._tail_start, 0
        while done < len(matrix):
            if self._tail_buf.shape != (size, matrix.shape[1]):
                self._tail_buf = np.empty((size, matrix.shape[1]), dtype=np.float32)
            take = min(size - filled, len(matrix) - done)
            self._tail_buf[filled : filled + take] = matrix[done : done + take]
            filled, done = filled + take, done + take
            if filled == size:
                self._blocks.add(self._tail_buf)
                self._tail_start += size
                self._tail_buf = np.zeros((0, 0), dtype=np.float32)
                filled = 0
        self.ids = np.concatenate([self.ids, ids])
        self.docs = np.concatenate([self.docs, docs])

    def refresh(self, conn: Connection) -> None:
        """Bring the mirror in step with the table (O(1) when nothing changed). Call it before
        any other statement on ``conn`` (see DataVersion)."""
        if self._sig is not None and not self._changed(conn):
            return
        sig = vector_signature(conn)
        with self._lock:
            old = self._sig
            if sig == old:
                return
            if (
                sig is not None
                and old is not None
                and old.model == sig.model
                and sig.count > old.count
                and sig.max_id > old.max_id
            ):
                ids, docs, matrix = self._load(conn, old.max_id)
                if old.count + len(ids) == sig.count and old.sum_id + int(ids.sum()) == sig.sum_id:
                    self._append(ids, docs, matrix)
                    self._sig = sig
                    return
            self._reset()
            if sig is not None:
                for ids, docs, matrix in vector_batches(conn, 0, _LOAD_BATCH):
                    self._append(ids, docs, matrix)
                log.info("dense mirror loaded: %d vectors", len(self.ids))
            self._sig = sig

    def knn(
        self,
        query: Vector,
        *,
        k: int,
        allowed_docs: set[int] | None = None,
        excluded_docs: set[int] | None = None,
    ) -> list[tuple[int, float]]:
        """(chunk id, cosine) of the k nearest, within ``allowed_docs`` and outside
        ``excluded_docs`` (and never of a chunk deleted since the last refresh), best first."""
        with self._lock:
            ids, docs, blocks, rows_file = self.ids, self.docs, self._blocks, self._rows
            quantised = self._tail_start
            tail = self._tail_buf[: len(ids) - quantised]
        if not len(ids):
            return []
        q = np.asarray(query, dtype=np.float32)
        # einsum is a single-threaded SIMD loop: OpenBLAS's threaded gemv is memory-bound here
        # and its threads fight the other legs for the cores (2x slower at 100k on 2 cores).
        scores = np.empty(len(ids), dtype=np.float32)
        if quantised:
            scores[:quantised] = blocks.scores(q)[:quantised]
        scores[quantised:] = np.einsum("ij,j->i", tail, q)
        mask = docs >= 0
        if allowed_docs is not None:
            mask &= np.isin(docs, np.fromiter(allowed_docs, dtype=np.int64))
        if excluded_docs:
            mask &= ~np.isin(docs, np.fromiter(excluded_docs, dtype=np.int64))
        scores = np.where(mask, scores, -np.inf)
        rows = np.flatnonzero(np.isfinite(scores)) if len(ids) <= k else None
        if rows is None:
            wanted = min(max(RESCORE_FACTOR * k, MIN_RESCORE), len(ids)) if quantised else k
            rows = np.argpartition(-scores, wanted - 1)[:wanted]
            rows = rows[np.isfinite(scores[rows])]
        if quantised:
            rows.sort()  # read the float32 rows in file order
            spilled = rows < quantised
            exact = np.empty(len(rows), dtype=np.float32)
            exact[spilled] = np.einsum("ij,j->i", rows_file.read(rows[spilled]), q)
            exact[~spilled] = scores[rows[~spilled]]
        else:
            exact = scores[rows]
        best = np.argsort(-exact, kind="stable")[:k]
        return [(int(ids[rows[i]]), float(exact[i])) for i in best]

    def close(self) -> None:
        self._watch.close()
        with self._lock:
            self._rows.close()
