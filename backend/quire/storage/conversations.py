"""Conversations, their messages and the feedback on answers. Each is its owner's
(storage/access.py): a conversation another person owns does not exist for this reader."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, text

from quire.errors import InputError, NotFound
from quire.storage import access
from quire.storage.db import dialect

TITLE_CHARS = 80


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def _stamp(value: Any) -> Any:
    """A timestamp read by raw SQL as SQLite's text gives it (PostgreSQL gives a datetime)."""
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S.%f")
    return value


def _loads(raw: Any, default: Any) -> Any:
    if raw is None:
        return default
    if isinstance(raw, (dict, list)):
        return raw
    try:
        return json.loads(raw)
    except (TypeError, ValueError):
        return default


def title_for(question: str) -> str:
    """A conversation's title: its first question, cut at a word boundary."""
    one_line = " ".join(question.split())
    if len(one_line) <= TITLE_CHARS:
        return one_line
    return one_line[:TITLE_CHARS].rsplit(" ", 1)[0] + "…"


def create(conn: Connection, title: str) -> int:
    now = _now()
    return int(
        conn.execute(
            text(
                "INSERT INTO conversations (title, created_at, updated_at, owner_id) "
                "VALUES (:t, :n, :n, :o) RETURNING id"
            ),
            {"t": title, "n": now, "o": access.owner_for_new()},
        ).scalar_one()
    )


def exists(conn: Connection, conversation_id: int) -> bool:
    """Whether the conversation exists and is the reader's."""
    readable, params = access.conversation_sql("c")
    return (
        conn.execute(
            text("SELECT 1 FROM conversations c WHERE c.id = :c" + access.where(readable)),
            {"c": conversation_id, **params},
        ).scalar()
        is not None
    )


def require(conn: Connection, conversation_id: int) -> None:
    if not exists(conn, conversation_id):
        raise NotFound(f"no such conversation: {conversation_id}")


def add_message(
    conn: Connection,
    conversation_id: int,
    role: str,
    content: str,
    *,
    sources: list[dict[str, Any]] | None = None,
    plan: dict[str, Any] | None = None,
    timings: dict[str, float] | None = None,
    model: str | None = None,
    status: str = "complete",
    meta: dict[str, Any] | None = None,
) -> int:
    now = _now()
    message_id = conn.execute(
        text(
            "INSERT INTO messages (conversation_id, role, content, citations, plan, timings, "
            "model, created_at, status, meta) VALUES (:c, :r, :content, :cit, :plan, :tim, "
            ":model, :n, :status, :meta) RETURNING id"
        ),
        {
            "c": conversation_id,
            "r": role,
            "content": content,
            "cit": json.dumps(sources or []),
            "plan": json.dumps(plan) if plan is not None else None,
            "tim": json.dumps(timings) if timings is not None else None,
            "model": model,
            "n": now,
            "status": status,
            "meta": json.dumps(meta or {}),
        },
    ).scalar_one()
    conn.execute(
        text("UPDATE conversations SET updated_at = :n WHERE id = :c"),
        {"n": now, "c": conversation_id},
    )
    return int(message_id)


def history(
    conn: Connection, conversation_id: int, *, before: int | None = None, turns: int = 6
) -> list[tuple[str, str]]:
    """The last ``turns`` messages (role, content), oldest first, optionally before a message."""
    rows = conn.execute(
        text(
            "SELECT role, content FROM messages WHERE conversation_id = :c "
            "AND (CAST(:b AS BIGINT) IS NULL OR id < :b) AND status != 'error' "
            "ORDER BY id DESC LIMIT :k"
        ),
        {"c": conversation_id, "b": before, "k": turns},
    ).all()
    return [(str(r[0]), str(r[1])) for r in reversed(rows)]


def list_all(conn: Connection) -> list[dict[str, Any]]:
    readable, params = access.conversation_sql("c")
    rows = conn.execute(
        text(
            "SELECT c.id, c.title, c.created_at, c.updated_at, "
            "(SELECT count(*) FROM messages m WHERE m.conversation_id = c.id) "
            f"FROM conversations c WHERE 1 = 1{access.where(readable)} "
            "ORDER BY c.updated_at DESC, c.id DESC"
        ),
        params,
    ).all()
    return [
        {
            "id": int(r[0]),
            "title": str(r[1]),
            "created_at": _stamp(r[2]),
            "updated_at": _stamp(r[3]),
            "message_count": int(r[4]),
        }
        for r in rows
    ]


def get(conn: Connection, conversation_id: int) -> dict[str, Any]:
    readable, params = access.conversation_sql("c")
    row = conn.execute(
        text(
            "SELECT id, title, created_at, updated_at FROM conversations c WHERE id = :c"
            + access.where(readable)
        ),
        {"c": conversation_id, **params},
    ).first()
    if row is None:
        raise NotFound(f"no such conversation: {conversation_id}")
    rows = conn.execute(
        text(
            "SELECT m.id, m.role, m.content, m.citations, m.plan, m.timings, m.model, m.status, "
            "m.meta, m.created_at, "
            f"(SELECT {dialect(conn).json_object}('rating', f.rating, 'comment', "
            "f.comment) FROM chat_feedback f "
            " WHERE f.message_id = m.id ORDER BY f.id DESC LIMIT 1) "
            "FROM messages m WHERE m.conversation_id = :c ORDER BY m.id"
        ),
        {"c": conversation_id},
    ).all()
    messages = []
    for r in rows:
        meta = _loads(r[8], {})
        messages.append(
            {
                "id": int(r[0]),
                "role": str(r[1]),
                "content": str(r[2]),
                "sources": _loads(r[3], []),
                "citations": meta.get("cited", []),
                "plan": _loads(r[4], None),
                "timings_ms": _loads(r[5], None),
                "model": r[6],
                "status": str(r[7]),
                "mode": meta.get("mode"),
                "verify": meta.get("verify"),
                "notices": meta.get("notices", []),
                "citations_checked": meta.get("citations_checked"),
                "created_at": _stamp(r[9]),
                "feedback": _loads(r[10], None),
            }
        )
    return {
        "id": int(row[0]),
        "title": str(row[1]),
        "created_at": _stamp(row[2]),
        "updated_at": _stamp(row[3]),
        "messages": messages,
    }


def delete(conn: Connection, conversation_id: int) -> None:
    require(conn, conversation_id)
    conn.execute(text("DELETE FROM conversations WHERE id = :c"), {"c": conversation_id})


def add_feedback(
    conn: Connection, message_id: int, rating: int, comment: str | None
) -> dict[str, Any]:
    readable, params = access.conversation_sql("c")
    role = conn.execute(
        text(
            "SELECT m.role FROM messages m JOIN conversations c ON c.id = m.conversation_id "
            "WHERE m.id = :m" + access.where(readable)
        ),
        {"m": message_id, **params},
    ).scalar()
    if role is None:
        raise NotFound(f"no such message: {message_id}")
    if role != "assistant":
        raise InputError(f"feedback is for answers: message {message_id} is a question")
    if rating not in (-1, 1):
        raise InputError("rating must be 1 or -1")
    now = _now()
    feedback_id = conn.execute(
        text(
            "INSERT INTO chat_feedback (message_id, rating, comment, created_at) "
            "VALUES (:m, :r, :c, :n) RETURNING id"
        ),
        {"m": message_id, "r": rating, "c": comment, "n": now},
    ).scalar_one()
    return {
        "id": int(feedback_id),
        "message_id": message_id,
        "rating": rating,
        "comment": comment,
        "created_at": now,
    }


def message(conn: Connection, message_id: int) -> dict[str, Any]:
    """One message with its sources, citations and the question it answers (NotFound if
    absent): what an export of an answer reads."""
    readable, params = access.conversation_sql("c")
    row = conn.execute(
        text(
            "SELECT m.id, m.conversation_id, m.role, m.content, m.citations, m.meta, "
            "m.created_at, m.status FROM messages m "
            "JOIN conversations c ON c.id = m.conversation_id WHERE m.id = :m"
            + access.where(readable)
        ),
        {"m": message_id, **params},
    ).first()
    if row is None:
        raise NotFound(f"no such message: {message_id}")
    question = conn.execute(
        text(
            "SELECT content FROM messages WHERE conversation_id = :c AND id < :m "
            "AND role = 'user' ORDER BY id DESC LIMIT 1"
        ),
        {"c": row[1], "m": message_id},
    ).scalar()
    meta = _loads(row[5], {})
    return {
        "id": int(row[0]),
        "conversation_id": int(row[1]),
        "role": str(row[2]),
        "content": str(row[3]),
        "sources": _loads(row[4], []),
        "citations": meta.get("cited", []),
        "created_at": _stamp(row[6]),
        "status": str(row[7]),
        "question": question,
    }
