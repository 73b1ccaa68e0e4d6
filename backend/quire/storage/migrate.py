"""Opening a library: the Database, migrated by the Alembic migrations in ``migrations/``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config

from quire.storage.db import Database

MIGRATIONS_DIR = Path(__file__).resolve().parents[3] / "migrations"


def _config(db: Database) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    return cfg


def upgrade(db: Database, revision: str = "head") -> None:
    """Bring the schema to ``revision``; a no-op when it is there already."""
    cfg = _config(db)
    with db.engine.connect().execution_options(write=True) as conn:
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


def open_database(settings: Any) -> Database:
    """Open (and migrate) the database described by ``settings``."""
    db = Database(settings.db_path, settings.vec_db_path)
    upgrade(db)
    return db
