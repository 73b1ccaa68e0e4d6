"""The ``quire`` command: one module per command group, each thin (parse, call, print).

library.py   add (ingest), docs, rm, worker  search.py    search
chat.py      ask, repl                       evaluate.py  eval
serve.py     serve                           doctor.py    doctor
up.py        up (API + web app + workers + watcher)
backup.py    backup, restore, compact        sources/perplexity.py  perplexity login|sync|…
models.py    models status|pull          mcp.py       mcp
watch.py     watch                           imports.py   import chatgpt|claude
postgres.py  migrate-to-postgres              users.py     users add|list|token|tokens|revoke
common.py    consoles, settings, errors, running ingest jobs with progress
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from quire import __version__

#: Each command, and where it lives: imported only when it runs (or for ``--help``). Importing
#: them all took 2.1 s before any command started, most of it the MCP SDK and the ingest
#: worker that ``quire docs`` never needs (click's "lazily loading subcommands" pattern).
COMMANDS = {
    "add": "quire.cli.library:add",
    "ingest": "quire.cli.library:ingest",
    "docs": "quire.cli.library:docs",
    "rm": "quire.cli.library:rm",
    "worker": "quire.cli.library:worker",
    "serve": "quire.cli.serve:serve",
    "up": "quire.cli.up:up",
    "search": "quire.cli.search:search",
    "ask": "quire.cli.chat:ask",
    "repl": "quire.cli.chat:repl",
    "doctor": "quire.cli.doctor:doctor",
    "eval": "quire.cli.evaluate:evaluate",
    "perplexity": "quire.cli.perplexity:perplexity_group",
    "backup": "quire.cli.backup:backup",
    "restore": "quire.cli.backup:restore",
    "compact": "quire.cli.backup:compact",
    "mcp": "quire.cli.mcp:mcp",
    "models": "quire.cli.models:models_group",
    "watch": "quire.cli.watch:watch",
    "import": "quire.cli.imports:import_group",
    "migrate-to-postgres": "quire.cli.postgres:migrate_to_postgres",
    "users": "quire.cli.users:users_group",
    "notes": "quire.cli.notes:notes_group",
}


class LazyGroup(click.Group):
    """A group whose commands are imported by name when first asked for."""

    def __init__(self, *args: Any, lazy: dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*self.lazy, *(n for n in super().list_commands(ctx) if n not in self.lazy)]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.lazy:
            return super().get_command(ctx, cmd_name)
        if cmd_name not in self.commands:
            module, attr = self.lazy[cmd_name].split(":")
            command = getattr(importlib.import_module(module), attr)
            assert command.name == cmd_name, (cmd_name, command.name)
            self.add_command(command)
        return self.commands[cmd_name]


@click.group(cls=LazyGroup, lazy=COMMANDS)
@click.version_option(__version__, prog_name="quire")
def main() -> None:
    """Quire: a self-hosted research memory. Data directory: $QUIRE_DATA_DIR (default ./data)."""
