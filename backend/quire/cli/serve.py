"""``quire serve``: the API server."""

from __future__ import annotations

import sys

import click
import uvicorn

from quire.api.auth import BindRefused, check_bind
from quire.app import create_app
from quire.cli.common import settings
from quire.config import Settings
from quire.storage import people
from quire.storage.migrate import open_database


def migrate_and_check_bind(config: Settings, host: str, command: str) -> None:
    """Migrate the library, then refuse (exit 2) a bind that needs a token and has none."""
    db = open_database(config)
    try:
        with db.read() as conn:
            has_people = people.exist(conn)
    finally:
        db.dispose()
    try:
        check_bind(host, config, people=has_people)
    except BindRefused as exc:
        click.echo(f"quire {command}: {exc}", err=True)
        sys.exit(2)


@click.command()
@click.option("--host", default=None, help="Bind address (default QUIRE_HOST, 127.0.0.1).")
@click.option("--port", default=None, type=int, help="Port (default QUIRE_PORT, 8000).")
def serve(host: str | None, port: int | None) -> None:
    """Run the API server."""
    config = settings()
    host = host or config.host
    migrate_and_check_bind(config, host, "serve")
    uvicorn.run(
        create_app(config),
        host=host,
        port=port or config.port,
        log_level=config.log_level.lower(),
        timeout_graceful_shutdown=5,
    )
