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
cache passes its memory budget. The row list (chunk ids and their documents) is extended when
chunks were only added, and read again after a deletion.

That first use is what a new question pays. A rare term is cheap in FTS5 (its posting list is
short); a frequent one (in thousands of chunks) is scored from its ``term_postings`` entry
instead, FTS5's formula over the counts the worker stored (storage/term_postings.py), so a
question of fresh frequent words does not walk FTS5's long posting lists either. What FTS5
keeps beyond MATCH (its structure and averages records, the row list) is read through
storage/backends/fts5.py.
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

from quire.retrieval import bm25
from quire.storage import documents, term_postings
from quire.storage.backends import fts5
from quire.storage.backends.base import Averages
from quire.storage.backends.sqlite import DataVersion
from quire.text.tokenize import Tokenizer

# One term's FTS5 score for every row it matches (LIMIT keeps SQLite from flattening the
# subquery: bm25() cannot run inside an aggregate); the rows above ``after`` (chunk ids start
# at 1: 0 is every row).
_TERM_SQL = text(
    "SELECT json_group_array(r), json_group_array(s) FROM (SELECT rowid AS r, "
    "bm25(page_chunks_fts, 1.0, :hw) AS s FROM page_chunks_fts "
    "WHERE page_chunks_fts MATCH :q AND rowid > :after LIMIT -1)"
)
_BYTES_PER_POSTING = 12  # int32 position + float64 score


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
    averages: Averages
    # (phrase, heading weight) -> scores, least recently used first
    terms: OrderedDict[tuple[str, float], _Postings] = field(default_factory=OrderedDict)
    postings: int = 0
    # Hidden documents (not ready) and the rows they leave visible; replaced as one tuple.
    visibility: tuple[str, npt.NDArray[np.bool_]] | None = None
    # Chunk id -> position in ids (-1: none), made on first use when the ids are dense enough.
    _where: npt.NDArray[np.int32] | None = None

    def positions(
        self, rowids: npt.NDArray[np.int64]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
        """Each chunk id's position in ``ids`` and whether it is there at all. A lookup table
        when ids are dense (ids are never reused, so deletions leave holes): at 1M rows a
        frequent term's 300k ids cost a binary search ~15 ms, the table ~1 ms."""
        if not len(self.ids):
            return np.zeros(len(rowids), np.int64), np.zeros(len(rowids), np.bool_)
        top = int(self.ids[-1])
        if self._where is None and top < 4 * len(self.ids) + 1024:
            where = np.full(top + 1, -1, dtype=np.int32)
            where[self.ids] = np.arange(len(self.ids), dtype=np.int32)
            self._where = where
        if self._where is not None:
            inside = (rowids >= 0) & (rowids <= top)
            pos = np.full(len(rowids), -1, dtype=np.int64)
            pos[inside] = self._where[rowids[inside]]
            return pos, pos >= 0
        pos = np.searchsorted(self.ids, rowids)
        known = pos < len(self.ids)
        known[known] = self.ids[pos[known]] == rowids[known]
        return pos, known


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
        self._tokenizer: Tokenizer | None = None
        self.from_table = 0  # terms scored from their term_postings entry

    def sync(self, conn: Connection) -> View:
        """The cache state for ``conn``'s snapshot: call it before any other statement on
        ``conn`` (see DataVersion)."""
        version = self._watch.read(conn)
        with self._lock:
            index = self._index
            if index is not None and index.visibility is not None and version == self._version:
                return View(index, index.visibility[1])
            fts_key = fts5.structure_key(conn)
            hidden = ",".join(map(str, sorted(documents.not_ready(conn))))
            if index is None or index.fts_key != fts_key:
                index = self._rows(conn, index, fts_key)
            if index.visibility is None or index.visibility[0] != hidden:
                excluded = np.array([int(d) for d in hidden.split(",") if d], dtype=np.int64)
                index.visibility = (hidden, ~np.isin(index.docs, excluded))
            self._index, self._version = index, version
            return View(index, index.visibility[1])

    @staticmethod
    def _rows(conn: Connection, old: _Index | None, fts_key: bytes | None) -> _Index:
        """A new index state (no terms yet): the old rows plus the new ones when chunks were
        only added (FTS5's row count says so), else every row again."""
        averages = fts5.averages(conn)
        if old is not None and len(old.ids):
            ids, docs = fts5.chunk_rows(conn, after=int(old.ids[-1]))
            if averages.rows == len(old.ids) + len(ids):
                return _Index(
                    fts_key,
                    np.concatenate([old.ids, ids]),
                    np.concatenate([old.docs, docs]),
                    averages,
                )
        ids, docs = fts5.chunk_rows(conn)
        return _Index(fts_key, ids, docs, averages)

    def _postings(self, conn: Connection, index: _Index, phrase: str, hw: float) -> _Postings:
        key = (phrase, hw)
        with self._lock:
            hit = index.terms.get(key)
            if hit is not None:
                index.terms.move_to_end(key)
                return hit
        found = self._from_table(conn, index, phrase, hw)
        if found is None:
            pos, scores = self._fts(conn, index, phrase, hw)
            found = _Postings(pos.astype(np.int32), scores)
        with self._lock:
            if key not in index.terms:
                index.terms[key] = found
                index.postings += len(found.pos)
                while index.postings > self.max_postings and len(index.terms) > 1:
                    _, old = index.terms.popitem(last=False)
                    index.postings -= len(old.pos)
        return found

    @staticmethod
    def _fts(
        conn: Connection, index: _Index, phrase: str, hw: float, after: int = 0
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """FTS5's scores of ``phrase`` alone for the rows above ``after``, as positions in the
        index state and scores."""
        row = conn.execute(_TERM_SQL, {"q": phrase, "hw": hw, "after": after}).one()
        rowids = np.array(json.loads(row[0]), dtype=np.int64)
        scores = -np.array(json.loads(row[1]), dtype=np.float64)
        # Rows newer than the index state (a commit between the version check and this query)
        # are left out; the next search sees the new version and starts over.
        pos, known = index.positions(rowids)
        return pos[known], scores[known]

    def _from_table(
        self, conn: Connection, index: _Index, phrase: str, hw: float
    ) -> _Postings | None:
        """The scores of a frequent term from its ``term_postings`` entry (the rows added
        since the entry from FTS5), or None when it has none (see storage/term_postings.py)."""
        stems = self._stems(conn, phrase)
        if len(stems) != 1 or not index.averages.rows:
            return None
        entry = term_postings.load(conn, stems[0])
        if entry is None:
            return None
        pos, live = index.positions(entry.ids)  # deleted chunks' postings are dropped
        if len(index.ids) and index.ids[-1] > entry.upto:
            new_pos, new_scores = self._fts(conn, index, phrase, hw, after=entry.upto)
        else:
            new_pos, new_scores = np.zeros(0, np.int64), np.zeros(0, np.float64)
        df = int(live.sum()) + len(new_pos)
        idf = bm25.idf(index.averages.rows, df)
        scores = bm25.counts_score(
            entry.tf_text[live],
            entry.tf_heading[live],
            entry.length[live],
            idf,
            index.averages.avgdl,
            hw,
        )
        self.from_table += 1
        return _Postings(
            np.concatenate([pos[live], new_pos]).astype(np.int32),
            np.concatenate([scores, new_scores]),
        )

    def _stems(self, conn: Connection, phrase: str) -> list[str]:
        """FTS5's stems of a quoted phrase (see lexical.phrases)."""
        with self._lock:
            if self._tokenizer is None:
                self._tokenizer = fts5.index_tokenizer(conn)
            tokenizer = self._tokenizer
        return tokenizer.stems(phrase[1:-1].replace('""', '"'))

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
        rows = rows[bm25.ranked(index.ids[rows], total[rows], limit)]
        return list(zip(index.ids[rows].tolist(), total[rows].tolist(), strict=True))

    def matches(self, conn: Connection, view: View, phrase: str, heading_weight: float) -> int:
        """How many rows match ``phrase`` (its document frequency), from its cached scores."""
        return len(self._postings(conn, view.index, phrase, float(heading_weight)).pos)

    def stats(self) -> dict[str, int]:
        """Cached terms and their postings (12 bytes each), and how many terms were scored
        from their term_postings entry."""
        index = self._index
        if index is None:
            return {"terms": 0, "postings": 0, "from_table": self.from_table}
        return {
            "terms": len(index.terms),
            "postings": index.postings,
            "from_table": self.from_table,
        }

    def clear(self, *, keep_rows: bool = False) -> None:
        """Forget the term scores, as a change to the index does (and the row list, as a
        deletion does, unless ``keep_rows``)."""
        with self._lock:
            old = self._index
            if keep_rows and old is not None:
                self._index = _Index(
                    old.fts_key, old.ids, old.docs, old.averages, visibility=old.visibility
                )
            else:
                self._index, self._version = None, None

    def close(self) -> None:
        self._watch.close()
        with self._lock:
            if self._tokenizer is not None:
                self._tokenizer.close()
                self._tokenizer = None
