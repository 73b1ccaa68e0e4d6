"""The team library: the same tables in PostgreSQL, the vectors in its schema ``vec``
(pgvector, HNSW for cosine distance), BM25 rows kept beside the chunks (pg_postings.py) and
pg_trgm for the exact leg (docs: running it → team library).

Writes are READ COMMITTED transactions (the job claim locks its row with ``FOR UPDATE SKIP
LOCKED``, unique constraints and advisory locks settle the rest); a read is one REPEATABLE
READ snapshot, as a SQLite read transaction is. ``pool_pre_ping`` replaces a connection the
server dropped (a restart) instead of failing the next request with it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, Engine, create_engine, text

from quire.storage.backends import pg_bulk, pg_postings
from quire.storage.backends.base import Averages, BulkProgress
from quire.storage.backends.pg_postings import binary_rows

#: pgvector's HNSW index for cosine distance (migration 0013; pg_bulk builds it once after a
#: bulk load).
HNSW_INDEX_SQL = pg_bulk.HNSW_INDEX_SQL


def pgvector_literal(vec: Any) -> str:
    """pgvector's text form of a vector: shortest float32 round-trip digits."""
    values = np.asarray(vec, dtype=np.float32)
    return "[" + ",".join(str(x) for x in values) + "]"


class PostgresDialect:
    name = "postgresql"
    join_by_ids = "JOIN"
    skip_locked = " FOR UPDATE SKIP LOCKED"
    json_object = "json_build_object"
    vector_key = "chunk_id"

    def in_ids(self, column: str, name: str) -> str:
        return f"{column} = ANY(CAST(:{name} AS bigint[]))"

    def id_list(self, ids: Iterable[int]) -> list[int]:
        return [int(i) for i in ids]

    def in_strings(self, column: str, name: str) -> str:
        return f"{column} = ANY(CAST(:{name} AS text[]))"

    def string_list(self, values: Iterable[str]) -> list[str]:
        return list(values)

    def in_pairs(
        self, columns: tuple[str, str], pairs: Sequence[tuple[int, int]]
    ) -> tuple[str, dict[str, Any]]:
        a, b = columns
        return (
            f"({a}, {b}) IN (SELECT * FROM unnest(CAST(:pair_a AS bigint[]), "
            "CAST(:pair_b AS integer[])))",
            {"pair_a": [p[0] for p in pairs], "pair_b": [p[1] for p in pairs]},
        )

    def json_text(self, column: str, *path: str) -> str:
        return f"({column}::jsonb #>> '{{{','.join(path)}}}')"

    def json_array_elements(self, alias: str, column: str, *path: str) -> str:
        at = f"{column}::jsonb #> '{{{','.join(path)}}}'" if path else f"{column}::jsonb"
        return (
            f"jsonb_array_elements_text(CASE WHEN jsonb_typeof({at}) = 'array' THEN {at} "
            f"ELSE '[]'::jsonb END) AS {alias}(value)"
        )

    def json_set(self, column: str, values: Mapping[tuple[str, ...], str]) -> str:
        value = f"{column}::jsonb"
        for path, expr in values.items():
            value = f"jsonb_set({value}, '{{{','.join(path)}}}', to_jsonb({expr}))"
        return f"CAST({value} AS json)"

    def serialize(self, conn: Connection, key: str) -> None:
        # READ COMMITTED: two writers could both find no row and both insert one.
        conn.execute(text("SELECT pg_advisory_xact_lock(hashtext(:k))"), {"k": key})

    def index_text(self, conn: Connection, chunk_ids: Sequence[int]) -> bool:
        return pg_postings.index(conn, chunk_ids)

    def lexical_averages(self, conn: Connection) -> Averages:
        return pg_postings.totals(conn).averages()

    def entry_bodies(self, conn: Connection, stems: list[str]) -> list[tuple[str, int, bytes]]:
        rows = binary_rows(
            conn, "SELECT term, upto, body FROM term_postings WHERE term = ANY(%(s)s)", {"s": stems}
        )
        return [(str(t), int(u), bytes(b)) for t, u, b in rows]

    def vector_tables(self, conn: Connection) -> int:
        return int(
            conn.exec_driver_sql(
                "SELECT (to_regclass('vec.page_vecs') IS NOT NULL)::int "
                "+ (to_regclass('vec.page_vecs_meta') IS NOT NULL)::int"
            ).scalar_one()
        )

    def create_vectors(self, conn: Connection, dim: int) -> None:
        conn.exec_driver_sql(
            "CREATE TABLE IF NOT EXISTS vec.page_vecs (chunk_id bigint PRIMARY KEY "
            "REFERENCES page_chunks (id) ON DELETE CASCADE, "
            f"embedding vector({int(dim)}) NOT NULL)"
        )
        conn.exec_driver_sql(HNSW_INDEX_SQL)

    def put_vectors(
        self, conn: Connection, rows: Sequence[tuple[int, npt.NDArray[np.float32]]]
    ) -> None:
        if not rows:
            return
        conn.execute(
            text(
                "INSERT INTO vec.page_vecs (chunk_id, embedding) "
                "VALUES (:id, CAST(:v AS vector)) "
                "ON CONFLICT (chunk_id) DO UPDATE SET embedding = excluded.embedding"
            ),
            [{"id": cid, "v": pgvector_literal(vec)} for cid, vec in rows],
        )


DIALECT = PostgresDialect()


class PostgresDatabase:
    """The library in PostgreSQL: one database, the vectors in its schema ``vec``."""

    name = "postgresql"
    dialect = DIALECT

    def __init__(self, url: str, *, pool_size: int = 8) -> None:
        self.url = url
        self.engine: Engine = create_engine(
            url,
            pool_size=pool_size,
            max_overflow=pool_size,
            pool_pre_ping=True,
            connect_args={"connect_timeout": 10, "application_name": "quire"},
        )

    @contextmanager
    def write(self) -> Iterator[Connection]:
        with self.engine.connect() as conn, conn.begin():
            yield conn

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with (
            self.engine.connect().execution_options(isolation_level="REPEATABLE READ") as conn,
            conn.begin(),
        ):
            yield conn

    def dispose(self) -> None:
        self.engine.dispose()

    @contextmanager
    def migration_lock(self) -> Iterator[None]:
        """A session advisory lock: one process migrates the library at a time."""
        with self.engine.connect() as conn:
            conn.exec_driver_sql("SELECT pg_advisory_lock(hashtext('quire.migrate'))")
            conn.commit()
            try:
                yield
            finally:
                conn.exec_driver_sql("SELECT pg_advisory_unlock(hashtext('quire.migrate'))")
                conn.commit()

    def repair(self) -> None:
        pg_bulk.repair(self)

    @contextmanager
    def bulk_load(
        self, memory: str | None = None, progress: BulkProgress | None = None
    ) -> Iterator[None]:
        with pg_bulk.loading(self, memory or pg_bulk.BUILD_MEMORY, progress):
            yield

    def settle(self) -> None:
        pg_postings.settle(self)

    @contextmanager
    def postings(self) -> Iterator[pg_postings.TableSource]:
        with pg_postings.committed(self) as source:
            yield source

    def describe(self) -> str:
        with self.read() as conn:
            v = conn.exec_driver_sql(
                "SELECT current_setting('server_version'), (SELECT string_agg(extname || ' ' "
                "|| extversion, ', ' ORDER BY extname) FROM pg_extension "
                "WHERE extname IN ('vector', 'pg_trgm'))"
            ).one()
        return f"PostgreSQL {v[0]} ({v[1]})"
