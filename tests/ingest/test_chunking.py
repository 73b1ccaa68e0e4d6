from __future__ import annotations

import hashlib
import re

from quire.ingest.chunking import chunk_pages
from quire.storage.records import Page
from quire.text.split import split_text

SENTENCE = "The quick brown fox jumps over the lazy dog near the riverbank today. "


def _para(n: int, tag: str) -> str:
    return f"{tag} " + SENTENCE * n


def test_short_page_is_one_chunk_with_metadata() -> None:
    page = Page(3, "A short page.", heading_path="Ch 1 > Intro", source="epub")
    [chunk] = chunk_pages([page])
    assert (chunk.page, chunk.ordinal, chunk.heading_path, chunk.source) == (
        3,
        0,
        "Ch 1 > Intro",
        "epub",
    )
    assert chunk.text == "A short page."
    assert chunk.content_hash == hashlib.sha256(b"A short page.").hexdigest()


def test_chunks_never_span_pages_and_ordinals_restart() -> None:
    pages = [Page(1, "\n\n".join(_para(8, f"P1-{i}") for i in range(6))), Page(2, _para(3, "P2"))]
    chunks = chunk_pages(pages, size=1500, overlap=100)
    first = [c for c in chunks if c.page == 1]
    second = [c for c in chunks if c.page == 2]
    assert len(first) >= 3 and len(second) == 1
    assert [c.ordinal for c in first] == list(range(len(first)))
    assert second[0].ordinal == 0
    assert all("P2" not in c.text for c in first)


def test_empty_and_whitespace_pages_yield_nothing() -> None:
    assert chunk_pages([Page(1, ""), Page(2, "  \n\n \t ")]) == []


def test_size_bound_and_paragraph_breaks_preferred() -> None:
    text = "\n\n".join(_para(5, f"Para{i}") for i in range(10))  # ~360 chars each
    chunks = split_text(text, size=1500, overlap=0)
    assert all(len(c) <= 1500 for c in chunks)
    # Each chunk starts at a paragraph start and ends at a paragraph end.
    assert all(c.startswith("Para") and c.endswith("today.") for c in chunks)
    assert " ".join(" ".join(chunks).split()) == " ".join(text.split())  # nothing lost


def test_overlap_repeats_the_tail_at_a_word_boundary() -> None:
    words = [f"w{i:04d}" for i in range(2000)]  # no sentence or line breaks: space splits
    chunks = split_text(" ".join(words), size=1500, overlap=100)
    for a, b in zip(chunks, chunks[1:], strict=False):
        head = b.split(" ")[0]
        assert re.fullmatch(r"w\d{4}", head), "a chunk must start at a word start"
        overlap = a[a.rindex(head) :]
        assert b.startswith(overlap) and 60 <= len(overlap) <= 100
    for c in chunks:
        assert all(re.fullmatch(r"w\d{4}", w) for w in c.split(" ")), "no word is cut"


def test_headings_are_preferred_break_points_without_overlap() -> None:
    section_a = "# Alpha\n\n" + _para(7, "A")  # ~500 chars
    section_b = "## Beta\n\n" + _para(20, "B")  # ~1400 chars
    chunks = split_text(f"{section_a}\n{section_b}", size=1500, overlap=100)
    assert chunks[0].startswith("# Alpha") and "Beta" not in chunks[0]
    assert chunks[1].startswith("## Beta")


def test_sentences_then_words() -> None:
    long_sentences = SENTENCE * 60  # one paragraph, one line
    chunks = split_text(long_sentences, size=1000, overlap=0)
    assert all(c.endswith("today.") for c in chunks[:-1])


def test_a_token_longer_than_size_is_cut_hard() -> None:
    token = "x" * 3500
    chunks = split_text(f"start {token} end", size=1000, overlap=100)
    assert all(len(c) <= 1000 for c in chunks)
    assert "".join(chunks).count("x") >= 3500


def test_cjk_without_spaces_is_cut_at_sentence_ends() -> None:
    text = "这是一个很长的中文句子，用来测试分块。" * 120
    chunks = split_text(text, size=500, overlap=0)
    assert all(len(c) <= 500 for c in chunks)
    assert all(c.endswith("。") for c in chunks)


def test_a_small_remainder_stays_in_the_last_chunk() -> None:
    text = "word " * 310  # 1550 chars: within 10% of 1500
    assert len(split_text(text, size=1500, overlap=100)) == 1
