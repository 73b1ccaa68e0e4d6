"""Alembic environment: runs on the connection Quire hands over (sqlite-vec loaded)."""

from __future__ import annotations

from alembic import context

from quire.storage.schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError(
        "Run migrations through `quire.storage.migrate.upgrade`, not the alembic CLI."
    )

context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=True,
    transaction_per_migration=True,
)
with context.begin_transaction():
    context.run_migrations()
