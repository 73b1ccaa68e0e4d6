"""Text as FTS5 tokenizes it for the lexical index: stems, case folding and diacritics exactly
as SQLite's ``page_chunks_fts`` makes them, from a private in-memory FTS5 table with the same
tokenizer. The PostgreSQL library's BM25 rows, the worker's stored entries and the queries
that look them up all cut text this way, so a query word finds its postings exactly as an
FTS5 MATCH would.

    Tokenizer(INDEX_TOKENIZER).stems("Running dogs")    # ["run", "dog"]
    tokenize([("the cats", "Chapter 1")])[0].heading    # ["chapter", "1"]
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import sqlean

#: The tokenizer of ``page_chunks_fts`` (migration 0001), which PostgreSQL's postings use too.
INDEX_TOKENIZER = "porter unicode61 remove_diacritics 2"


class Tokenizer:
    """The stems FTS5 makes of a piece of text with the tokenizer ``spec``."""

    def __init__(self, spec: str = INDEX_TOKENIZER) -> None:
        self._lock = threading.Lock()
        self._conn = sqlean.connect(":memory:", check_same_thread=False)
        self._conn.isolation_level = None
        quoted = spec.replace("'", "''")
        self._conn.execute(f"CREATE VIRTUAL TABLE probe USING fts5(x, tokenize='{quoted}')")
        self._conn.execute("CREATE VIRTUAL TABLE probe_v USING fts5vocab(probe, 'instance')")

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
        Tokens([a[k] for k in sorted(a)], [b[k] for k in sorted(b)]) for a, b in instances(rows)
    ]


def instances(
    rows: Sequence[tuple[str, str]], terms: Sequence[str] | None = None
) -> list[tuple[dict[int, str], dict[int, str]]]:
    """Each (text, heading) as FTS5 tokenizes it: per column, each token by its offset (only
    the tokens ``terms`` when given)."""
    con = sqlean.connect(":memory:")
    try:
        con.execute(f"CREATE VIRTUAL TABLE t USING fts5(a, b, tokenize='{INDEX_TOKENIZER}')")
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
