"""The PostgreSQL library's lexical index: the rows FTS5's ``bm25()`` reads, kept in tables
(migration 0013), written here and read by the BM25 leg (retrieval/lexical/postgres.py).

PostgreSQL's ``ts_rank`` is not BM25. So the library keeps, for every term of a chunk, its
count in the text and heading columns and the chunk's length in tokens (``bm25_postings``),
and per writer slot the row count and total lengths (``bm25_totals``, kept by triggers). The
terms are FTS5's own: the chunk's text (its bigrams for unspaced scripts, as SQLite indexes
it) is cut by text/tokenize.py, so stems, case folding and diacritics are exactly SQLite's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, text

from quire.storage.backends.base import Averages, Database, Postings
from quire.text.tokenize import Tokenizer, tokenize

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
# The chunks of a phrase's rarest token that hold every other token too (looked up by key),
# with the text to tokenize again and their length.
_PHRASE_ROWS_SQL = text(
    "SELECT c.id, coalesce(c.fts_text, c.text), coalesce(c.fts_heading, c.heading_path), "
    "c.bm25_len FROM bm25_postings p JOIN page_chunks c ON c.id = p.chunk_id "
    "WHERE p.term = :rarest AND c.bm25_len IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "
    "unnest(CAST(:others AS text[])) AS o(term) WHERE NOT EXISTS (SELECT 1 FROM "
    "bm25_postings q WHERE q.term = o.term AND q.chunk_id = p.chunk_id))"
)
# pg_trgm's index on lower(text) finds the rows holding a keyword (a LIKE of its escaped
# text); a row's length is what FTS5's trigram tokenizer counts, one per character but two (as
# bm25_totals sums it).
_TRIGRAM_SQL = (
    "SELECT c.id, ({where}) AS ok, c.text, greatest(char_length(c.text) - 2, 0) "
    "FROM page_chunks c "
    "JOIN documents d ON d.id = c.document_id "
    "WHERE lower(c.text) LIKE :q ESCAPE '\\' AND c.bm25_len IS NOT NULL LIMIT :cap"
)
_TRIGRAM_COUNT_SQL = text(
    "SELECT count(*) FROM page_chunks WHERE lower(text) LIKE :q ESCAPE '\\' "
    "AND bm25_len IS NOT NULL"
)


def binary_rows(conn: Connection, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The rows of ``sql`` (psycopg's ``%(name)s`` parameters) in ``conn``'s transaction,
    fetched in the binary format: a bytea value crosses as its bytes rather than as hex text
    (a 1 MB value in ~1.5 ms instead of 6-12)."""
    raw = conn.connection.driver_connection
    assert raw is not None
    with raw.cursor(binary=True) as cur:
        cur.execute(sql, params)
        return list(cur.fetchall())


# -- the write side --------------------------------------------------------------------------


def index(conn: Connection, chunk_ids: Sequence[int]) -> bool:
    """(Re)write the postings and BM25 length of these chunks from their stored text; whether
    some of them had postings already (indexed again in place)."""
    if not chunk_ids:
        return False
    ids = [int(i) for i in chunk_ids]
    dropped = conn.execute(
        text("DELETE FROM bm25_postings WHERE chunk_id = ANY(CAST(:ids AS bigint[]))"),
        {"ids": ids},
    ).rowcount
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
    return bool(dropped)


# -- what the BM25 leg reads -----------------------------------------------------------------


@dataclass(frozen=True)
class Totals:
    rows: int
    tokens: int
    trigrams: int
    #: The highest chunk id: with the counts, it changes whenever a chunk is added or removed
    #: (ids are never reused), so it keys the BM25 leg's caches.
    last_chunk: int

    def averages(self, trigrams: bool = False) -> Averages:
        return Averages(rows=self.rows, tokens=self.trigrams if trigrams else self.tokens)


def totals(conn: Connection) -> Totals:
    """The row count and total lengths that FTS5's bm25() reads, summed over writer slots."""
    r = conn.execute(
        text(
            "SELECT sum(rows), sum(tokens), sum(trigrams), (SELECT max(id) FROM page_chunks) "
            "FROM bm25_totals"
        )
    ).one()
    return Totals(int(r[0] or 0), int(r[1] or 0), int(r[2] or 0), int(r[3] or 0))


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


def term_counts(conn: Connection, terms: Sequence[str]) -> dict[str, int]:
    """How many chunks hold each of these terms (those in none are left out)."""
    return {
        str(r[0]): int(r[1])
        for r in conn.execute(
            text(
                "SELECT term, count(*) FROM bm25_postings "
                "WHERE term = ANY(CAST(:t AS text[])) GROUP BY term"
            ),
            {"t": list(terms)},
        )
    }


def holding_all(conn: Connection, terms: Sequence[str], cap: int) -> int:
    """How many chunks hold every one of ``terms``, counted up to ``cap``."""
    return int(
        conn.execute(
            text(
                "SELECT count(*) FROM (SELECT chunk_id FROM bm25_postings "
                "WHERE term = ANY(CAST(:t AS text[])) GROUP BY chunk_id "
                "HAVING count(*) = :k LIMIT :cap) AS m"
            ),
            {"t": list(terms), "k": len(terms), "cap": cap},
        ).scalar_one()
    )


def phrase_rows(
    conn: Connection, rarest: str, others: Sequence[str]
) -> list[tuple[int, str, str, int]]:
    """(chunk id, text, heading, length) of the chunks holding ``rarest`` and all ``others``."""
    rows = conn.execute(_PHRASE_ROWS_SQL, {"rarest": rarest, "others": list(others)})
    return [(int(r[0]), str(r[1]), str(r[2]), int(r[3])) for r in rows]


def added_since(conn: Connection, upto: int) -> int:
    """Indexed chunks with ids above ``upto``."""
    return int(
        conn.execute(
            text("SELECT count(*) FROM page_chunks WHERE id > :u AND bm25_len IS NOT NULL"),
            {"u": upto},
        ).scalar_one()
    )


def live_ids(conn: Connection, upto: int) -> npt.NDArray[np.int64]:
    """The ids of the indexed chunks up to ``upto``, ascending."""
    ((packed,),) = binary_rows(
        conn,
        "SELECT string_agg(int8send(id), '' ORDER BY id) FROM page_chunks "
        "WHERE id <= %(u)s AND bm25_len IS NOT NULL",
        {"u": upto},
    )
    return np.frombuffer(packed or b"", dtype=">i8").astype(np.int64)


def best_passing(
    conn: Connection, ids: list[int], where: str, params: dict[str, object]
) -> set[int]:
    """Which of these chunks pass ``where`` (over ``d`` documents). Each candidate's document
    is looked up by its key (``OFFSET 0`` keeps the subquery per row: a join hashed every
    document, ~5 ms at 10k documents for 200 chunks)."""
    return {
        int(r[0])
        for r in conn.execute(
            text(
                "SELECT c.id FROM page_chunks c WHERE c.id = ANY(CAST(:bm25_ids AS bigint[])) "
                "AND EXISTS (SELECT 1 FROM documents d WHERE d.id = c.document_id "
                f"AND {where} OFFSET 0)"
            ),
            {**params, "bm25_ids": ids},
        )
    }


def trigram_candidates(
    conn: Connection, pattern: str, where: str, params: dict[str, Any], cap: int
) -> list[tuple[int, bool, str, int]]:
    """(chunk id, passes ``where``, text, length in trigrams) of up to ``cap`` rows whose
    lower-cased text is LIKE ``pattern``."""
    rows = conn.execute(
        text(_TRIGRAM_SQL.format(where=where)), {"q": pattern, "cap": cap, **params}
    )
    return [(int(cid), bool(ok), str(body), int(sz)) for cid, ok, body, sz in rows]


def trigram_count(conn: Connection, pattern: str) -> int:
    """How many indexed rows' lower-cased text is LIKE ``pattern``."""
    return int(conn.execute(_TRIGRAM_COUNT_SQL, {"q": pattern}).scalar_one())


# -- the worker's read of the frequent terms --------------------------------------------------


@dataclass
class TableSource:
    """The frequent terms' postings from ``bm25_postings`` in one read snapshot, up to chunk
    ``upto`` (storage/term_postings.py)."""

    conn: Connection
    upto: int

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
        tokenizer = Tokenizer()
        try:
            return {s for w in words for s in tokenizer.stems(w)}
        finally:
            tokenizer.close()

    def postings(self, stems: list[str]) -> Iterator[tuple[str, Postings]]:
        found = read_postings(self.conn, stems, [0] * len(stems), self.upto)
        yield from ((s, found[s]) for s in stems if s in found)


@contextmanager
def committed(db: Database) -> Iterator[TableSource]:
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
        yield TableSource(conn, upto)


def settle(db: Database) -> None:
    """After a bulk load: VACUUM ANALYZE, so that the planner has statistics and the BM25
    leg's index-only scans (migration 0015) skip the heap at once rather than once
    autovacuum has come by."""
    with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql("VACUUM (ANALYZE)")
