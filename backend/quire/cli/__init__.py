"""The ``quire`` command: one module per command group, each thin (parse, call, print).

library.py   ingest, docs, rm, worker        search.py    search
chat.py      ask, repl                       evaluate.py  eval
serve.py     serve                           doctor.py    doctor
backup.py    backup, restore, compact        sources/perplexity.py  perplexity login|sync|…
models.py    models status|pull          mcp.py       mcp
watch.py     watch                           imports.py   import chatgpt|claude
postgres.py  migrate-to-postgres              users.py     users add|list|token|tokens|revoke
common.py    consoles, settings, errors, running ingest jobs with progress
"""

from __future__ import annotations

import click

from quire import __version__
from quire.cli.backup import backup, compact, restore
from quire.cli.chat import ask, repl
from quire.cli.doctor import doctor
from quire.cli.evaluate import evaluate
from quire.cli.imports import import_group
from quire.cli.library import docs, ingest, rm, worker
from quire.cli.mcp import mcp
from quire.cli.models import models_group
from quire.cli.perplexity import perplexity_group
from quire.cli.postgres import migrate_to_postgres
from quire.cli.search import search
from quire.cli.serve import serve
from quire.cli.users import users_group
from quire.cli.watch import watch


@click.group()
@click.version_option(__version__, prog_name="quire")
def main() -> None:
    """Quire: a self-hosted research memory. Data directory: $QUIRE_DATA_DIR (default ./data)."""


for command in (
    ingest,
    docs,
    rm,
    worker,
    serve,
    search,
    ask,
    repl,
    doctor,
    evaluate,
    perplexity_group,
    backup,
    restore,
    compact,
    mcp,
    models_group,
    watch,
    import_group,
    migrate_to_postgres,
    users_group,
):
    main.add_command(command)
