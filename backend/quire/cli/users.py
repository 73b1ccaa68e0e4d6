"""``quire users``: the people of a team library and their API tokens (storage/people.py).

Adding the first person turns sign-in on: from then every request needs a person's token
(or QUIRE_API_TOKEN, which then reads the team's documents only).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import click
from rich.table import Table
from sqlalchemy import Connection

from quire.cli.common import console, fail, settings
from quire.errors import QuireError
from quire.storage import people
from quire.storage.migrate import open_database


@contextmanager
def _library() -> Iterator[Connection]:
    db = open_database(settings())
    try:
        with db.write() as conn:
            yield conn
    except QuireError as exc:
        fail(exc)
    finally:
        db.dispose()


def _show_token(user: str, token: str) -> None:
    console.print(f"API token for [bold]{user}[/] (shown once; keep it secret):")
    click.echo(token)  # plain, uncoloured, on a line of its own: easy to copy or pipe


@click.group("users")
def users_group() -> None:
    """People of a team library and their API tokens."""


@users_group.command("add")
@click.argument("name")
@click.option("--admin", is_flag=True, help="May change any team document and run the sync.")
@click.option("--no-token", is_flag=True, help="Do not issue a first token now.")
def add(name: str, admin: bool, no_token: bool) -> None:
    """Add a person (and issue their first token)."""
    with _library() as conn:
        first = not people.exist(conn)
        user = people.add_user(conn, name, admin=admin)
        token = None if no_token else people.issue_token(conn, user.name, "first")[1]
    console.print(f"added {user.name}{' (admin)' if admin else ''}")
    if first:
        console.print(
            "[yellow]This library now has people: every request needs a person's token "
            "(or QUIRE_API_TOKEN, which reads the team's documents only).[/]"
        )
    if token:
        _show_token(user.name, token)


@users_group.command("list")
def list_users() -> None:
    """The people, with their live token counts."""
    with _library() as conn:
        rows = people.list_users(conn)
    table = Table("name", "admin", "live tokens", "added")
    for u in rows:
        table.add_row(u.name, "yes" if u.admin else "", str(u.tokens), f"{u.created_at:%Y-%m-%d}")
    console.print(table if rows else "no people: a one-person library (no sign-in)")


@users_group.command("token")
@click.argument("name")
@click.option("--label", default="", help="What the token is for (a laptop, a script).")
def token(name: str, label: str) -> None:
    """Issue a new token for NAME."""
    with _library() as conn:
        record, value = people.issue_token(conn, name, label)
    _show_token(record.user, value)


@users_group.command("tokens")
@click.argument("name", required=False)
def tokens(name: str | None) -> None:
    """Tokens (of NAME, or everyone's): id, prefix, label, when issued and revoked."""
    with _library() as conn:
        rows = people.list_tokens(conn, name)
    table = Table("id", "user", "token", "label", "issued", "revoked")
    for t in rows:
        table.add_row(
            str(t.id),
            t.user,
            f"{t.prefix}…",
            t.label,
            f"{t.created_at:%Y-%m-%d %H:%M}",
            f"{t.revoked_at:%Y-%m-%d %H:%M}" if t.revoked_at else "",
        )
    console.print(table)


@users_group.command("revoke")
@click.argument("token_id", type=int)
def revoke(token_id: int) -> None:
    """Revoke token TOKEN_ID (from `quire users tokens`): refused from now on, even by an
    answer streaming with it."""
    with _library() as conn:
        record = people.revoke(conn, token_id)
    console.print(f"revoked token {record.id} ({record.prefix}…) of {record.user}")
