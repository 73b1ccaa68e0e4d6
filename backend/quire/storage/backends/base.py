"""The seam between Quire and its database: what a library needs from SQLite (the embedded
default) or PostgreSQL (the team library), as two Protocols.

``Database`` is the open library: its engine, transactions, migration lock, bulk-load repair,
and where the frequent terms' postings are read from. ``Dialect`` is the SQL that differs for
code that holds only a connection (``backends.dialect(conn)``): id lists and JSON, job
claiming, the vector table, and the lexical index's write side. Each backend module
(backends/sqlite.py, backends/postgres.py) implements both; nothing outside ``storage/``
asks which one it has.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, Engine

#: (index, built so far, of) as a bulk load's indexes are built.
BulkProgress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Averages:
    """What BM25 needs of the whole lexical index: the row count and the tokens in all
    columns together (FTS5's averages record; PostgreSQL's ``bm25_totals``)."""

    rows: int
    tokens: int

    @property
    def avgdl(self) -> float:
        return float(self.tokens) / float(self.rows) if self.rows else 0.0


@dataclass(frozen=True)
class Postings:
    """One stem's postings: chunk ids and, per chunk, the stem's count in the text and
    heading columns and the chunk's length in tokens (aligned arrays)."""

    ids: npt.NDArray[np.int64]
    tf_text: npt.NDArray[np.int64]
    tf_heading: npt.NDArray[np.int64]
    length: npt.NDArray[np.int64]


class PostingsSource(Protocol):
    """Where the worker reads the frequent terms' postings from, in one read snapshot: FTS5's
    own index on SQLite, the BM25 postings table on PostgreSQL (storage/term_postings.py)."""

    def counts(self) -> tuple[int, int]:
        """(rows, largest chunk id) the entries are read at."""

    def frequent(self, min_df: int) -> list[str]:
        """The stems in at least ``min_df`` chunks, in order."""

    def stems(self, words: Iterable[str]) -> set[str]:
        """The stems the index makes of ``words``."""

    def postings(self, stems: list[str]) -> Iterator[tuple[str, Postings]]:
        """Each stem's postings up to the largest chunk id of ``counts``."""


class Dialect(Protocol):
    """The SQL that differs between the backends, for code that holds a connection."""

    #: "sqlite" or "postgresql".
    name: str
    #: How a query joins documents to a short list of chunk ids so that the ids stay the
    #: outer loop (SQLite plans by the order of a CROSS JOIN; PostgreSQL has statistics).
    join_by_ids: str
    #: What a job claim appends to its candidate query (row locks on PostgreSQL).
    skip_locked: str
    #: The function that builds a JSON object from key/value arguments.
    json_object: str
    #: The chunk id column of ``vec.page_vecs``.
    vector_key: str

    def in_ids(self, column: str, name: str) -> str:
        """``column`` is one of the ids bound as ``:name`` (bind ``id_list(ids)``)."""

    def id_list(self, ids: Iterable[int]) -> Any:
        """The bound value for ``in_ids``: one parameter however many ids."""

    def in_strings(self, column: str, name: str) -> str:
        """As ``in_ids`` for strings (bind ``string_list(values)``)."""

    def string_list(self, values: Iterable[str]) -> Any:
        """The bound value for ``in_strings``."""

    def in_pairs(
        self, columns: tuple[str, str], pairs: Sequence[tuple[int, int]]
    ) -> tuple[str, dict[str, Any]]:
        """``(a, b) IN`` these integer pairs, with its parameters."""

    def json_text(self, column: str, *path: str) -> str:
        """The text at ``path`` in a JSON column (``metadata`` → ``$.origin.type``)."""

    def json_array_elements(self, alias: str, column: str, *path: str) -> str:
        """A FROM item ``alias`` over the texts of the JSON array at ``path`` in ``column``
        (the whole value without a path); its column is ``alias.value``."""

    def json_set(self, column: str, values: Mapping[tuple[str, ...], str]) -> str:
        """``column`` (a JSON object) with each path set to a SQL expression's value."""

    def serialize(self, conn: Connection, key: str) -> None:
        """Hold writers of ``key`` one at a time until this transaction ends."""

    def index_text(self, conn: Connection, chunk_ids: Sequence[int]) -> bool:
        """(Re)index the lexical rows of these chunks from their stored text, where the
        database does not do it itself; whether the stored entries of the frequent terms
        must be forgotten (a chunk indexed again in place)."""

    def lexical_averages(self, conn: Connection) -> Averages:
        """The rows and tokens BM25 counts now."""

    def entry_bodies(self, conn: Connection, stems: list[str]) -> list[tuple[str, int, bytes]]:
        """(stem, upto, body) of each of these stems' stored entries (term_postings)."""

    def vector_tables(self, conn: Connection) -> int:
        """How many of ``vec.page_vecs`` and ``vec.page_vecs_meta`` exist."""

    def create_vectors(self, conn: Connection, dim: int) -> None:
        """Create ``vec.page_vecs`` (and its meta table) for vectors of ``dim``."""

    def put_vectors(
        self, conn: Connection, rows: Sequence[tuple[int, npt.NDArray[np.float32]]]
    ) -> None:
        """Store (or replace) these chunks' vectors."""


class Database(Protocol):
    """An open library: ``read()`` and ``write()`` open transactions."""

    #: "sqlite" or "postgresql": for what is shown to people (logs, reports).
    name: str
    engine: Engine

    @property
    def dialect(self) -> Dialect:
        """The SQL of this database."""

    def write(self) -> AbstractContextManager[Connection]:
        """A short write transaction; commits on exit."""

    def read(self) -> AbstractContextManager[Connection]:
        """A read transaction: one consistent snapshot."""

    def dispose(self) -> None:
        """Close every pooled connection."""

    def migration_lock(self) -> AbstractContextManager[None]:
        """Held while the schema is migrated: one process migrates a library at a time."""

    def repair(self) -> None:
        """Make good what an interrupted bulk load left (indexes it dropped)."""

    def bulk_load(
        self, memory: str | None = None, progress: BulkProgress | None = None
    ) -> AbstractContextManager[None]:
        """Around a load of many rows: what is costly to keep up row by row is built once at
        the end (with ``memory`` for the build; ``progress(index, built, of)``)."""

    def settle(self) -> None:
        """After a bulk load: give the planner its statistics now."""

    def postings(self) -> AbstractContextManager[PostingsSource]:
        """The lexical postings as of a point below which every chunk is committed."""

    def describe(self) -> str:
        """The database and its extensions, with their versions (``quire doctor``)."""
