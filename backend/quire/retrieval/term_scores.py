"""FTS5's BM25, answered from cached per-term scores so that frequent terms stay cheap.

FTS5's ``bm25()`` costs O(document frequency) for every query term: it scores each row that
matches any OR-ed term and walks each term's whole posting list for its IDF. A term in a third
of 100k chunks costs ~15 ms per query. Yet the score is a sum over the query's phrases,
``idf(term) * tf-part(term, row)``, with N and the average length taken over the whole table
(sqlite's fts5_aux.c, fts5Bm25Function). So the score of ``"a" OR "b"`` is the sum of the
scores of ``"a"`` and ``"b"`` queried alone, and the BM25 leg can add up cached single-term
scores: FTS5's own numbers (to float noise: they cross as 15-digit JSON), the same ranking,
ties broken by chunk id.

The cached scores depend on the whole index (IDF, average length), so any change to it drops
them. ``PRAGMA data_version`` says in O(1) that something was committed; then the FTS5
structure record (rewritten by every write to the index) and the set of documents that are not
ready say whether the index or the visibility changed (job heartbeats change neither). Terms
are scored again lazily, on first use after a change; the least recently used leave when the
cache passes its memory budget. The price is that first use: scoring a term alone costs FTS5
about what its share of a whole query did, plus moving its scores to numpy (JSON), so the
first query after an ingest costs ~1.5-2x a plain FTS5 query; the following ones ~1/7
(bench/retrieval.py). The row list (chunk ids and their documents) is extended when chunks
were only added, and read again after a deletion.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, text

from quire.retrieval.watch import DataVersion
from quire.storage.records import VISIBLE_SQL

# One term's FTS5 score for every row it matches (LIMIT keeps SQLite from flattening the
# subquery: bm25() cannot run inside an aggregate).
_TERM_SQL = text(
    "SELECT json_group_array(r), json_group_array(s) FROM (SELECT rowid AS r, "
    "bm25(page_chunks_fts, 1.0, :hw) AS s FROM page_chunks_fts "
    "WHERE page_chunks_fts MATCH :q LIMIT -1)"
)
# Chunk ids with their documents from the covering index: no chunk text is read.
_ROWS_SQL = text(
    "SELECT json_group_array(id), json_group_array(document_id) "
    "FROM page_chunks INDEXED BY ix_page_chunks_doc_page"
)
_NEW_ROWS_SQL = text(
    "SELECT json_group_array(id), json_group_array(document_id) FROM "
    "(SELECT id, document_id FROM page_chunks WHERE id > :after ORDER BY id)"
)
# FTS5's shadow records: the structure (id 10) changes with every write to the index; the
# averages (id 1) start with the row count.
_STRUCTURE_SQL = text("SELECT block FROM page_chunks_fts_data WHERE id = 10")
_AVERAGES_SQL = text("SELECT block FROM page_chunks_fts_data WHERE id = 1")
_HIDDEN_SQL = text(f"SELECT group_concat(id) FROM documents WHERE status NOT {VISIBLE_SQL}")
_BYTES_PER_POSTING = 12  # int32 position + float64 score


def _varints(blob: bytes) -> list[int]:
    """SQLite's big-endian varints (7 bits a byte, high bit set on all but the last)."""
    out, value, length = [], 0, 0
    for byte in blob:
        length += 1
        if length == 9:  # the ninth byte carries 8 bits
            out.append((value << 8) | byte)
            value = length = 0
            continue
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            out.append(value)
            value = length = 0
    return out


@dataclass(frozen=True)
class _Postings:
    pos: npt.NDArray[np.int32]  # positions in _Index.ids
    score: npt.NDArray[np.float64]  # FTS5's bm25() of this term alone, negated (higher better)


@dataclass
class _Index:
    """The rows of one state of the FTS5 index, with the term scores computed against it."""

    fts_key: bytes | None
    ids: npt.NDArray[np.int64]  # chunk ids, ascending
    docs: npt.NDArray[np.int64]
    # (phrase, heading weight) -> scores, least recently used first
    terms: OrderedDict[tuple[str, float], _Postings] = field(default_factory=OrderedDict)
    postings: int = 0
    # Hidden documents (not ready) and the rows they leave visible; replaced as one tuple.
    visibility: tuple[str, npt.NDArray[np.bool_]] | None = None


@dataclass(frozen=True)
class View:
    """What one search reads: the index state and which of its rows are visible."""

    index: _Index
    visible: npt.NDArray[np.bool_]


class TermScores:
    """BM25 over ``page_chunks_fts`` as sums of cached single-term scores."""

    def __init__(self, max_mb: float = 64.0) -> None:
        self.max_postings = max(int(max_mb * 2**20 / _BYTES_PER_POSTING), 1)
        self._lock = threading.Lock()
        self._watch = DataVersion("main")
        self._version: int | None = None
        self._index: _Index | None = None

    def sync(self, conn: Connection) -> View:
        """The cache state for ``conn``'s snapshot: call it before any other statement on
        ``conn`` (see watch.py)."""
        version = self._watch.read(conn)
        with self._lock:
            index = self._index
            if index is not None and index.visibility is not None and version == self._version:
                return View(index, index.visibility[1])
            fts_key = conn.execute(_STRUCTURE_SQL).scalar()
            hidden = conn.execute(_HIDDEN_SQL).scalar()
            if index is None or index.fts_key != fts_key:
                index = self._rows(conn, index, fts_key)
            hidden = str(hidden or "")
            if index.visibility is None or index.visibility[0] != hidden:
                excluded = np.array([int(d) for d in hidden.split(",") if d], dtype=np.int64)
                index.visibility = (hidden, ~np.isin(index.docs, excluded))
            self._index, self._version = index, version
            return View(index, index.visibility[1])

    @staticmethod
    def _rows(conn: Connection, old: _Index | None, fts_key: bytes | None) -> _Index:
        """A new index state (no terms yet): the old rows plus the new ones when chunks were
        only added (FTS5's row count says so), else every row again."""
        if old is not None and len(old.ids):
            ids_json, docs_json = conn.execute(_NEW_ROWS_SQL, {"after": int(old.ids[-1])}).one()
            ids = np.array(json.loads(ids_json), dtype=np.int64)
            averages = conn.execute(_AVERAGES_SQL).scalar()
            if averages is not None and _varints(averages)[0] == len(old.ids) + len(ids):
                docs = np.array(json.loads(docs_json), dtype=np.int64)
                return _Index(
                    fts_key, np.concatenate([old.ids, ids]), np.concatenate([old.docs, docs])
                )
        ids_json, docs_json = conn.execute(_ROWS_SQL).one()
        ids = np.array(json.loads(ids_json), dtype=np.int64)
        docs = np.array(json.loads(docs_json), dtype=np.int64)
        order = np.argsort(ids)
        return _Index(fts_key, ids[order], docs[order])

    def _postings(self, conn: Connection, index: _Index, phrase: str, hw: float) -> _Postings:
        key = (phrase, hw)
        with self._lock:
            hit = index.terms.get(key)
            if hit is not None:
                index.terms.move_to_end(key)
                return hit
        ids_json, scores_json = conn.execute(_TERM_SQL, {"q": phrase, "hw": hw}).one()
        rowids = np.array(json.loads(ids_json), dtype=np.int64)
        scores = -np.array(json.loads(scores_json), dtype=np.float64)
        pos = np.searchsorted(index.ids, rowids)
        # Rows newer than the index state (a commit between the version check and this query)
        # are left out; the next search sees the new version and starts over.
        known = pos < len(index.ids)
        known[known] = index.ids[pos[known]] == rowids[known]
        found = _Postings(pos[known].astype(np.int32), scores[known])
        with self._lock:
            if key not in index.terms:
                index.terms[key] = found
                index.postings += len(found.pos)
                while index.postings > self.max_postings and len(index.terms) > 1:
                    _, old = index.terms.popitem(last=False)
                    index.postings -= len(old.pos)
        return found

    def search(
        self,
        conn: Connection,
        view: View,
        phrases: Sequence[str],
        *,
        limit: int,
        heading_weight: float,
        allowed_docs: set[int] | None = None,
    ) -> list[tuple[int, float]]:
        """(chunk id, BM25 score) of the best ``limit`` visible rows matching any phrase (each
        an FTS5 MATCH string of one quoted term), best first: the ranking and the scores of
        ``MATCH 'p1 OR p2 ...'`` by ``-bm25(page_chunks_fts, 1.0, heading_weight)``."""
        index, visible = view.index, view.visible
        total = np.zeros(len(index.ids), dtype=np.float64)
        matched = np.zeros(len(index.ids), dtype=np.bool_)
        for phrase in phrases:
            p = self._postings(conn, index, phrase, float(heading_weight))
            total[p.pos] += p.score
            matched[p.pos] = True
        matched &= visible
        if allowed_docs is not None:
            matched &= np.isin(index.docs, np.fromiter(allowed_docs, dtype=np.int64))
        rows = np.flatnonzero(matched)
        if len(rows) > limit:
            # The best ``limit`` and everything tied with the last of them, then the tie-break.
            s = total[rows]
            kth = s[np.argpartition(-s, limit - 1)[limit - 1]]
            rows = rows[s >= kth]
        rows = rows[np.lexsort((index.ids[rows], -total[rows]))][:limit]
        return list(zip(index.ids[rows].tolist(), total[rows].tolist(), strict=True))

    def matches(self, conn: Connection, view: View, phrase: str, heading_weight: float) -> int:
        """How many rows match ``phrase`` (its document frequency), from its cached scores."""
        return len(self._postings(conn, view.index, phrase, float(heading_weight)).pos)

    def stats(self) -> dict[str, int]:
        """Cached terms and their postings (12 bytes each)."""
        index = self._index
        if index is None:
            return {"terms": 0, "postings": 0}
        return {"terms": len(index.terms), "postings": index.postings}

    def clear(self, *, keep_rows: bool = False) -> None:
        """Forget the term scores, as a change to the index does (and the row list, as a
        deletion does, unless ``keep_rows``)."""
        with self._lock:
            old = self._index
            if keep_rows and old is not None:
                self._index = _Index(old.fts_key, old.ids, old.docs, visibility=old.visibility)
            else:
                self._index, self._version = None, None

    def close(self) -> None:
        self._watch.close()
