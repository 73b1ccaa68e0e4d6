"""The people of a team library and their API tokens (``quire users``, storage/access.py).

A token is 32 random bytes (``secrets.token_urlsafe``) after a ``qt_`` prefix; only its SHA-256
is stored, with its first characters to tell tokens apart in a listing. A revoked token stays
listed with its revocation time and is refused from then on, mid-stream included
(api/auth.py checks again while an answer streams).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, func, insert, select, update

from quire.errors import Conflict, InputError, NotFound
from quire.storage.access import Reader
from quire.storage.schema import api_tokens, users, utcnow

TOKEN_PREFIX = "qt_"
_SHOWN = 10  # characters of a token kept in the clear: "qt_" and 7 more


@dataclass(frozen=True)
class User:
    id: int
    name: str
    admin: bool
    created_at: datetime
    tokens: int  # live (not revoked) tokens


@dataclass(frozen=True)
class Token:
    id: int
    user: str
    prefix: str
    label: str
    created_at: datetime
    revoked_at: datetime | None


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def exist(conn: Connection) -> bool:
    """Whether the library has people (then every request needs a token)."""
    return conn.execute(select(users.c.id).limit(1)).first() is not None


def _clean_name(name: str) -> str:
    name = name.strip()
    if not name or len(name) > 64 or any(c.isspace() or not c.isprintable() for c in name):
        raise InputError(f"a user name is 1-64 printable characters without spaces: {name!r}")
    return name


def add_user(conn: Connection, name: str, *, admin: bool = False) -> User:
    name = _clean_name(name)
    if conn.execute(select(users.c.id).where(users.c.name == name)).first() is not None:
        raise Conflict(f"user {name!r} already exists")
    now = utcnow()
    uid = conn.execute(
        insert(users).values(name=name, admin=admin, created_at=now).returning(users.c.id)
    ).scalar_one()
    return User(int(uid), name, admin, now, 0)


def get_user(conn: Connection, name: str) -> User:
    live = (
        select(func.count())
        .where(api_tokens.c.user_id == users.c.id, api_tokens.c.revoked_at.is_(None))
        .scalar_subquery()
    )
    row = conn.execute(
        select(users, live.label("tokens")).where(users.c.name == name.strip())
    ).first()
    if row is None:
        raise NotFound(f"no user {name!r} (quire users list)")
    return User(int(row.id), row.name, bool(row.admin), row.created_at, int(row.tokens))


def list_users(conn: Connection) -> list[User]:
    names = conn.execute(select(users.c.name).order_by(users.c.name)).scalars().all()
    return [get_user(conn, n) for n in names]


def issue_token(conn: Connection, name: str, label: str = "") -> tuple[Token, str]:
    """A new token for user ``name``: its record and the token itself (shown once)."""
    user = get_user(conn, name)
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    now = utcnow()
    tid = conn.execute(
        insert(api_tokens)
        .values(
            user_id=user.id,
            token_hash=token_hash(token),
            prefix=token[:_SHOWN],
            label=label.strip()[:200],
            created_at=now,
        )
        .returning(api_tokens.c.id)
    ).scalar_one()
    return Token(int(tid), user.name, token[:_SHOWN], label.strip()[:200], now, None), token


def list_tokens(conn: Connection, name: str | None = None) -> list[Token]:
    q = (
        select(api_tokens, users.c.name)
        .join(users, users.c.id == api_tokens.c.user_id)
        .order_by(api_tokens.c.id)
    )
    if name is not None:
        q = q.where(users.c.id == get_user(conn, name).id)
    return [
        Token(int(r.id), r.name, r.prefix, r.label, r.created_at, r.revoked_at)
        for r in conn.execute(q)
    ]


def revoke(conn: Connection, token_id: int) -> Token:
    """Revoke one token (by its id in ``quire users tokens``); revoking twice is a no-op."""
    conn.execute(
        update(api_tokens)
        .where(api_tokens.c.id == token_id, api_tokens.c.revoked_at.is_(None))
        .values(revoked_at=utcnow())
    )
    for t in list_tokens(conn):
        if t.id == token_id:
            return t
    raise NotFound(f"no token {token_id} (quire users tokens)")


def reader_for(conn: Connection, token: str) -> Reader | None:
    """The person a live token belongs to, or None."""
    row = conn.execute(
        select(api_tokens.c.id, users.c.id.label("uid"), users.c.name, users.c.admin)
        .join(users, users.c.id == api_tokens.c.user_id)
        .where(api_tokens.c.token_hash == token_hash(token), api_tokens.c.revoked_at.is_(None))
    ).first()
    if row is None:
        return None
    return Reader(int(row.uid), row.name, bool(row.admin), int(row.id))


def token_live(conn: Connection, token_id: int) -> bool:
    return (
        conn.execute(
            select(api_tokens.c.id).where(
                api_tokens.c.id == token_id, api_tokens.c.revoked_at.is_(None)
            )
        ).first()
        is not None
    )
