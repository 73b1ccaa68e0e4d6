"""A page's text stored once: split into chunk spans and a rest, stitched back exactly, on
real pages and through migration 0011 on a library written before it."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from quire.formats.epub import extract_epub
from quire.ingest.chunking import chunk_pages
from quire.storage import chunks
from quire.storage.backends.sqlite import SqliteDatabase
from quire.storage.migrate import downgrade, upgrade
from quire.storage.page_text import split, stitch
from quire.storage.records import Chunk, Page

DOCS = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "docs"


def _round_trip(text: str, pieces: list[str]) -> tuple[str, str]:
    starts, left = split(text, pieces)
    spans = [(s, p) for s, p in zip(starts, pieces, strict=True) if s is not None]
    return left, stitch(left, spans)


@pytest.mark.parametrize(
    ("text", "pieces", "left"),
    [
        ("alpha beta\n\ngamma delta", ["alpha beta", "gamma delta"], "\n\n"),
        ("  lead and trail  ", ["lead and trail"], "    "),
        ("one two three four", ["one two three", "three four"], ""),  # overlapping windows
        ("abab abab", ["abab", "abab"], " "),  # repeated text: the next one after the first
        ("kept text", ["not in the page"], "kept text"),  # not found: stays in the rest
        ("", [], ""),
        ("whitespace only \n", [], "whitespace only \n"),
    ],
)
def test_a_page_splits_into_its_chunks_and_a_rest_and_stitches_back(
    text: str, pieces: list[str], left: str
) -> None:
    assert _round_trip(text, pieces) == (left, text)


def test_every_page_of_a_real_book_comes_back_character_for_character() -> None:
    book = extract_epub(DOCS / "epub" / next(p.name for p in (DOCS / "epub").glob("*.epub")))
    pages = [*book.pages, Page(len(book.pages) + 1, "  \n\n\t ")]
    found = 0
    for page in pages:
        pieces = [c.text for c in chunk_pages([page], 400, 80)]
        left, whole = _round_trip(page.text, pieces)
        assert whole == page.text
        # Only whitespace is left outside the chunks: the page row stores almost nothing.
        assert not left.strip()
        found += len(pieces)
    assert found > 50


def test_the_migration_splits_old_pages_and_the_downgrade_stitches_them(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "q.db", tmp_path / "qv.db")
    upgrade(db, "0010")
    body = "First part of the page.\n\nSecond part, after a break.\n\nThe tail."
    with db.write() as conn:
        conn.exec_driver_sql(
            "INSERT INTO documents (kind, filename, sha256, byte_size, stored_path, status, "
            "created_at, updated_at) VALUES ('text', 'a.txt', 'x', 1, '/x', 'ready', "
            "datetime(), datetime())"
        )
        conn.exec_driver_sql(
            "INSERT INTO pages (document_id, page, text, source) VALUES (1, 1, ?, 'text'), "
            "(1, 2, 'A page whose chunk is gone.', 'text')",
            (body,),
        )
        for n, piece in enumerate(
            [
                "First part of the page.",
                "Second part, after a break.",
                "The tail.",
                "not on the page",
            ]
        ):
            conn.exec_driver_sql(
                "INSERT INTO page_chunks (document_id, page, ordinal, text, content_hash, "
                "char_count, source) VALUES (1, 1, ?, ?, ?, ?, 'text')",
                (n, piece, f"h{n}", len(piece)),
            )
    upgrade(db, "head")
    with db.read() as conn:
        assert conn.exec_driver_sql("SELECT rest, char_count FROM pages ORDER BY page").all() == [
            ("\n\n\n\n", len(body)),
            ("A page whose chunk is gone.", 27),
        ]
        starts = conn.exec_driver_sql("SELECT start FROM page_chunks ORDER BY ordinal").all()
        assert [s[0] for s in starts] == [0, 25, 54, None]
        assert chunks.page_texts(conn, [(1, 1), (1, 2), (1, 3)]) == {
            (1, 1): body,
            (1, 2): "A page whose chunk is gone.",
        }
        page = chunks.get_page(conn, 1, 1)
        assert page is not None and page["text"] == body
    downgrade(db, "0010")
    with db.read() as conn:
        assert conn.exec_driver_sql("SELECT text FROM pages ORDER BY page").all() == [
            (body,),
            ("A page whose chunk is gone.",),
        ]
    db.dispose()


def test_replace_keeps_a_moved_chunk_and_its_new_start(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "q.db", tmp_path / "qv.db")
    upgrade(db)
    with db.write() as conn:
        conn.exec_driver_sql(
            "INSERT INTO documents (kind, filename, sha256, byte_size, stored_path, status, "
            "created_at, updated_at) VALUES ('text', 'a.txt', 'x', 1, '/x', 'ready', "
            "datetime(), datetime())"
        )

    def write(*paragraphs: str) -> chunks.ReplaceStats:
        page = Page(1, "\n\n".join(paragraphs), source="text")
        passages = [
            Chunk(1, n, "", p, hashlib.sha256(p.encode()).hexdigest(), "text")
            for n, p in enumerate(paragraphs)
        ]
        with db.write() as conn:
            return chunks.replace(conn, 1, [page], passages)

    first = write("A sentence that stays the same.", "Then another one follows.")
    moved = write(
        "New opening words.", "A sentence that stays the same.", "Then another one follows."
    )
    assert first.inserted == 2 and (moved.kept, moved.inserted) == (2, 1)
    with db.read() as conn:
        page = chunks.get_page(conn, 1, 1)
        assert page is not None
        assert page["text"] == (
            "New opening words.\n\nA sentence that stays the same.\n\nThen another one follows."
        )
        assert [c["text"] for c in page["chunks"]][0] == "New opening words."
        assert chunks.list_pages(conn, 1)[0]["chars"] == len(page["text"])
        assert conn.exec_driver_sql("SELECT rest FROM pages").scalar_one() == "\n\n\n\n"
    db.dispose()
