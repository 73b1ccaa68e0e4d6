"""The frequent terms' postings, kept next to FTS5 so that BM25 is fast from the first query.

FTS5's ``bm25()`` costs O(document frequency) for every query term, so a question whose words
are frequent (in thousands of chunks) costs tens of milliseconds at 100k chunks the first time
each word is seen; the per-term score cache (retrieval/term_scores.py) only helps the second
time. Yet a term's BM25 score in a row needs only what does not change when other rows come
and go: the term's frequency in each column of the row and the row's length in tokens. The
rest (the row count, the average length, the term's document frequency) is a few numbers.

So the worker, when idle, reads the postings of every term in at least ``min_df`` chunks from
FTS5's own index (``fts5vocab``: the stems exactly as FTS5 made them) into ``term_postings``:
per term the chunk ids, the term's count in the text and heading columns, and each chunk's
length. A search then scores such a term with FTS5's formula (sqlite's fts5_aux.c,
fts5Bm25Function) in numpy, to float noise the same numbers as ``bm25()``.

An entry stays right while chunks are added and deleted: chunk ids are never reused
(AUTOINCREMENT), a deleted chunk's postings are dropped against the live rows, and the rows
added after the entry (ids above its ``upto``) are scored by FTS5 itself, restricted to those
rowids. Only an in-place change of a chunk's text would make an entry wrong; the trigger of
migration 0009 empties the table then. The worker reads the entries again once enough rows
changed (``due``).
"""

from __future__ import annotations

import json
import logging
import math
import re
import struct
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
import sqlean
from sqlalchemy import Connection, text

from quire.storage.db import Database, binary_rows, in_strings, is_postgres, string_list

log = logging.getLogger(__name__)

# FTS5's bm25() constants (fts5_aux.c).
K1, B = 1.2, 0.75
_FTS = "page_chunks_fts"
#: The tokenizer of page_chunks_fts (migration 0001), which PostgreSQL's postings use too.
TOKENIZER = "porter unicode61 remove_diacritics 2"
# FTS5's own view of its index: per stem the rows holding it, and every instance.
_VOCABS = tuple(
    f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.term_postings_{kind} USING fts5vocab("
    f"main, {_FTS}, '{kind}')"
    for kind in ("row", "instance")
)
# The postings of one stem: per chunk the count in the text (0) and heading (1) columns
# (fts5vocab names the column).
_INSTANCES_SQL = text(
    "SELECT json_group_array(doc), json_group_array(col), json_group_array(n) FROM "
    "(SELECT doc, col = 'heading_path' AS col, count(*) AS n "
    "FROM temp.term_postings_instance WHERE term = :t GROUP BY doc, col)"
)
_STATE_KEY = "state"  # what the entries were read at
_CLAIM_KEY = "claim"  # the worker reading them now
#: A claim older than this is taken over (its worker died mid-read).
CLAIM_S = 600.0
# One entry's layout: a header (format, the width of each array, the posting count), then the
# gaps between chunk ids, the text and heading counts and the chunk lengths in tokens, each
# array in the narrowest unsigned integer that holds its largest value (width 0: all zero,
# nothing stored). A frequent term's postings take ~3.3 bytes each at 100k chunks (12 with
# fixed widths).
_FORMAT = 1
_HEADER = struct.Struct("<BBI")
_WIDTHS: tuple[type[np.unsignedinteger[Any]] | None, ...] = (None, np.uint8, np.uint16, np.uint32)
#: Rows changed (added or deleted) since the last read, as a share of all rows, that make the
#: entries due to be read again: until then the rows added since are scored by FTS5 (cheaply:
#: only those rows) and terms that became frequent since are not in the table.
REFRESH_SHARE = 0.05


def varints(blob: bytes) -> list[int]:
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
class Averages:
    """FTS5's averages record: the row count and the tokens in all columns together."""

    rows: int
    tokens: int

    @property
    def avgdl(self) -> float:
        return float(self.tokens) / float(self.rows) if self.rows else 0.0


def averages(conn: Connection, table: str = _FTS) -> Averages:
    """The averages record of the FTS5 table ``table`` (page_chunks_fts or page_chunks_tri)."""
    blob = conn.exec_driver_sql(f"SELECT block FROM {table}_data WHERE id = 1").scalar()
    if not blob:
        return Averages(0, 0)
    numbers = varints(blob)
    return Averages(numbers[0], sum(numbers[1:]))


def bm25(f: Any, length: Any, idf_: float, avgdl: float) -> Any:
    """fts5Bm25Function's score of one phrase (positive: higher is better), with its
    operations in that order: ``f`` the phrase's weighted count in a row, ``length`` the row's
    tokens (floats or arrays of them)."""
    return idf_ * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + B * length / avgdl)))


def counts_score(
    tf_text: Any, tf_heading: Any, length: Any, idf_: float, avgdl: float, hw: float
) -> Any:
    """FTS5's bm25() of one term from its counts in the text and heading columns (arrays), the
    heading weighted ``hw``, with the operations in fts5Bm25Function's order."""
    return bm25(tf_text * 1.0 + tf_heading * hw, length, idf_, avgdl)


def idf(rows: int, df: int) -> float:
    """FTS5's IDF: log((N - n + 0.5) / (n + 0.5)), floored at 1e-6."""
    value = math.log((rows - df + 0.5) / (df + 0.5))
    return value if value > 0.0 else 1e-6


@dataclass(frozen=True)
class Entry:
    """One stem's postings as of chunk id ``upto``."""

    upto: int
    ids: npt.NDArray[np.int64]
    # The counts in their stored widths (unsigned integers).
    tf_text: npt.NDArray[Any]
    tf_heading: npt.NDArray[Any]
    length: npt.NDArray[Any]

    def scores(self, keep: npt.NDArray[np.bool_], idf_: float, avgdl: float, hw: float) -> Any:
        """FTS5's bm25() of this term alone for the ``keep`` postings (positive: higher is
        better), with the operations in fts5Bm25Function's order."""
        return counts_score(
            self.tf_text[keep], self.tf_heading[keep], self.length[keep], idf_, avgdl, hw
        )


def ranked(ids: npt.NDArray[np.int64], scores: npt.NDArray[np.float64], k: int) -> Any:
    """The positions of the best ``k`` by score, best first, ties broken by the lower id (the
    order of FTS5's ``ORDER BY bm25(...)``, rowid)."""
    rows = np.arange(len(ids))
    if k < 1:
        return rows[:0]
    if len(rows) > k:
        # The best ``k`` and everything tied with the last of them, then the tie-break.
        kth = scores[np.argpartition(-scores, k - 1)[k - 1]]
        rows = np.flatnonzero(scores >= kth)
    return rows[np.lexsort((ids[rows], -scores[rows]))][:k]


def _width(values: npt.NDArray[Any]) -> int:
    top = int(values.max()) if len(values) else 0
    return 0 if top == 0 else 1 if top < 1 << 8 else 2 if top < 1 << 16 else 3


def _encode(ids: npt.NDArray[Any], tf_text: Any, tf_heading: Any, length: Any) -> bytes:
    """One entry's body; ``ids`` ascending."""
    arrays = [np.diff(np.asarray(ids, dtype=np.int64), prepend=0)] + [
        np.asarray(a, dtype=np.int64) for a in (tf_text, tf_heading, length)
    ]
    widths = [_width(a) for a in arrays]
    head = _HEADER.pack(_FORMAT, sum(w << (2 * i) for i, w in enumerate(widths)), len(ids))
    return head + b"".join(
        a.astype(dtype).tobytes()
        for a, w in zip(arrays, widths, strict=True)
        if (dtype := _WIDTHS[w]) is not None
    )


def _decode(upto: int, body: bytes) -> Entry:
    fmt, codes, n = _HEADER.unpack_from(body)
    if fmt != _FORMAT:
        raise ValueError(f"term postings of format {fmt}, not {_FORMAT}")
    arrays, offset = [], _HEADER.size
    # The counts stay views of the body in their stored widths (the scores are computed in
    # float64 all the same); only the id gaps are summed.
    for i in range(4):
        dtype = _WIDTHS[(codes >> (2 * i)) & 3]
        if dtype is None:
            arrays.append(np.zeros(n, dtype=np.uint8))
            continue
        arrays.append(np.frombuffer(body, dtype=dtype, count=n, offset=offset))
        offset += np.dtype(dtype).itemsize * n
    gaps, tf_text, tf_heading, length = arrays
    return Entry(upto, np.cumsum(gaps, dtype=np.int64), tf_text, tf_heading, length)


def load(conn: Connection, stem: str) -> Entry | None:
    return load_many(conn, [stem]).get(stem)


def load_many(conn: Connection, stems: Iterable[str]) -> dict[str, Entry]:
    """The stored entries of these stems (those that have one)."""
    return _decoded(_bodies(conn, list(stems)))


def _bodies(conn: Connection, stems: list[str]) -> dict[str, tuple[int, bytes]]:
    """(upto, body) of each of these stems that has an entry."""
    if not stems:
        return {}
    rows: Sequence[Any]
    if is_postgres(conn):
        rows = binary_rows(
            conn, "SELECT term, upto, body FROM term_postings WHERE term = ANY(%(s)s)", {"s": stems}
        )
    else:
        rows = conn.execute(
            text(
                f"SELECT term, upto, body FROM term_postings WHERE {in_strings(conn, 'term', 's')}"
            ),
            {"s": string_list(conn, stems)},
        ).all()
    return {str(term): (int(upto), bytes(body)) for term, upto, body in rows}


def _decoded(bodies: dict[str, tuple[int, bytes]]) -> dict[str, Entry]:
    out: dict[str, Entry] = {}
    for term, (upto, body) in bodies.items():
        try:
            out[term] = _decode(upto, body)
        except (ValueError, struct.error):
            # Not an entry this code wrote: the index ranks the term until it is read again.
            log.warning("term postings of %r unreadable: ranked by the index", term, exc_info=True)
    return out


class EntryCache:
    """Stored entries kept by a serving process (PostgreSQL's BM25 leg: reading a common
    word's entry from the server costs ~5-10 ms at 1M chunks), as their bodies (~3-5 bytes a
    posting) decoded on use. They hold for one ``state`` of the entries, which only the worker
    changes, by reading them again (a new ``read`` id), or emptying them; the least recently
    used leave past ``max_mb``. Stems without an entry are remembered too."""

    def __init__(self, max_mb: float) -> None:
        self.max_bytes = int(max_mb * 2**20)
        self._lock = threading.Lock()
        self._key: tuple[str, str] | None = None
        self._bodies: OrderedDict[str, tuple[int, bytes]] = OrderedDict()
        self._absent: set[str] = set()
        self._bytes = 0

    def load_many(
        self, conn: Connection, state: dict[str, Any], stems: Iterable[str]
    ) -> dict[str, Entry]:
        """The entries of these stems (those that have one) as of ``state``, read on ``conn``
        (whose snapshot ``state`` was read in)."""
        key = (conn.engine.url.render_as_string(), json.dumps(state, sort_keys=True))
        found: dict[str, tuple[int, bytes]] = {}
        with self._lock:
            if self._key != key:
                self._key, self._bodies, self._absent, self._bytes = key, OrderedDict(), set(), 0
            for stem in stems:
                if (hit := self._bodies.get(stem)) is not None:
                    self._bodies.move_to_end(stem)
                    found[stem] = hit
            todo = [t for t in dict.fromkeys(stems) if t not in found and t not in self._absent]
        read = _bodies(conn, todo)
        with self._lock:
            if self._key == key:
                if len(self._absent) > _ABSENT_MAX:
                    self._absent = set()
                self._absent.update(t for t in todo if t not in read)
                for stem, value in read.items():
                    if stem not in self._bodies and len(value[1]) <= self.max_bytes:
                        self._bodies[stem] = value
                        self._bytes += len(value[1])
                while self._bytes > self.max_bytes:
                    _, (_, old) = self._bodies.popitem(last=False)
                    self._bytes -= len(old)
        return _decoded({**found, **read})


#: Stems remembered as having no entry, at most (then forgotten all at once).
_ABSENT_MAX = 100_000


class Tokenizer:
    """The stems FTS5 makes of a piece of text, from a private in-memory FTS5 table with the
    index's own tokenizer (so a query word finds its entry exactly as MATCH would)."""

    def __init__(self, tokenize: str) -> None:
        self._lock = threading.Lock()
        self._conn = sqlean.connect(":memory:", check_same_thread=False)
        self._conn.isolation_level = None
        quoted = tokenize.replace("'", "''")
        self._conn.execute(f"CREATE VIRTUAL TABLE probe USING fts5(x, tokenize='{quoted}')")
        self._conn.execute("CREATE VIRTUAL TABLE probe_v USING fts5vocab(probe, 'instance')")

    @classmethod
    def of_index(cls, conn: Connection) -> Tokenizer:
        sql = conn.execute(
            text("SELECT sql FROM sqlite_master WHERE name = :n"), {"n": _FTS}
        ).scalar_one()
        found = re.search(r"tokenize\s*=\s*'((?:[^']|'')*)'", str(sql))
        return cls(found.group(1).replace("''", "'") if found else "unicode61")

    def stems(self, value: str) -> list[str]:
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                self._conn.execute("INSERT INTO probe(x) VALUES (?)", (value,))
                rows = self._conn.execute("SELECT term FROM probe_v ORDER BY offset").fetchall()
            finally:
                self._conn.execute("ROLLBACK")
        return [str(r[0]) for r in rows]

    def close(self) -> None:
        with self._lock:
            self._conn.close()


# -- the worker's side: reading the entries from FTS5 ----------------------------------------


def _get(conn: Connection, key: str) -> dict[str, Any] | None:
    raw = conn.execute(
        text("SELECT value FROM term_postings_state WHERE key = :k"), {"k": key}
    ).scalar()
    return json.loads(raw) if raw else None


def _put(conn: Connection, key: str, value: dict[str, Any]) -> None:
    conn.execute(
        text(
            "INSERT INTO term_postings_state(key, value) VALUES (:k, :v) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value"
        ),
        {"k": key, "v": json.dumps(value)},
    )


def _rows(conn: Connection) -> int:
    """The rows BM25 counts now: FTS5's averages record, or on PostgreSQL the BM25 totals
    (pg_lexical.totals, summed over its writer slots)."""
    if is_postgres(conn):
        rows = conn.exec_driver_sql("SELECT coalesce(sum(rows), 0) FROM bm25_totals").scalar()
        return int(rows or 0)
    return averages(conn).rows


def state(conn: Connection) -> dict[str, Any] | None:
    """What the stored entries were read at (``upto``, ``rows``, ``min_df``), or None when
    there are none to trust (never read, being read again, or emptied)."""
    return _get(conn, _STATE_KEY)


def forget(conn: Connection) -> None:
    """Stop trusting the stored entries (a chunk's text changed in place) until the worker
    reads them again."""
    conn.execute(text("DELETE FROM term_postings_state WHERE key = :k"), {"k": _STATE_KEY})


def due(conn: Connection, min_df: int) -> bool:
    """Whether the entries should be read again: never read while some term could be frequent,
    or enough rows added or deleted since (REFRESH_SHARE), or emptied by the trigger."""
    rows = _rows(conn)
    state = _get(conn, _STATE_KEY)
    if state is None:
        return rows >= min_df
    if state.get("min_df") != min_df:
        return True
    added = int(
        conn.execute(
            text("SELECT count(*) FROM page_chunks WHERE id > :u"), {"u": state["upto"]}
        ).scalar_one()
    )
    deleted = int(state["rows"]) + added - rows
    return added + abs(deleted) >= max(min_df, REFRESH_SHARE * max(rows, 1))


def status(conn: Connection, min_df: int) -> tuple[bool, str]:
    """(up to date, what to tell the user) about the stored postings (``quire doctor``)."""
    if not min_df:
        return True, "off (QUIRE_BM25_FREQUENT_DF=0): BM25 ranks in FTS5 alone"
    rows = _rows(conn)
    state = _get(conn, _STATE_KEY)
    terms, size = conn.exec_driver_sql(
        "SELECT count(*), coalesce(sum(length(body)), 0) FROM term_postings"
    ).one()
    if state is None and rows < min_df:
        return True, f"not needed yet: {rows:,} chunks, no term can be in {min_df:,} of them"
    stored = f"{terms:,} terms in >= {min_df:,} chunks ({size / 2**20:.1f} MB)"
    if due(conn, min_df):
        if state is None:
            return False, f"not read yet ({rows:,} chunks): the worker reads them when idle"
        return False, f"{stored}, read at {state['rows']:,} chunks, {rows:,} now: due again"
    return True, f"{stored}, read at {state['rows']:,} chunks" if state else stored


@dataclass(frozen=True)
class Postings:
    """One stem's postings: chunk ids and, per chunk, the stem's count in the text and
    heading columns and the chunk's length in tokens (aligned arrays)."""

    ids: npt.NDArray[np.int64]
    tf_text: npt.NDArray[np.int64]
    tf_heading: npt.NDArray[np.int64]
    length: npt.NDArray[np.int64]


class Source(Protocol):
    """Where the entries are read from, in one read snapshot: FTS5's own index on SQLite
    (``Fts5Source``), the BM25 postings table on PostgreSQL (pg_lexical.PostingsSource)."""

    def counts(self) -> tuple[int, int]:
        """(rows, largest chunk id) the entries are read at."""

    def frequent(self, min_df: int) -> list[str]:
        """The stems in at least ``min_df`` chunks, in order."""

    def stems(self, words: Iterable[str]) -> set[str]:
        """The stems the index makes of ``words``."""

    def postings(self, stems: list[str]) -> Iterator[tuple[str, Postings]]:
        """Each stem's postings up to the largest chunk id of ``counts``."""


class Fts5Source:
    """FTS5's index of page_chunks_fts, read through ``fts5vocab``."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        for sql in _VOCABS:
            conn.exec_driver_sql(sql)
        self._lengths: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None = None

    def counts(self) -> tuple[int, int]:
        top = self.conn.exec_driver_sql("SELECT coalesce(max(id), 0) FROM page_chunks").scalar()
        return averages(self.conn).rows, int(top or 0)

    def frequent(self, min_df: int) -> list[str]:
        return [
            str(r[0])
            for r in self.conn.execute(
                text("SELECT term FROM temp.term_postings_row WHERE doc >= :m ORDER BY term"),
                {"m": min_df},
            )
        ]

    def stems(self, words: Iterable[str]) -> set[str]:
        tokenizer = Tokenizer.of_index(self.conn)
        try:
            return {s for w in words for s in tokenizer.stems(w)}
        finally:
            tokenizer.close()

    def postings(self, stems: list[str]) -> Iterator[tuple[str, Postings]]:
        if self._lengths is None:
            self._lengths = _lengths(self.conn)
        ids, lengths = self._lengths
        for stem in stems:
            docs_json, cols_json, counts_json = self.conn.execute(_INSTANCES_SQL, {"t": stem}).one()
            docs = np.array(json.loads(docs_json), dtype=np.int64)
            cols = np.array(json.loads(cols_json), dtype=np.int64)
            counts = np.array(json.loads(counts_json), dtype=np.int64)
            chunk_ids, where = np.unique(docs, return_inverse=True)
            tf_text = np.zeros(len(chunk_ids), dtype=np.int64)
            tf_heading = np.zeros(len(chunk_ids), dtype=np.int64)
            np.add.at(tf_text, where[cols == 0], counts[cols == 0])
            np.add.at(tf_heading, where[cols == 1], counts[cols == 1])
            length = lengths[np.searchsorted(ids, chunk_ids)]
            yield stem, Postings(chunk_ids, tf_text, tf_heading, length)


# Terms' postings, each column packed by the server into one byte string (big-endian): 300k
# postings cross as four strings, not 1.2M values. Rows in any order, the same in each column.
_POSTINGS_SQL = (
    "SELECT p.term, string_agg(int8send(p.chunk_id), ''), string_agg(int4send(p.tf_text), ''), "
    "string_agg(int4send(p.tf_heading), ''), string_agg(int4send(p.len), '') "
    "FROM unnest(CAST(%(terms)s AS text[]), CAST(%(after)s AS bigint[])) AS q(term, after) "
    "JOIN bm25_postings p ON p.term = q.term AND p.chunk_id > q.after "
    "AND p.chunk_id <= %(upto)s GROUP BY p.term"
)
_NO_END = 2**62


def read_postings(
    conn: Connection, terms: Sequence[str], after: Sequence[int], upto: int = _NO_END
) -> dict[str, Postings]:
    """Each term's postings in the chunks with ids in (its ``after``, ``upto``]; terms with
    none are left out."""
    if not terms:
        return {}
    out: dict[str, Postings] = {}
    for term, ids, tf_text, tf_heading, length in binary_rows(
        conn,
        _POSTINGS_SQL,
        {"terms": list(terms), "after": [int(a) for a in after], "upto": upto},
    ):
        out[str(term)] = Postings(
            np.frombuffer(ids, dtype=">i8").astype(np.int64),
            np.frombuffer(tf_text, dtype=">i4").astype(np.int64),
            np.frombuffer(tf_heading, dtype=">i4").astype(np.int64),
            np.frombuffer(length, dtype=">i4").astype(np.int64),
        )
    return out


class PostingsSource:
    """The Source on PostgreSQL: ``bm25_postings`` (storage/pg_lexical.py) in one read
    snapshot, up to chunk ``upto``."""

    def __init__(self, conn: Connection, upto: int) -> None:
        self.conn, self.upto = conn, upto

    def counts(self) -> tuple[int, int]:
        rows = self.conn.execute(
            text("SELECT count(*) FROM page_chunks WHERE id <= :u AND bm25_len IS NOT NULL"),
            {"u": self.upto},
        ).scalar_one()
        return int(rows), self.upto

    def frequent(self, min_df: int) -> list[str]:
        return [
            str(r[0])
            for r in self.conn.execute(
                text(
                    "SELECT term FROM bm25_postings WHERE chunk_id <= :u GROUP BY term "
                    "HAVING count(*) >= :m ORDER BY term"
                ),
                {"u": self.upto, "m": min_df},
            )
        ]

    def stems(self, words: Iterable[str]) -> set[str]:
        tokenizer = Tokenizer(TOKENIZER)
        try:
            return {s for w in words for s in tokenizer.stems(w)}
        finally:
            tokenizer.close()

    def postings(self, stems: list[str]) -> Iterator[tuple[str, Postings]]:
        found = read_postings(self.conn, stems, [0] * len(stems), self.upto)
        yield from ((s, found[s]) for s in stems if s in found)


@contextmanager
def postings_source(db: Database) -> Iterator[PostingsSource]:
    """The postings as of a chunk id below which every chunk is committed, and the snapshot
    to read them in. Chunk ids come from a sequence, in order, and are taken while a writer
    holds its lock on page_chunks: once a SHARE lock is granted every writer in flight has
    finished, so the largest id then has no uncommitted one below it (a chunk committed later
    with a lower id would be in neither the entries nor the chunks read as new)."""
    with db.write() as conn:
        conn.exec_driver_sql("SET LOCAL lock_timeout = '30s'")
        conn.exec_driver_sql("LOCK TABLE page_chunks IN SHARE MODE")
        upto = int(
            conn.exec_driver_sql("SELECT coalesce(max(id), 0) FROM page_chunks").scalar_one()
        )
    with db.read() as conn:
        yield PostingsSource(conn, upto)


def _lengths(conn: Connection) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Every row's id and length in tokens (all columns), from FTS5's docsize table."""
    ids_json, sizes_json = conn.exec_driver_sql(
        f"SELECT json_group_array(id), json_group_array(hex(sz)) FROM {_FTS}_docsize"
    ).one()
    ids = np.array(json.loads(ids_json), dtype=np.int64)
    lengths = np.array(
        [sum(varints(bytes.fromhex(h))) for h in json.loads(sizes_json)], dtype=np.int64
    )
    order = np.argsort(ids)
    return ids[order], lengths[order]


@contextmanager
def _source(db: Database) -> Iterator[Source]:
    if db.dialect == "postgresql":
        with postings_source(db) as source:
            yield source
        return
    with db.read() as conn:
        yield Fts5Source(conn)


def refresh(
    db: Database,
    min_df: int,
    *,
    skip_words: Iterable[str] = (),
    should_stop: Callable[[], bool] = lambda: False,
    batch_postings: int = 1_000_000,
    owner: str = "",
) -> dict[str, Any]:
    """Read the postings of every stem in at least ``min_df`` chunks (except ``skip_words'``
    stems: the stopwords a query never searches) from the index into ``term_postings``,
    replacing what was there. One read snapshot for all; written in batches of about
    ``batch_postings`` so that no write holds the lock for long. Returns what it did. One
    worker (``owner``) at a time: another one idle meanwhile skips (its claim lapses after
    CLAIM_S if it died)."""
    if not _claim(db, owner):
        return {"min_df": min_df, "terms": 0, "postings": 0, "skipped": "claimed", "s": 0.0}
    try:
        return _read(db, min_df, skip_words, should_stop, batch_postings)
    finally:
        with db.write() as conn:
            if (_get(conn, _CLAIM_KEY) or {}).get("owner") == owner:
                conn.execute(
                    text("DELETE FROM term_postings_state WHERE key = :k"), {"k": _CLAIM_KEY}
                )


def _claim(db: Database, owner: str) -> bool:
    with db.write() as conn:
        held = _get(conn, _CLAIM_KEY)
        if held and held.get("owner") != owner and time.time() - held.get("at", 0) < CLAIM_S:
            return False
        _put(conn, _CLAIM_KEY, {"owner": owner, "at": time.time()})
    return True


#: Stems whose postings are read in one go (PostgreSQL reads a batch in one statement).
_READ_BATCH = 64


def _read(
    db: Database,
    min_df: int,
    skip_words: Iterable[str],
    should_stop: Callable[[], bool],
    batch_postings: int,
) -> dict[str, Any]:
    t0 = time.perf_counter()
    with _source(db) as source:
        skip = source.stems(skip_words)
        rows, top = source.counts()
        frequent = [stem for stem in source.frequent(min_df) if stem not in skip]
        pending: list[tuple[str, bytes]] = []
        size = written = postings = 0
        first = True
        stopped = False
        for at in range(0, len(frequent), _READ_BATCH):
            if should_stop():
                stopped = True
                break
            for stem, found in source.postings(frequent[at : at + _READ_BATCH]):
                order = np.argsort(found.ids, kind="stable")
                pending.append(
                    (
                        stem,
                        _encode(
                            found.ids[order],
                            found.tf_text[order],
                            found.tf_heading[order],
                            found.length[order],
                        ),
                    )
                )
                size += len(found.ids)
                postings += len(found.ids)
            if size >= batch_postings:
                written += _write(db, pending, top, clear=first)
                pending, size, first = [], 0, False
    if not stopped:
        written += _write(db, pending, top, clear=first)
        with db.write() as conn:
            # ``read`` tells this read's entries from any earlier ones (EntryCache).
            state = {"upto": top, "rows": rows, "min_df": min_df, "read": uuid.uuid4().hex}
            _put(conn, _STATE_KEY, state)
    return {
        "min_df": min_df,
        "terms": written,
        "postings": postings,
        "rows": rows,
        "stopped": stopped,
        "s": round(time.perf_counter() - t0, 2),
    }


def _write(db: Database, entries: list[tuple[str, bytes]], upto: int, *, clear: bool) -> int:
    with db.write() as conn:
        if clear:
            conn.exec_driver_sql("DELETE FROM term_postings")
            conn.execute(text("DELETE FROM term_postings_state WHERE key = :k"), {"k": _STATE_KEY})
        for stem, body in entries:
            conn.execute(
                text(
                    "INSERT INTO term_postings(term, upto, body) VALUES (:t, :u, :b) "
                    "ON CONFLICT(term) DO UPDATE SET upto = excluded.upto, body = excluded.body"
                ),
                {"t": stem, "u": upto, "b": body},
            )
    return len(entries)
