"""Who is reading: the one rule of the team library's access, applied inside every query.

A library without people (the default, one person on the loopback) is read by ``EVERYONE``:
nothing is filtered, as before. Once ``quire users add`` has made people, the API's access
middleware (api/auth.py) binds each request to the ``Reader`` its token names:

- a person reads the team's documents and their own private ones, and only their own
  conversations; they may delete or re-ingest what they own (an admin: any team document);
- the service token (``QUIRE_API_TOKEN``) reads the team's documents and the conversations
  that belong to no one.

The reader travels in a context variable, so the search legs, the chat engine and the
document routes read it where they build their SQL (``document_sql``, ``conversation_sql``)
without every signature growing a parameter. It fails closed: the API binds ``NOBODY`` for
its whole lifetime before any request, so work that somehow lost its request's context (a task
started elsewhere) reads nothing rather than everything.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from sqlalchemy import TextClause, text

from quire.errors import Forbidden, InputError
from quire.storage.records import Visibility


@dataclass(frozen=True)
class Reader:
    """Who a request reads as. ``user_id`` None with ``everything``: the one-person library;
    without: the service token (team documents only)."""

    user_id: int | None
    name: str | None = None
    admin: bool = False
    token_id: int | None = None
    everything: bool = False
    nothing: bool = False

    @property
    def person(self) -> bool:
        return self.user_id is not None


EVERYONE = Reader(None, everything=True)  # no people: the library is one person's
SERVICE = Reader(None)  # QUIRE_API_TOKEN on a library with people: the team's documents
NOBODY = Reader(None, nothing=True)  # a context no request bound: reads nothing

#: Where the API's access middleware leaves the request's reader in the ASGI scope, for code
#: that runs outside the request's context (the MCP server's session tasks).
SCOPE_KEY = "quire.reader"

_current: ContextVar[Reader] = ContextVar("quire_reader", default=EVERYONE)
_visibility: ContextVar[Visibility] = ContextVar("quire_new_visibility", default="team")


def current() -> Reader:
    return _current.get()


def bind(reader: Reader) -> None:
    """Make ``reader`` the reader of this context and of what it starts from now on."""
    _current.set(reader)


@contextlib.contextmanager
def reading_as(reader: Reader) -> Iterator[None]:
    """``reader`` for the duration of the block."""
    token = _current.set(reader)
    try:
        yield
    finally:
        _current.reset(token)


def _scoped(reader: Reader | None, *, service: str, person: str) -> tuple[str, dict[str, Any]]:
    r = reader or current()
    if r.everything:
        return "", {}
    if r.nothing:
        return "1 = 0", {}
    if r.user_id is None:
        return service, {}
    return person, {"acc_user": r.user_id}


def document_sql(doc: str, reader: Reader | None = None) -> tuple[str, dict[str, Any]]:
    """A WHERE fragment: the documents (alias ``doc``) this reader may read ("" for all)."""
    return _scoped(
        reader,
        service=f"{doc}.visibility = 'team'",
        person=f"({doc}.visibility = 'team' OR {doc}.owner_id = :acc_user)",
    )


def conversation_sql(conv: str, reader: Reader | None = None) -> tuple[str, dict[str, Any]]:
    """A WHERE fragment: the conversations (alias ``conv``) this reader may read."""
    return _scoped(
        reader, service=f"{conv}.owner_id IS NULL", person=f"{conv}.owner_id = :acc_user"
    )


def readable_documents() -> TextClause:
    """``document_sql`` as a clause for SQLAlchemy Core queries on the ``documents`` table."""
    sql, params = document_sql("documents")
    return text(sql or "1 = 1").bindparams(**params)


def where(fragment: str) -> str:
    """`` AND fragment`` or nothing."""
    return f" AND {fragment}" if fragment else ""


def can_change(owner_id: int | None, visibility: str, reader: Reader | None = None) -> bool:
    """Whether this reader may delete or re-ingest a document it can read: its owner, an
    admin (a team document), anyone on a library without people."""
    r = reader or current()
    if r.everything:
        return True
    if r.user_id is None:
        return False
    return owner_id == r.user_id or (r.admin and visibility == "team")


def check_change(owner_id: int | None, visibility: str, what: str) -> None:
    if not can_change(owner_id, visibility):
        raise Forbidden(f"only the owner of {what} or an admin may change it")


def owner_for_new() -> int | None:
    """The owner of a document or conversation made now: the person reading, else None."""
    return current().user_id


@contextlib.contextmanager
def adding(visibility: Visibility) -> Iterator[None]:
    """Documents added in this block get ``visibility`` (an upload's choice; "private" only
    for a person, who then owns them)."""
    if visibility == "private" and not current().person:
        raise InputError("a private document needs a person's token (quire users token NAME)")
    token = _visibility.set(visibility)
    try:
        yield
    finally:
        _visibility.reset(token)


def new_document() -> dict[str, Any]:
    """The owner and visibility columns of a document added now."""
    return {"owner_id": owner_for_new(), "visibility": _visibility.get()}
