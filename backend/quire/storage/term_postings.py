"""The frequent terms' postings, kept next to FTS5 so that BM25 is fast from the first query.

FTS5's ``bm25()`` costs O(document frequency) for every query term, so a question whose words
are frequent (in thousands of chunks) costs tens of milliseconds at 100k chunks the first time
each word is seen; the per-term score cache (retrieval/lexical/term_scores.py) only helps the second
time. Yet a term's BM25 score in a row needs only what does not change when other rows come
and go: the term's frequency in each column of the row and the row's length in tokens. The
rest (the row count, the average length, the term's document frequency) is a few numbers.

So the worker, when idle, reads the postings of every term in at least ``min_df`` chunks from
the lexical index (``Database.postings``: FTS5's own ``fts5vocab`` on SQLite, the stems
exactly as FTS5 made them; ``bm25_postings`` on PostgreSQL) into ``term_postings``: per term
the chunk ids, the term's count in the text and heading columns, and each chunk's length. A
search then scores such a term with FTS5's formula (retrieval/bm25.py) in numpy, to float
noise the same numbers as ``bm25()``. This module owns the rows: their format, when they are
due, and the worker's read; retrieval/lexical/ scores them.

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
import struct
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, text

from quire.storage.db import Database, dialect

log = logging.getLogger(__name__)

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


@dataclass(frozen=True)
class Entry:
    """One stem's postings as of chunk id ``upto``."""

    upto: int
    ids: npt.NDArray[np.int64]
    # The counts in their stored widths (unsigned integers).
    tf_text: npt.NDArray[Any]
    tf_heading: npt.NDArray[Any]
    length: npt.NDArray[Any]


def _width(values: npt.NDArray[Any]) -> int:
    top = int(values.max()) if len(values) else 0
    return 0 if top == 0 else 1 if top < 1 << 8 else 2 if top < 1 << 16 else 3


def encode(ids: npt.NDArray[Any], tf_text: Any, tf_heading: Any, length: Any) -> bytes:
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


def decode(upto: int, body: bytes) -> Entry:
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
    return decoded(bodies(conn, list(stems)))


def bodies(conn: Connection, stems: list[str]) -> dict[str, tuple[int, bytes]]:
    """(upto, body) of each of these stems that has an entry."""
    if not stems:
        return {}
    return {term: (upto, body) for term, upto, body in dialect(conn).entry_bodies(conn, stems)}


def decoded(bodies: dict[str, tuple[int, bytes]]) -> dict[str, Entry]:
    out: dict[str, Entry] = {}
    for term, (upto, body) in bodies.items():
        try:
            out[term] = decode(upto, body)
        except (ValueError, struct.error):
            # Not an entry this code wrote: the index ranks the term until it is read again.
            log.warning("term postings of %r unreadable: ranked by the index", term, exc_info=True)
    return out


# -- the worker's side: reading the entries from the index ----------------------------------------


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
    """The rows BM25 counts now."""
    return dialect(conn).lexical_averages(conn).rows


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
    with db.postings() as source:
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
                        encode(
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
