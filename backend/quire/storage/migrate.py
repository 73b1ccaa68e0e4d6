"""Opening a library: the Database, migrated by the Alembic migrations in ``quire/migrations/``
(package data: they ship in the wheel)."""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic import command, op
from alembic.config import Config
from pydantic import SecretStr
from sqlalchemy import create_engine, make_url

from quire.storage.backends.postgres import PostgresDatabase
from quire.storage.backends.sqlite import SqliteDatabase
from quire.storage.db import Database, dialect

MIGRATIONS_DIR = Path(__file__).resolve().parents[1] / "migrations"

log = logging.getLogger(__name__)


def _config(db: Database) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    return cfg


def upgrade(db: Database, revision: str = "head") -> None:
    """Bring the schema to ``revision``; a no-op when it is there already. One process
    migrates a library at a time (``migration_lock``): Alembic reads the version once, then
    commits each revision on its own, so two processes starting together on a fresh library
    (the API and a worker) would both apply 0001 and clash."""
    cfg = _config(db)
    with db.migration_lock(), db.engine.connect().execution_options(write=True) as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)
        conn.commit()


def downgrade(db: Database, revision: str) -> None:
    """Step the schema back to ``revision`` (used by the migration tests)."""
    cfg = _config(db)
    with db.engine.connect().execution_options(write=True) as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, revision)
        conn.commit()


def rewrite_table_sql(conn: sa.Connection, table: str, old: str, new: str) -> None:
    """Edit a table's CHECK in place: replace ``old`` by ``new`` in its SQL in
    ``sqlite_schema`` (under ``writable_schema``, ``schema_version`` bumped so that every open
    connection re-reads it). For a CHECK that admits more values, the case SQLite's ALTER TABLE
    documentation allows: rows, indexes and triggers are untouched, where the usual recreate
    would cascade deletes through the foreign keys (migrations 0006 and 0008)."""
    sql = conn.exec_driver_sql(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
    ).scalar()
    if sql is None or old not in sql:
        if sql is not None and new in sql:
            return  # already there
        raise RuntimeError(f"{table} has no CHECK ({old}); not rewriting its schema")
    version = int(conn.exec_driver_sql("PRAGMA schema_version").scalar() or 0)
    conn.exec_driver_sql("PRAGMA writable_schema = ON")
    try:
        conn.execute(
            sa.text("UPDATE sqlite_master SET sql = :sql WHERE type = 'table' AND name = :t"),
            {"sql": sql.replace(old, new), "t": table},
        )
        conn.exec_driver_sql(f"PRAGMA schema_version = {version + 1}")
    finally:
        conn.exec_driver_sql("PRAGMA writable_schema = OFF")
    check = conn.exec_driver_sql("PRAGMA integrity_check").scalar()
    if check != "ok":
        raise RuntimeError(f"integrity check after the CHECK rewrite: {check}")


def _kinds_check(kinds: tuple[str, ...], sep: str) -> str:
    return f"kind IN ({sep.join(repr(k) for k in kinds)})"


def _set_document_kinds(old: tuple[str, ...], new: tuple[str, ...]) -> None:
    """``documents.kind``'s CHECK from ``old`` to ``new``: edited in place on SQLite
    (``rewrite_table_sql``), dropped and added again on PostgreSQL (which checks the rows)."""
    if applies_to("sqlite"):
        rewrite_table_sql(
            op.get_bind(), "documents", _kinds_check(old, ","), _kinds_check(new, ",")
        )
    else:
        op.execute("ALTER TABLE documents DROP CONSTRAINT ck_documents_kind")
        op.execute(
            "ALTER TABLE documents ADD CONSTRAINT ck_documents_kind "
            f"CHECK ({_kinds_check(new, ', ')})"
        )


def add_document_kinds(before: tuple[str, ...], added: tuple[str, ...]) -> None:
    """A revision's upgrade that admits the kinds ``added`` beside ``before`` (0017, 0018)."""
    _set_document_kinds(before, before + added)


def remove_document_kinds(before: tuple[str, ...], added: tuple[str, ...]) -> None:
    """Its downgrade: the old schema has no place for documents of the ``added`` kinds (their
    pages, chunks and jobs cascade), then the CHECK admits ``before`` only."""
    op.execute(f"DELETE FROM documents WHERE {_kinds_check(added, ', ')}")
    _set_document_kinds(before + added, before)


def applies_to(backend: str) -> bool:
    """Whether the revision being applied is for this library's database ("sqlite" or
    "postgresql"): a revision for one only starts ``if not applies_to(...): return``. The
    revisions before 0013 are SQLite's history; a PostgreSQL library starts at 0013, which
    creates the whole schema there (and nothing on SQLite); later ones are for both unless
    they say so."""
    return dialect(op.get_bind()).name == backend


def scratch_library(settings: Any, data_dir: Path, *, fresh: bool = False) -> tuple[Any, bool]:
    """``settings`` for a scratch library kept in ``data_dir`` (the evaluations' cached
    indexes), and whether its database is new. On SQLite the files are in that directory; on
    PostgreSQL it is a database of its own on the same server, named after the directory
    (created when missing, dropped and created again when ``fresh``), never the library's."""
    scratch = settings.model_copy(update={"data_dir": data_dir, "originals_dir": None})
    if settings.database_url is None:
        return scratch, not (data_dir / "quire.db").exists()
    url = make_url(settings.database_url.get_secret_value())
    name = "quire_scratch_" + hashlib.sha256(str(data_dir).encode()).hexdigest()[:16]
    admin = create_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            if fresh:
                conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            exists = conn.execute(
                sa.text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": name}
            ).first()
            if not exists:
                conn.exec_driver_sql(f"CREATE DATABASE {name}")
    finally:
        admin.dispose()
    target = url.set(database=name).render_as_string(hide_password=False)
    return scratch.model_copy(update={"database_url": SecretStr(target)}), not exists


def open_database(settings: Any) -> Database:
    """Open (and migrate) the database described by ``settings``: SQLite files under its data
    directory, or PostgreSQL at ``database_url``."""
    db: Database
    if settings.database_url is not None:
        db = PostgresDatabase(settings.database_url.get_secret_value())
    else:
        db = SqliteDatabase(settings.db_path, settings.vec_db_path)
    upgrade(db)
    db.repair()
    return db
