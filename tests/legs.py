"""The search legs of a connection's database, without caches, for tests that compare the
two backends leg by leg (the Searcher chooses them once: retrieval/legs.py)."""

from __future__ import annotations

from sqlalchemy import Connection

from quire.retrieval.exact import ExactLeg, PgTrgmExact, TrigramExact
from quire.retrieval.lexical import LexicalLeg
from quire.retrieval.lexical.fts5 import Fts5Lexical
from quire.retrieval.lexical.postgres import PostgresLexical


def lexical(conn: Connection) -> LexicalLeg:
    return PostgresLexical() if conn.dialect.name == "postgresql" else Fts5Lexical()


def exact(conn: Connection) -> ExactLeg:
    return PgTrgmExact() if conn.dialect.name == "postgresql" else TrigramExact()
