"""``quire notes``: the highlights and notes of the library, listed or exported as Markdown
(storage/notes.py, docs/using/notes.md).

On a library with people a note is its author's unless shared, so these commands read as one
person (``--as NAME``): their own notes and the team's shared ones, never another person's
private ones. On a library without people they read every note.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
from rich.table import Table

from quire.cli.common import console, fail, settings
from quire.errors import InputError, QuireError
from quire.storage import access, documents, notes, people
from quire.storage.db import Database
from quire.storage.migrate import open_database
from quire.synthesis import citation_style, note_export

_AS = click.option(
    "--as", "as_user", metavar="NAME", help="Read as this person (needed once there are people)."
)


@contextmanager
def _reading(as_user: str | None) -> Iterator[Database]:
    db = open_database(settings())
    try:
        with db.read() as conn:
            if as_user is not None:
                user = people.get_user(conn, as_user)
                reader = access.Reader(user.id, user.name, user.admin)
            elif people.exist(conn):
                raise InputError("this library has people: say whose notes (--as NAME)")
            else:
                reader = access.EVERYONE
        with access.reading_as(reader):
            yield db
    except QuireError as exc:
        fail(exc)
    finally:
        db.dispose()


@click.group("notes")
def notes_group() -> None:
    """Your highlights and notes: list them, export them as Markdown."""


@notes_group.command("list")
@click.option("--document", "document_id", type=int, help="Only the notes on this document.")
@click.option("--tag", help="Only notes with this tag.")
@click.option("--text", help="Only notes with these words (quote, text or tags).")
@_AS
def list_cmd(
    document_id: int | None, tag: str | None, text: str | None, as_user: str | None
) -> None:
    """The notes you may read, by document and page."""
    with _reading(as_user) as db, db.read() as conn:
        found, total = notes.list_notes(
            conn, notes.NoteFilter(document_id=document_id, tag=tag, q=text), limit=10_000
        )
    table = Table("id", "where", "quote", "note", "tags")
    for n in found:
        where = f"{n['document_title'] or 'saved answer'}, {n['place']}"
        table.add_row(str(n["id"]), where, n["quote"][:60], n["body"][:60], " ".join(n["tags"]))
    console.print(table)
    console.print(f"{total} note{'s' if total != 1 else ''}")


@notes_group.command("export")
@click.argument("document_ids", type=int, nargs=-1, required=True)
@click.option(
    "-o", "--out", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
    show_default=True, help="The folder to write one Markdown file per document into.",
)  # fmt: skip
@click.option("--base-url", default="", help="The web app's address, for the links back.")
@click.option(
    "--style", default=citation_style.QUIRE, show_default=True,
    help="The citation style: quire (Quire's own) or a CSL style's name (`quire notes styles`).",
)  # fmt: skip
@_AS
def export_cmd(
    document_ids: tuple[int, ...], out: Path, base_url: str, style: str, as_user: str | None
) -> None:
    """Each document's notes as one Markdown file (Obsidian-friendly front matter), each
    highlight cited in the chosen style."""
    try:
        style = citation_style.check(style)
    except QuireError as exc:
        fail(exc)
    out.mkdir(parents=True, exist_ok=True)
    with _reading(as_user) as db, db.read() as conn:
        for document_id in document_ids:
            try:
                doc = documents.get_document(conn, document_id)
            except QuireError as exc:
                fail(exc)
            found, _ = notes.list_notes(conn, notes.NoteFilter(document_id), limit=100_000)
            path = out / note_export.filename(doc["title"] or doc["filename"], document_id)
            text = note_export.render(doc, found, base_url=base_url, style=style)
            path.write_text(text, encoding="utf-8")
            click.echo(f"{path}  ({len(found)} note{'s' if len(found) != 1 else ''})")


@notes_group.command("styles")
@click.argument("words", nargs=-1)
@click.option("--limit", default=50, show_default=True, help="List at most this many.")
def styles_cmd(words: tuple[str, ...], limit: int) -> None:
    """The citation styles `quire notes export --style` takes (those with WORDS in the name)."""
    found, total = citation_style.names(" ".join(words), limit)
    table = Table("style", "title")
    for s in found:
        table.add_row(s.name, s.title)
    console.print(table)
    console.print(
        f"{total} style{'s' if total != 1 else ''}"
        + (f", {len(found)} shown" if total > len(found) else "")
    )
