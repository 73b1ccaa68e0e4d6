"""The BM25 leg on PostgreSQL: FTS5's ``bm25()`` computed from the library's postings
(storage/backends/pg_postings.py), with FTS5's numbers.

The score is FTS5's formula (retrieval/bm25.py) summed over the query's terms, in numpy; the
best chunks are then checked against the filter in SQL, the best ``WIDEN`` × limit first.

A frequent term's postings (in ``bm25_frequent_df`` chunks or more) are read as one stored
entry, as on SQLite (storage/term_postings.py: the idle worker writes them, here from
``bm25_postings``), plus its postings in chunks added since: at 1M chunks a common word is in
100k-300k of them, which the postings table gives up at ~1 ms per 1,000 where the entry takes
a few ms in all. Any other term's postings come from ``bm25_postings``, packed into one byte
string per column by the server.

A query phrase of several tokens (a CJK word's bigrams, ``snake_case``) is scored as FTS5
scores a phrase: its occurrences are the positions where its tokens follow each other, found
by tokenizing the candidate chunks again; its document frequency is the count of those chunks.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection

from quire.retrieval import bm25 as formula
from quire.retrieval.filters import Filter
from quire.retrieval.lexical import (
    HEADING_WEIGHT,
    LexicalLeg,
    Ranking,
    phrases,
    spelled,
    terms,
)
from quire.retrieval.lexical.entries import EntryCache
from quire.storage import term_postings
from quire.storage.backends import pg_postings
from quire.storage.backends.base import Postings
from quire.storage.backends.pg_postings import Totals
from quire.text.tokenize import instances, tokenize


class PostgresLexical(LexicalLeg):
    """BM25 over the postings table; ``entries`` (None: off) keeps the frequent terms' stored
    entries between searches."""

    def __init__(self, entries: EntryCache | None = None) -> None:
        self.entries = entries

    def bm25(
        self,
        conn: Connection,
        query: str,
        *,
        limit: int,
        flt: Filter,
        heading_weight: float = HEADING_WEIGHT,
        max_df: float = 0.0,
    ) -> Ranking:
        where, params = flt.sql(conn, "c", "d")
        return bm25(
            conn,
            phrases(spelled(self.drop_frequent(conn, terms(query), max_df))),
            limit=limit,
            where=where,
            params=params,
            heading_weight=heading_weight,
            entries=self.entries,
        )

    def document_frequencies(
        self, conn: Connection, query_terms: Sequence[str], cap: int
    ) -> dict[str, int]:
        found = document_frequencies(conn, phrases(query_terms), cap)
        return dict(zip(query_terms, found, strict=True))

    def chunk_count(self, conn: Connection) -> int:
        # From the BM25 totals: counting 1M rows takes tens of milliseconds here.
        return pg_postings.totals(conn).rows


class _FrequencyCache:
    """Terms' document frequencies as of one state of a library (``Totals``): counting a
    common term's postings reads 100k-300k index entries at 1M chunks, and the BM25 leg and
    the window stage both need them. Any added or removed chunk changes the key and empties
    the cache; at most ``size`` terms are kept."""

    def __init__(self, size: int = 100_000) -> None:
        self._lock = threading.Lock()
        self._key: tuple[str, Totals] | None = None
        self._df: OrderedDict[str, int] = OrderedDict()
        self._size = size

    def remember(self, conn: Connection, stats: Totals, df: dict[str, int]) -> None:
        """Frequencies known otherwise (the BM25 leg has just read these terms' postings)."""
        key = (conn.engine.url.render_as_string(), stats)
        with self._lock:
            if self._key != key:
                self._key, self._df = key, OrderedDict()
            self._df.update(df)
            while len(self._df) > self._size:
                self._df.popitem(last=False)

    def get(self, conn: Connection, terms: Sequence[str], stats: Totals) -> dict[str, int]:
        key = (conn.engine.url.render_as_string(), stats)  # one cache, one database at a time
        with self._lock:
            if self._key != key:
                self._key, self._df = key, OrderedDict()
            known = {t: self._df[t] for t in terms if t in self._df}
        todo = sorted({t for t in terms if t not in known})
        if todo:
            counted = pg_postings.term_counts(conn, todo)
            found = {t: counted.get(t, 0) for t in todo}
            known.update(found)
            with self._lock:
                if self._key == key:
                    self._df.update(found)
                    while len(self._df) > self._size:
                        self._df.popitem(last=False)
        return known


_frequencies = _FrequencyCache()


def term_frequencies(conn: Connection, terms: Sequence[str], stats: Totals) -> dict[str, int]:
    """How many chunks hold each of these (FTS5) terms, as of ``stats``."""
    return _frequencies.get(conn, terms, stats)


def phrase_tokens(phrases: Sequence[str]) -> list[list[str]]:
    """Each query phrase's tokens (a phrase may hold several, or none)."""
    return [t.text for t in tokenize([(p, "") for p in phrases])]


def document_frequencies(conn: Connection, phrases: Sequence[str], cap: int) -> list[int]:
    """How many chunks hold every token of each phrase, counted up to ``cap`` (for a phrase
    of several tokens, an upper bound: their order is not checked)."""
    tokens = [sorted(set(t)) for t in phrase_tokens(phrases)]
    singles = sorted({t[0] for t in tokens if len(t) == 1})
    df = term_frequencies(conn, singles, pg_postings.totals(conn)) if singles else {}
    out = []
    for toks in tokens:
        if len(toks) < 2:
            out.append(min(df[toks[0]], cap) if toks else 0)
            continue
        out.append(pg_postings.holding_all(conn, toks, cap))
    return out


class _LiveCache:
    """The chunk ids up to the stored entries' ``upto`` that are still there, as of one
    library state: read only when chunks were deleted since the entries were read (their
    postings stay in the entries until then)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: tuple[str, Totals, int] | None = None
        self._ids: npt.NDArray[np.int64] | None = None

    def get(self, conn: Connection, read_at: dict[str, Any], stats: Totals) -> Any:
        """The sorted live ids up to ``upto``, or None when no chunk was deleted since."""
        upto, rows = int(read_at["upto"]), int(read_at["rows"])
        key = (conn.engine.url.render_as_string(), stats, upto)
        with self._lock:
            if self._key == key:
                return self._ids
        added = pg_postings.added_since(conn, upto)
        ids = None
        if rows + added != stats.rows:
            ids = pg_postings.live_ids(conn, upto)
        with self._lock:
            self._key, self._ids = key, ids
        return ids


_live = _LiveCache()


def _postings(
    conn: Connection,
    terms: list[str],
    stats: Totals,
    cache: EntryCache | None,
) -> dict[str, Postings]:
    """Each term's live postings: its stored entry (when the entries can be trusted; from
    ``cache`` when given) and its postings in chunks added since, or all of them from
    ``bm25_postings``."""
    read_at = term_postings.state(conn)
    entries: dict[str, term_postings.Entry] = {}
    if read_at and cache is not None:
        entries = cache.load_many(conn, read_at, terms)
    elif read_at:
        entries = term_postings.load_many(conn, terms)
    fresh = pg_postings.read_postings(
        conn, terms, [entries[t].upto if t in entries else 0 for t in terms]
    )
    live = _live.get(conn, read_at, stats) if entries and read_at else None
    out: dict[str, Postings] = {}
    for t in terms:
        parts = []
        if (e := entries.get(t)) is not None:
            keep: Any = slice(None)
            if live is not None:  # drop the chunks deleted since the entry was read
                at = np.minimum(np.searchsorted(live, e.ids), max(len(live) - 1, 0))
                keep = live[at] == e.ids if len(live) else np.zeros(len(e.ids), np.bool_)
            parts.append(Postings(e.ids[keep], e.tf_text[keep], e.tf_heading[keep], e.length[keep]))
        if t in fresh:
            parts.append(fresh[t])
        if len(parts) == 1:
            out[t] = parts[0]
        elif parts:
            out[t] = Postings(*(np.concatenate([getattr(p, f) for p in parts]) for f in _FIELDS))
    return out


_FIELDS = ("ids", "tf_text", "tf_heading", "length")
#: The best ``WIDEN`` × limit chunks by score are checked against the filter first, then
#: eight times as many, and so on, until ``limit`` pass or every scored chunk was checked.
WIDEN = 4


def bm25(
    conn: Connection,
    phrases: Sequence[str],
    *,
    limit: int,
    where: str,
    params: dict[str, object],
    heading_weight: float,
    entries: EntryCache | None = None,
) -> list[tuple[int, float]]:
    """Chunk ids with FTS5's bm25() of the OR of ``phrases`` (negated: higher is better), best
    first, among the chunks ``where`` lets through (over ``c`` page_chunks, ``d`` documents);
    the frequent terms' stored entries from ``entries`` when given."""
    stats = pg_postings.totals(conn)
    if not stats.rows or not phrases or limit < 1:
        return []
    avgdl = stats.averages().avgdl
    singles: dict[str, int] = {}
    multi: list[list[str]] = []
    for toks in phrase_tokens(phrases):
        if len(toks) == 1:
            singles[toks[0]] = singles.get(toks[0], 0) + 1
        elif toks:
            multi.append(toks)
    found = _postings(conn, list(singles), stats, entries)
    _frequencies.remember(conn, stats, {t: len(found[t].ids) if t in found else 0 for t in singles})
    ids: list[npt.NDArray[np.int64]] = []
    scores: list[npt.NDArray[np.float64]] = []
    for t, p in found.items():
        # A phrase given twice counts twice, as FTS5 sums over the query's phrases.
        weight = formula.idf(stats.rows, len(p.ids)) * singles[t]
        ids.append(p.ids)
        scores.append(
            formula.counts_score(p.tf_text, p.tf_heading, p.length, weight, avgdl, heading_weight)
        )
    for toks in multi:
        got = _phrase_scores(conn, toks, stats, heading_weight)
        ids.append(np.fromiter(got.keys(), dtype=np.int64, count=len(got)))
        scores.append(np.fromiter(got.values(), dtype=np.float64, count=len(got)))
    if not ids:
        return []
    return _best(conn, _Sums(ids, scores), limit, where, params)


class _Sums:
    """Each chunk's score summed over the query's terms, ranked on demand."""

    def __init__(
        self, ids: list[npt.NDArray[np.int64]], scores: list[npt.NDArray[np.float64]]
    ) -> None:
        self._parts = ids
        every = np.concatenate(ids) if len(ids) > 1 else ids[0]
        weights = np.concatenate(scores) if len(scores) > 1 else scores[0]
        top = int(every.max()) if len(every) else 0
        self._table: npt.NDArray[np.float64] | None = None
        if top < 16 * len(every) + 65_536:
            # A table of all ids when they are dense enough: at 1M chunks 400k postings sum
            # in ~1 ms where sorting them takes ~40. Every posting scores above 0 (FTS5's idf
            # is floored at 1e-6), so a chunk is held exactly when its sum is.
            self._table = np.bincount(every, weights=weights, minlength=top + 1).astype(
                np.float64, copy=False
            )
        else:
            self._ids, where = np.unique(every, return_inverse=True)
            self._sums = np.bincount(where, weights=weights).astype(np.float64, copy=False)

    def best(self, k: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """The best ``k`` chunk ids and their scores, best first, ties by the lower id."""
        if self._table is None:
            order = formula.ranked(self._ids, self._sums, k)
            return self._ids[order], self._sums[order]
        table = self._table
        # The k-th best score of any k chunks is a floor for the k-th best of all: take the
        # chunks of the fewest postings (the rarest terms, the best scores) and look only at
        # the chunks at or above their k-th best (a pass over the table instead of ranking
        # every chunk that holds a common word).
        probe: npt.NDArray[np.int64] = np.zeros(0, np.int64)
        for part in sorted(self._parts, key=len):
            probe = np.union1d(probe, part)
            if len(probe) >= k:
                floor = np.partition(table[probe], len(probe) - k)[len(probe) - k]
                held = np.flatnonzero(table >= floor)
                break
        else:
            held = np.flatnonzero(table > 0)
        order = formula.ranked(held, table[held], k)
        return held[order], table[held[order]]


def _best(
    conn: Connection, sums: _Sums, limit: int, where: str, params: dict[str, object]
) -> list[tuple[int, float]]:
    """The best ``limit`` chunks by score (ties: lower id first) that pass the filter."""
    kept: list[tuple[int, float]] = []
    checked, wide = 0, limit * WIDEN
    while True:
        ids, scores = sums.best(wide)
        batch = ids[checked:].tolist()
        passed = pg_postings.best_passing(conn, batch, where, params)
        kept.extend(
            (cid, float(score))
            for cid, score in zip(batch, scores[checked:].tolist(), strict=True)
            if cid in passed
        )
        if len(kept) >= limit or len(ids) < wide:
            break
        checked, wide = len(ids), wide * 8
    return kept[:limit]


def _phrase_scores(
    conn: Connection, toks: list[str], stats: Totals, heading_weight: float
) -> dict[int, float]:
    """bm25() of one phrase of several tokens, for every chunk that holds it: the chunks of
    its rarest token that hold the others too (looked up by key: an identifier's number is in
    a few chunks, its prefix in 20k at 1M), their text tokenized again."""
    df = term_frequencies(conn, sorted(set(toks)), stats)
    rarest = min(df, key=lambda t: (df[t], t))
    rows = pg_postings.phrase_rows(conn, rarest, sorted(set(toks) - {rarest}))
    found = instances([(r[1], r[2]) for r in rows], toks)
    hits: dict[int, tuple[int, int, int]] = {}
    for r, (in_text, in_heading) in zip(rows, found, strict=True):
        runs = _runs(in_text, toks), _runs(in_heading, toks)
        if any(runs):
            hits[int(r[0])] = (*runs, int(r[3]))
    idf = formula.idf(stats.rows, len(hits))
    avgdl = stats.averages().avgdl
    return {
        cid: float(formula.bm25(a + heading_weight * b, float(n), idf, avgdl))
        for cid, (a, b, n) in hits.items()
    }


def _runs(tokens: dict[int, str], phrase: list[str]) -> int:
    """How often ``phrase`` occurs as consecutive tokens in a column (its tokens by offset)."""
    return sum(
        1
        for at, token in tokens.items()
        if token == phrase[0] and all(tokens.get(at + i) == t for i, t in enumerate(phrase))
    )
