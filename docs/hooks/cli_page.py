"""The command line reference, generated from the click commands of ``quire.cli.main``."""

from __future__ import annotations

import inspect

import click

INTRO = """\
# Command line reference

Generated from the `quire` command itself when the site is built, so it is what `quire --help`
says. Every command reads its settings from `QUIRE_*` environment variables
([Configuration](../running/configuration.md)); `make run` puts the command in `.venv/bin/quire`.
"""


def help_text(command: click.Command) -> str:
    """A command's help as markdown paragraphs (click's ``\\f`` cut and ``\\b`` marks honoured)."""
    text = inspect.cleandoc(command.help or command.short_help or "")
    text = text.split("\f", 1)[0]
    paragraphs = []
    for block in text.split("\n\n"):
        lines = [line for line in block.splitlines() if line.strip() != "\b"]
        if block.lstrip().startswith("\b"):
            paragraphs.append("\n".join(f"    {line}" for line in lines))
        else:
            paragraphs.append(" ".join(line.strip() for line in lines))
    return "\n\n".join(p for p in paragraphs if p.strip())


def cell(text: str) -> str:
    """Text safe inside a markdown table cell: ``|`` escaped outside code spans (Python-Markdown
    keeps a code span's ``|`` and would show the backslash), ``<`` as an entity."""
    parts = text.replace("\n", " ").split("`")
    for i in range(0, len(parts), 2):  # the even parts are outside code spans
        parts[i] = parts[i].replace("|", "\\|").replace("<", "&lt;")
    return "`".join(parts).strip()


def options_table(command: click.Command, ctx: click.Context) -> list[str]:
    """One row per option (``--help`` left out: every command has it)."""
    rows = []
    for param in command.get_params(ctx):
        if not isinstance(param, click.Option) or param.name == "help":
            continue
        record = param.get_help_record(ctx)
        if record is None:  # a hidden option
            continue
        flags, description = record
        rows.append(f"| {cell(f'`{flags}`')} | {cell(description)} |")
    if not rows:
        return []
    return ["| option | what it does |", "| --- | --- |", *rows, ""]


def command_section(command: click.Command, path: list[str], parent: click.Context | None) -> str:
    """A command's heading, usage, help and options; a group's subcommands follow it."""
    ctx = click.Context(command, info_name=path[-1], parent=parent)
    usage = " ".join([*path, *command.collect_usage_pieces(ctx)])
    level = "#" * min(len(path), 4)
    lines = [f"{level}# `{' '.join(path)}`", "", "```", usage, "```", "", help_text(command), ""]
    lines += options_table(command, ctx)
    if isinstance(command, click.Group):
        context = ctx or click.Context(command)
        for name in command.list_commands(context):  # in the order they were added
            sub = command.get_command(context, name)
            if sub is not None and not sub.hidden:
                lines.append(command_section(sub, [*path, sub.name or ""], ctx))
    return "\n".join(lines)


def render() -> str:
    """The whole page: the top-level group, then every command in registration order."""
    from quire.cli import main

    return INTRO + "\n" + command_section(main, ["quire"], None)
