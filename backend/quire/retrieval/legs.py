"""The search legs of one library, chosen once when it is opened: each is a seam with one
implementation per index the database keeps.

    legs = open_legs(db, settings)
    with db.read() as conn:
        legs.lexical.bm25(conn, "safe harbor", limit=50, flt=Filter())

| leg     | SQLite                                          | PostgreSQL                      |
| ------- | ----------------------------------------------- | ------------------------------- |
| lexical | FTS5 ``bm25()``, per-term score cache (fts5.py) | postings + stored entries       |
| dense   | in-memory mirror of vec0 (or vec0 itself)       | pgvector HNSW                   |
| exact   | FTS5 trigram index                              | pg_trgm                         |
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from quire.config import Settings
from quire.retrieval.dense import DenseLeg, MirrorDense, PgvectorDense, Vec0Dense
from quire.retrieval.dense.mirror import DenseMirror
from quire.retrieval.exact import ExactLeg, PgTrgmExact, TrigramExact
from quire.retrieval.lexical import LexicalLeg
from quire.retrieval.lexical.entries import EntryCache
from quire.retrieval.lexical.fts5 import Fts5Lexical
from quire.retrieval.lexical.postgres import PostgresLexical
from quire.retrieval.lexical.term_scores import TermScores
from quire.storage.db import Database


@dataclass
class Legs:
    lexical: LexicalLeg
    dense: DenseLeg
    exact: ExactLeg

    def close(self) -> None:
        self.lexical.close()
        self.dense.close()


def _sqlite(settings: Settings) -> Legs:
    cache = TermScores(settings.bm25_cache_mb) if settings.bm25_cache_mb else None
    dense: DenseLeg = (
        MirrorDense(DenseMirror(spill_dir=settings.data_dir))
        if settings.dense_mirror
        else Vec0Dense()
    )
    return Legs(Fts5Lexical(cache), dense, TrigramExact())


def _postgres(settings: Settings) -> Legs:
    # The frequent terms' stored entries are kept in the same budget as SQLite's term cache.
    entries = EntryCache(settings.bm25_cache_mb) if settings.bm25_cache_mb else None
    return Legs(PostgresLexical(entries), PgvectorDense(), PgTrgmExact())


_BY_DATABASE: dict[str, Callable[[Settings], Legs]] = {
    "sqlite": _sqlite,
    "postgresql": _postgres,
}


def open_legs(db: Database, settings: Settings) -> Legs:
    """The legs for ``db``'s indexes, with the caches ``settings`` asks for."""
    return _BY_DATABASE[db.name](settings)
