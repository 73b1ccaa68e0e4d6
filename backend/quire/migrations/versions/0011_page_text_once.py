"""A page's text stored once (quire/storage/page_text.py): ``pages.text`` becomes ``rest``, the
characters no chunk covers, and ``char_count``; ``page_chunks.start`` says where each chunk
begins in its page. Chunks are exact windows over their page, so the page row kept every
character a second time (1.5 GB of 6.2 GB at 1M chunks).

Existing pages are split here: each chunk is found in its page's text, in order; one that is not
found (none is, with Quire's chunker) gets no start and its characters stay in ``rest``. The
downgrade stitches the text back. The space freed is reused by later writes (``VACUUM``, which
cannot run inside a migration's transaction, gives it back to the disk).

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02
"""

from collections import defaultdict
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from quire.storage.migrate import applies_to
from quire.storage.page_text import split, stitch

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: Documents split (or stitched) per batch of statements, so memory stays bounded.
_BATCH = 200


def _document_batches(conn: sa.Connection) -> list[list[int]]:
    ids = [int(r[0]) for r in conn.execute(sa.text("SELECT DISTINCT document_id FROM pages"))]
    return [ids[i : i + _BATCH] for i in range(0, len(ids), _BATCH)]


def _chunks(conn: sa.Connection, docs: list[int], where: str = "") -> dict[tuple[int, int], list]:
    rows = conn.execute(
        sa.text(
            "SELECT document_id, page, id, start, text FROM page_chunks "
            f"WHERE document_id IN ({','.join(map(str, docs))}) {where} "
            "ORDER BY document_id, page, ordinal"
        )
    )
    out: dict[tuple[int, int], list] = defaultdict(list)
    for r in rows:
        out[(int(r[0]), int(r[1]))].append(r)
    return out


def upgrade() -> None:
    if not applies_to("sqlite"):
        return
    op.add_column("page_chunks", sa.Column("start", sa.Integer, nullable=True))
    op.add_column("pages", sa.Column("rest", sa.Text, nullable=False, server_default=""))
    op.add_column("pages", sa.Column("char_count", sa.Integer, nullable=False, server_default="0"))
    conn = op.get_bind()
    for docs in _document_batches(conn):
        chunks = _chunks(conn, docs)
        page_rows = conn.execute(
            sa.text(
                "SELECT id, document_id, page, text FROM pages "
                f"WHERE document_id IN ({','.join(map(str, docs))})"
            )
        ).all()
        page_updates, chunk_updates = [], []
        for pid, doc, number, page_text in page_rows:
            mine = chunks.get((int(doc), int(number)), [])
            starts, rest = split(page_text, [str(c[4]) for c in mine])
            chunk_updates += [
                {"id": c[2], "s": at} for c, at in zip(mine, starts, strict=True) if at is not None
            ]
            page_updates.append({"id": pid, "r": rest, "n": len(page_text)})
        if chunk_updates:
            conn.execute(sa.text("UPDATE page_chunks SET start = :s WHERE id = :id"), chunk_updates)
        if page_updates:
            conn.execute(
                sa.text("UPDATE pages SET rest = :r, char_count = :n WHERE id = :id"), page_updates
            )
    op.execute("ALTER TABLE pages DROP COLUMN text")


def downgrade() -> None:
    if not applies_to("sqlite"):
        return
    op.add_column("pages", sa.Column("text", sa.Text, nullable=False, server_default=""))
    conn = op.get_bind()
    for docs in _document_batches(conn):
        chunks = _chunks(conn, docs, "AND start IS NOT NULL")
        page_rows = conn.execute(
            sa.text(
                "SELECT id, document_id, page, rest FROM pages "
                f"WHERE document_id IN ({','.join(map(str, docs))})"
            )
        ).all()
        updates = [
            {
                "id": pid,
                "t": stitch(rest_text, [(int(c[3]), str(c[4])) for c in chunks.get((doc, n), [])]),
            }
            for pid, doc, n, rest_text in page_rows
        ]
        if updates:
            conn.execute(sa.text("UPDATE pages SET text = :t WHERE id = :id"), updates)
    op.execute("ALTER TABLE pages DROP COLUMN char_count")
    op.execute("ALTER TABLE pages DROP COLUMN rest")
    op.execute("ALTER TABLE page_chunks DROP COLUMN start")
