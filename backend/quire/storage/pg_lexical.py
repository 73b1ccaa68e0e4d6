"""BM25 on PostgreSQL with FTS5's numbers (migration 0013).

PostgreSQL's ``ts_rank`` is not BM25. So the PostgreSQL library keeps what FTS5's ``bm25()``
reads: for every term of a chunk its count in the text and heading columns and the chunk's
length in tokens (``bm25_postings``), and the row count and total length (``bm25_totals``).
The terms are FTS5's own: the chunk's text (its bigrams for unspaced scripts, as SQLite
indexes it) goes through an in-memory FTS5 table with the tokenizer of ``page_chunks_fts``
and its ``fts5vocab`` instances are read back, so stems, case folding and diacritics are
exactly SQLite's. The score is then FTS5's formula (storage/term_postings.py ``bm25``/``idf``)
summed over the query's terms, in numpy; the best chunks are then checked against the filter
in SQL, the best ``WIDEN`` × limit first.

A frequent term's postings (in ``bm25_frequent_df`` chunks or more) are read as one stored
entry, as on SQLite (storage/term_postings.py: the idle worker writes them; here from
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
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import sqlean
from sqlalchemy import Connection, text

from quire.storage import term_postings
from quire.storage.db import Database, binary_rows

TOKENIZER = term_postings.TOKENIZER


@dataclass(frozen=True)
class Tokens:
    """One row's tokens in order, per column (text, heading)."""

    text: list[str]
    heading: list[str]

    @property
    def length(self) -> int:
        return len(self.text) + len(self.heading)


def tokenize(rows: Sequence[tuple[str, str]]) -> list[Tokens]:
    """Each (text, heading) as FTS5 tokenizes it for ``page_chunks_fts``."""
    return [
        Tokens([a[k] for k in sorted(a)], [b[k] for k in sorted(b)]) for a, b in _instances(rows)
    ]


def _instances(
    rows: Sequence[tuple[str, str]], terms: Sequence[str] | None = None
) -> list[tuple[dict[int, str], dict[int, str]]]:
    """Each (text, heading) as FTS5 tokenizes it: per column, each token by its offset (only
    the tokens ``terms`` when given)."""
    con = sqlean.connect(":memory:")
    try:
        con.execute(f"CREATE VIRTUAL TABLE t USING fts5(a, b, tokenize='{TOKENIZER}')")
        con.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        con.executemany(
            "INSERT INTO t (rowid, a, b) VALUES (?, ?, ?)",
            [(i + 1, a, b) for i, (a, b) in enumerate(rows)],
        )
        cols: list[tuple[dict[int, str], dict[int, str]]] = [({}, {}) for _ in rows]
        found = (
            con.execute("SELECT term, doc, col, offset FROM v")
            if terms is None
            else (
                hit
                for term in dict.fromkeys(terms)
                for hit in con.execute(
                    "SELECT term, doc, col, offset FROM v WHERE term = ?", (term,)
                )
            )
        )
        for term, doc, col, offset in found:
            cols[int(doc) - 1][0 if col == "a" else 1][int(offset)] = str(term)
    finally:
        con.close()
    return cols


def index(conn: Connection, chunk_ids: Sequence[int]) -> None:
    """(Re)write the postings and BM25 length of these chunks from their stored text."""
    if not chunk_ids:
        return
    ids = [int(i) for i in chunk_ids]
    dropped = conn.execute(
        text("DELETE FROM bm25_postings WHERE chunk_id = ANY(CAST(:ids AS bigint[]))"),
        {"ids": ids},
    ).rowcount
    if dropped:
        # A chunk indexed again in place (a new heading): the stored entries may hold its
        # old counts, so they are not read until the worker reads them again (as SQLite's
        # trigger of migration 0009 empties them).
        term_postings.forget(conn)
    rows = conn.execute(
        text(
            "SELECT id, coalesce(fts_text, text), coalesce(fts_heading, heading_path) "
            "FROM page_chunks WHERE id = ANY(CAST(:ids AS bigint[])) ORDER BY id"
        ),
        {"ids": ids},
    ).all()
    found = tokenize([(str(r[1]), str(r[2])) for r in rows])
    terms: list[str] = []
    owners: list[int] = []
    tf_text: list[int] = []
    tf_heading: list[int] = []
    lengths: list[int] = []
    for r, toks in zip(rows, found, strict=True):
        in_text, in_heading = Counter(toks.text), Counter(toks.heading)
        for term in in_text.keys() | in_heading.keys():
            terms.append(term)
            owners.append(int(r[0]))
            tf_text.append(in_text[term])
            tf_heading.append(in_heading[term])
            lengths.append(toks.length)
    if terms:
        # COPY: ~3x faster than a multi-row INSERT of the same rows (bench/postgres.py).
        raw = conn.connection.driver_connection
        assert raw is not None
        with (
            raw.cursor() as cur,
            cur.copy(
                "COPY bm25_postings (term, chunk_id, tf_text, tf_heading, len) FROM STDIN"
            ) as copy,
        ):
            for row in zip(terms, owners, tf_text, tf_heading, lengths, strict=True):
                copy.write_row(row)
    conn.execute(
        text(
            "UPDATE page_chunks SET bm25_len = u.len FROM unnest(CAST(:c AS bigint[]), "
            "CAST(:l AS integer[])) AS u(id, len) WHERE page_chunks.id = u.id"
        ),
        {"c": [int(r[0]) for r in rows], "l": [t.length for t in found]},
    )


@dataclass(frozen=True)
class Totals:
    rows: int
    tokens: int
    trigrams: int
    #: The highest chunk id: with the counts, it changes whenever a chunk is added or removed
    #: (ids are never reused), so it keys the document-frequency cache.
    last_chunk: int

    def averages(self, trigrams: bool = False) -> term_postings.Averages:
        total = self.trigrams if trigrams else self.tokens
        return term_postings.Averages(rows=self.rows, tokens=total)


def totals(conn: Connection) -> Totals:
    """The row count and total lengths that FTS5's bm25() reads, summed over writer slots."""
    r = conn.execute(
        text(
            "SELECT sum(rows), sum(tokens), sum(trigrams), (SELECT max(id) FROM page_chunks) "
            "FROM bm25_totals"
        )
    ).one()
    return Totals(int(r[0] or 0), int(r[1] or 0), int(r[2] or 0), int(r[3] or 0))


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
            counted = {
                str(r[0]): int(r[1])
                for r in conn.execute(
                    text(
                        "SELECT term, count(*) FROM bm25_postings "
                        "WHERE term = ANY(CAST(:t AS text[])) GROUP BY term"
                    ),
                    {"t": todo},
                )
            }
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
    df = term_frequencies(conn, singles, totals(conn)) if singles else {}
    out = []
    for toks in tokens:
        if len(toks) < 2:
            out.append(min(df[toks[0]], cap) if toks else 0)
            continue
        out.append(
            int(
                conn.execute(
                    text(
                        "SELECT count(*) FROM (SELECT chunk_id FROM bm25_postings "
                        "WHERE term = ANY(CAST(:t AS text[])) GROUP BY chunk_id "
                        "HAVING count(*) = :k LIMIT :cap) AS m"
                    ),
                    {"t": toks, "k": len(toks), "cap": cap},
                ).scalar_one()
            )
        )
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
        added = conn.execute(
            text("SELECT count(*) FROM page_chunks WHERE id > :u AND bm25_len IS NOT NULL"),
            {"u": upto},
        ).scalar_one()
        ids = None
        if rows + int(added) != stats.rows:
            ((packed,),) = binary_rows(
                conn,
                "SELECT string_agg(int8send(id), '' ORDER BY id) FROM page_chunks "
                "WHERE id <= %(u)s AND bm25_len IS NOT NULL",
                {"u": upto},
            )
            ids = np.frombuffer(packed or b"", dtype=">i8").astype(np.int64)
        with self._lock:
            self._key, self._ids = key, ids
        return ids


_live = _LiveCache()


def _postings(
    conn: Connection,
    terms: list[str],
    stats: Totals,
    cache: term_postings.EntryCache | None,
) -> dict[str, term_postings.Postings]:
    """Each term's live postings: its stored entry (when the entries can be trusted; from
    ``cache`` when given) and its postings in chunks added since, or all of them from
    ``bm25_postings``."""
    read_at = term_postings.state(conn)
    entries: dict[str, term_postings.Entry] = {}
    if read_at and cache is not None:
        entries = cache.load_many(conn, read_at, terms)
    elif read_at:
        entries = term_postings.load_many(conn, terms)
    fresh = term_postings.read_postings(
        conn, terms, [entries[t].upto if t in entries else 0 for t in terms]
    )
    live = _live.get(conn, read_at, stats) if entries and read_at else None
    out: dict[str, term_postings.Postings] = {}
    for t in terms:
        parts = []
        if (e := entries.get(t)) is not None:
            keep: Any = slice(None)
            if live is not None:  # drop the chunks deleted since the entry was read
                at = np.minimum(np.searchsorted(live, e.ids), max(len(live) - 1, 0))
                keep = live[at] == e.ids if len(live) else np.zeros(len(e.ids), np.bool_)
            parts.append(
                term_postings.Postings(
                    e.ids[keep], e.tf_text[keep], e.tf_heading[keep], e.length[keep]
                )
            )
        if t in fresh:
            parts.append(fresh[t])
        if len(parts) == 1:
            out[t] = parts[0]
        elif parts:
            out[t] = term_postings.Postings(
                *(np.concatenate([getattr(p, f) for p in parts]) for f in _FIELDS)
            )
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
    entries: term_postings.EntryCache | None = None,
) -> list[tuple[int, float]]:
    """Chunk ids with FTS5's bm25() of the OR of ``phrases`` (negated: higher is better), best
    first, among the chunks ``where`` lets through (over ``c`` page_chunks, ``d`` documents);
    the frequent terms' stored entries from ``entries`` when given."""
    stats = totals(conn)
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
        weight = term_postings.idf(stats.rows, len(p.ids)) * singles[t]
        ids.append(p.ids)
        scores.append(
            term_postings.counts_score(
                p.tf_text, p.tf_heading, p.length, weight, avgdl, heading_weight
            )
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
            order = term_postings.ranked(self._ids, self._sums, k)
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
        order = term_postings.ranked(held, table[held], k)
        return held[order], table[held[order]]


def _best(
    conn: Connection, sums: _Sums, limit: int, where: str, params: dict[str, object]
) -> list[tuple[int, float]]:
    """The best ``limit`` chunks by score (ties: lower id first) that pass the filter. Each
    candidate's document is looked up by its key (``OFFSET 0`` keeps the subquery per row: a
    join hashed every document, ~5 ms at 10k documents for 200 chunks)."""
    kept: list[tuple[int, float]] = []
    checked, wide = 0, limit * WIDEN
    while True:
        ids, scores = sums.best(wide)
        batch = ids[checked:].tolist()
        passed = {
            int(r[0])
            for r in conn.execute(
                text(
                    "SELECT c.id FROM page_chunks c WHERE c.id = ANY(CAST(:bm25_ids AS bigint[])) "
                    "AND EXISTS (SELECT 1 FROM documents d WHERE d.id = c.document_id "
                    f"AND {where} OFFSET 0)"
                ),
                {**params, "bm25_ids": batch},
            )
        }
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
    rows = conn.execute(
        text(
            "SELECT c.id, coalesce(c.fts_text, c.text), coalesce(c.fts_heading, c.heading_path), "
            "c.bm25_len FROM bm25_postings p JOIN page_chunks c ON c.id = p.chunk_id "
            "WHERE p.term = :rarest AND c.bm25_len IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "
            "unnest(CAST(:others AS text[])) AS o(term) WHERE NOT EXISTS (SELECT 1 FROM "
            "bm25_postings q WHERE q.term = o.term AND q.chunk_id = p.chunk_id))"
        ),
        {"rarest": rarest, "others": sorted(set(toks) - {rarest})},
    ).all()
    found = _instances([(str(r[1]), str(r[2])) for r in rows], toks)
    hits: dict[int, tuple[int, int, int]] = {}
    for r, (in_text, in_heading) in zip(rows, found, strict=True):
        runs = _runs(in_text, toks), _runs(in_heading, toks)
        if any(runs):
            hits[int(r[0])] = (*runs, int(r[3]))
    idf = term_postings.idf(stats.rows, len(hits))
    avgdl = stats.averages().avgdl
    return {
        cid: float(term_postings.bm25(a + heading_weight * b, float(n), idf, avgdl))
        for cid, (a, b, n) in hits.items()
    }


def _runs(tokens: dict[int, str], phrase: list[str]) -> int:
    """How often ``phrase`` occurs as consecutive tokens in a column (its tokens by offset)."""
    return sum(
        1
        for at, token in tokens.items()
        if token == phrase[0] and all(tokens.get(at + i) == t for i, t in enumerate(phrase))
    )


def settle(db: Database) -> None:
    """After a bulk load: VACUUM ANALYZE, so that the planner has statistics and the BM25
    leg's index-only scans (migration 0015) skip the heap at once rather than once
    autovacuum has come by."""
    with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql("VACUUM (ANALYZE)")
