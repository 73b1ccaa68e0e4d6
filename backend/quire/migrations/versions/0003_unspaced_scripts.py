"""BM25 over text without spaces: CJK, Thai and Hangul runs indexed as character bigrams.

``page_chunks`` gains ``fts_text`` and ``fts_heading``: the text and heading path with every
unspaced run cut into overlapping bigrams (quire.text.segment), NULL when there is none (so
an English library stores nothing more). ``page_chunks_fts`` indexes ``page_chunks_lex``, a
view that reads those columns where they are set and the plain ones elsewhere, so FTS5's
``rebuild`` and ``integrity-check`` see exactly what the triggers index. The index is rebuilt
once: identical for rows without such text, so English rankings do not change.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from quire.storage.migrate import applies_to
from quire.text.segment import segment

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TRIGGERS = ("page_chunks_ai", "page_chunks_ad", "page_chunks_au")
_FTS = "tokenize='porter unicode61 remove_diacritics 2'"


def _triggers(text: str, heading: str, columns: str) -> None:
    """The three sync triggers; ``text``/``heading`` are the indexed values of a row (with
    ``{row}`` for new/old), ``columns`` the UPDATE OF list."""
    new_t, new_h = text.format(row="new"), heading.format(row="new")
    old_t, old_h = text.format(row="old"), heading.format(row="old")
    op.execute(
        f"""
        CREATE TRIGGER page_chunks_ai AFTER INSERT ON page_chunks BEGIN
          INSERT INTO page_chunks_fts(rowid, text, heading_path) VALUES (new.id, {new_t}, {new_h});
          INSERT INTO page_chunks_tri(rowid, text) VALUES (new.id, new.text);
        END
        """
    )
    op.execute(
        f"""
        CREATE TRIGGER page_chunks_ad AFTER DELETE ON page_chunks BEGIN
          INSERT INTO page_chunks_fts(page_chunks_fts, rowid, text, heading_path)
            VALUES ('delete', old.id, {old_t}, {old_h});
          INSERT INTO page_chunks_tri(page_chunks_tri, rowid, text)
            VALUES ('delete', old.id, old.text);
        END
        """
    )
    op.execute(
        f"""
        CREATE TRIGGER page_chunks_au AFTER UPDATE OF {columns} ON page_chunks BEGIN
          INSERT INTO page_chunks_fts(page_chunks_fts, rowid, text, heading_path)
            VALUES ('delete', old.id, {old_t}, {old_h});
          INSERT INTO page_chunks_tri(page_chunks_tri, rowid, text)
            VALUES ('delete', old.id, old.text);
          INSERT INTO page_chunks_fts(rowid, text, heading_path) VALUES (new.id, {new_t}, {new_h});
          INSERT INTO page_chunks_tri(rowid, text) VALUES (new.id, new.text);
        END
        """
    )


def _recreate_fts(content: str) -> None:
    op.execute("DROP TABLE IF EXISTS page_chunks_fts")
    op.execute(
        "CREATE VIRTUAL TABLE page_chunks_fts USING fts5("
        f"text, heading_path, content='{content}', content_rowid='id', {_FTS})"
    )
    op.execute("INSERT INTO page_chunks_fts(page_chunks_fts) VALUES ('rebuild')")


def upgrade() -> None:
    if not applies_to("sqlite"):
        return
    op.add_column("page_chunks", sa.Column("fts_text", sa.Text, nullable=True))
    op.add_column("page_chunks", sa.Column("fts_heading", sa.Text, nullable=True))
    for name in _TRIGGERS:
        op.execute(f"DROP TRIGGER IF EXISTS {name}")
    conn = op.get_bind()
    rows = conn.execute(sa.text("SELECT id, text, heading_path FROM page_chunks")).all()
    cut = [{"id": r[0], "t": segment(r[1]), "h": segment(r[2])} for r in rows]
    changed = [c for c in cut if c["t"] is not None or c["h"] is not None]
    if changed:
        conn.execute(
            sa.text("UPDATE page_chunks SET fts_text = :t, fts_heading = :h WHERE id = :id"),
            changed,
        )
    op.execute(
        "CREATE VIEW page_chunks_lex AS SELECT id, coalesce(fts_text, text) AS text, "
        "coalesce(fts_heading, heading_path) AS heading_path FROM page_chunks"
    )
    _recreate_fts("page_chunks_lex")
    _triggers(
        "coalesce({row}.fts_text, {row}.text)",
        "coalesce({row}.fts_heading, {row}.heading_path)",
        "text, heading_path, fts_text, fts_heading",
    )


def downgrade() -> None:
    if not applies_to("sqlite"):
        return
    for name in _TRIGGERS:
        op.execute(f"DROP TRIGGER IF EXISTS {name}")
    _recreate_fts("page_chunks")
    op.execute("DROP VIEW IF EXISTS page_chunks_lex")
    _triggers("{row}.text", "{row}.heading_path", "text, heading_path")
    op.drop_column("page_chunks", "fts_heading")
    op.drop_column("page_chunks", "fts_text")
