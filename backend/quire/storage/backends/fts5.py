"""SQLite's lexical index from the inside: what FTS5 keeps about ``page_chunks_fts`` (BM25 over
porter stems) and ``page_chunks_tri`` (trigrams) beyond what ``MATCH`` answers.

- the averages record (row count, tokens per column) that ``bm25()`` reads;
- each row's length (``_docsize``) and the postings of a stem (``fts5vocab``), which the
  worker stores for the frequent terms (storage/term_postings.py);
- the structure record, rewritten by every write to the index (a cache key);
- the trigram index's candidate rows for a keyword, with their lengths (the exact leg).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, text

from quire.storage.backends.base import Averages, Postings
from quire.text.tokenize import Tokenizer

FTS = "page_chunks_fts"
TRIGRAMS = "page_chunks_tri"
# FTS5's own view of its index: per stem the rows holding it, and every instance.
_VOCABS = tuple(
    f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.term_postings_{kind} USING fts5vocab("
    f"main, {FTS}, '{kind}')"
    for kind in ("row", "instance")
)
# The postings of one stem: per chunk the count in the text (0) and heading (1) columns
# (fts5vocab names the column).
_INSTANCES_SQL = text(
    "SELECT json_group_array(doc), json_group_array(col), json_group_array(n) FROM "
    "(SELECT doc, col = 'heading_path' AS col, count(*) AS n "
    "FROM temp.term_postings_instance WHERE term = :t GROUP BY doc, col)"
)
# FTS5's structure record (id 10) changes with every write to the index.
_STRUCTURE_SQL = text(f"SELECT block FROM {FTS}_data WHERE id = 10")
# Chunk ids with their documents from the covering index: no chunk text is read.
_ROWS_SQL = text(
    "SELECT json_group_array(id), json_group_array(document_id) "
    "FROM page_chunks INDEXED BY ix_page_chunks_doc_page"
)
_NEW_ROWS_SQL = text(
    "SELECT json_group_array(id), json_group_array(document_id) FROM "
    "(SELECT id, document_id FROM page_chunks WHERE id > :after ORDER BY id)"
)
# Every candidate of a trigram query, with whether the filter lets it through (the document
# frequency is the whole table's, as bm25() counts it).
_TRIGRAM_SQL = (
    f"SELECT c.id, ({{where}}) AS ok, c.text, s.sz FROM {TRIGRAMS} t "
    "JOIN page_chunks c ON c.id = t.rowid JOIN documents d ON d.id = c.document_id "
    f"JOIN {TRIGRAMS}_docsize s ON s.id = t.rowid WHERE {TRIGRAMS} MATCH :q LIMIT :cap"
)
_TRIGRAM_COUNT_SQL = text(f"SELECT count(*) FROM {TRIGRAMS} WHERE {TRIGRAMS} MATCH :q")


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


def averages(conn: Connection, table: str = FTS) -> Averages:
    """The averages record of the FTS5 table ``table`` (page_chunks_fts or page_chunks_tri)."""
    blob = conn.exec_driver_sql(f"SELECT block FROM {table}_data WHERE id = 1").scalar()
    if not blob:
        return Averages(0, 0)
    numbers = varints(blob)
    return Averages(numbers[0], sum(numbers[1:]))


def index_tokenizer(conn: Connection) -> Tokenizer:
    """A tokenizer with ``page_chunks_fts``'s own tokenize option."""
    sql = conn.execute(
        text("SELECT sql FROM sqlite_master WHERE name = :n"), {"n": FTS}
    ).scalar_one()
    found = re.search(r"tokenize\s*=\s*'((?:[^']|'')*)'", str(sql))
    return Tokenizer(found.group(1).replace("''", "'") if found else "unicode61")


def structure_key(conn: Connection) -> bytes | None:
    """FTS5's structure record: it changes whenever the index is written."""
    value = conn.execute(_STRUCTURE_SQL).scalar()
    return bytes(value) if value is not None else None


def chunk_rows(
    conn: Connection, after: int | None = None
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Chunk ids (ascending) with their documents: every chunk, or those above ``after``."""
    if after is None:
        ids_json, docs_json = conn.execute(_ROWS_SQL).one()
    else:
        ids_json, docs_json = conn.execute(_NEW_ROWS_SQL, {"after": after}).one()
    ids = np.array(json.loads(ids_json), dtype=np.int64)
    docs = np.array(json.loads(docs_json), dtype=np.int64)
    order = np.argsort(ids, kind="stable")
    return ids[order], docs[order]


def trigram_candidates(
    conn: Connection, query: str, where: str, params: dict[str, Any], cap: int
) -> list[tuple[int, bool, str, int]]:
    """(chunk id, passes ``where``, text, length in trigrams) of up to ``cap`` rows holding
    every trigram of the MATCH ``query``."""
    rows = conn.execute(text(_TRIGRAM_SQL.format(where=where)), {"q": query, "cap": cap, **params})
    return [(int(cid), bool(ok), str(body), sum(varints(sz))) for cid, ok, body, sz in rows]


def trigram_count(conn: Connection, query: str) -> int:
    """How many rows hold every trigram of the MATCH ``query``."""
    return int(conn.execute(_TRIGRAM_COUNT_SQL, {"q": query}).scalar_one())


@dataclass
class Fts5Source:
    """The frequent terms' postings from FTS5's index of page_chunks_fts (``fts5vocab``), for
    the worker (storage/term_postings.py), in the read transaction of ``conn``."""

    conn: Connection

    def __post_init__(self) -> None:
        for sql in _VOCABS:
            self.conn.exec_driver_sql(sql)
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
        tokenizer = index_tokenizer(self.conn)
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


def _lengths(conn: Connection) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Every row's id and length in tokens (all columns), from FTS5's docsize table."""
    ids_json, sizes_json = conn.exec_driver_sql(
        f"SELECT json_group_array(id), json_group_array(hex(sz)) FROM {FTS}_docsize"
    ).one()
    ids = np.array(json.loads(ids_json), dtype=np.int64)
    lengths = np.array(
        [sum(varints(bytes.fromhex(h))) for h in json.loads(sizes_json)], dtype=np.int64
    )
    order = np.argsort(ids)
    return ids[order], lengths[order]
