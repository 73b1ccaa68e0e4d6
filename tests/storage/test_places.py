"""records.place, the one way Quire names a place, for every kind (docs/design/places.md)."""

from __future__ import annotations

import pytest

from quire.storage.records import KINDS, place, section


@pytest.mark.parametrize(
    ("kind", "page", "label", "heading_path", "named"),
    [
        # A PDF: the printed label first, the page in the file after it.
        ("pdf", 188, "166", "Graphs > NetworkX", "p. 166 (PDF p. 188)"),
        ("pdf", 3, "xii", "", "p. xii (PDF p. 3)"),
        ("pdf", 188, None, "Graphs", "p. 188"),
        ("pdf", 188, "188", "", "p. 188"),  # a label that repeats the number says nothing more
        ("pdf", 9, "  A-3 ", "", "p. A-3 (PDF p. 9)"),
        # An EPUB: the chapter by its title; its number only when it has no title.
        ("epub", 62, None, "Chapter 60 > The Return", "Chapter 60 · The Return"),
        ("epub", 6, None, "D R A C U L A > CHAPTER I JONATHAN HARKER’S JOURNAL",
         "CHAPTER I JONATHAN HARKER’S JOURNAL"),
        ("epub", 2, None, "Down The Rabbit-Hole", "Down The Rabbit-Hole"),
        ("epub", 9, None, "CHAPTER V", "CHAPTER V"),
        ("epub", 62, None, "", "section 62"),
        ("markdown", 4, None, "Setup > Install", "Install"),
        ("text", 4, None, "", "part 4"),
        # Conversations: the turn.
        ("perplexity", 2, None, "What is X?", "turn 2"),
        ("chatgpt", 3, None, "", "turn 3"),
        ("claude", 1, None, "", "turn 1"),
        # Office: the label the reader made is the whole name; a page Word laid out, "p. N".
        ("docx", 12, None, "Background", "p. 12"),
        ("docx", 4, "Background, ¶ 12–30", "Background", "Background, ¶ 12–30"),
        ("odt", 5, None, "", "p. 5"),
        ("pptx", 14, "slide 14 · Results", "Results", "slide 14 · Results"),
        ("odp", 2, None, "", "slide 2"),
        ("xlsx", 3, "sheet Results, rows 12–40", "Results", "sheet Results, rows 12–40"),
        ("ods", 1, None, "", "sheet 1"),
        # A saved web page: its section's label, else its heading.
        ("web", 3, "The Four Golden Signals, ¶ 3–7", "", "The Four Golden Signals, ¶ 3–7"),
        ("web", 6, None, "Monitoring > The Four Golden Signals", "The Four Golden Signals"),
        ("web", 6, None, "", "section 6"),
        # An image file: a frame of the scan.
        ("image", 2, None, "", "p. 2"),
    ],
)  # fmt: skip
def test_each_kind_is_named_one_way(
    kind: str, page: int, label: str | None, heading_path: str, named: str
) -> None:
    assert place(kind, page, label, heading_path) == named


def test_every_kind_has_a_rule() -> None:
    for kind in KINDS:
        assert place(kind, 7).endswith("7"), kind


def test_a_long_heading_is_cut_with_an_ellipsis() -> None:
    named = place("epub", 1, None, "Chapter 1 > " + "very long title " * 10)
    assert named.startswith("Chapter 1 · very long title") and named.endswith("…")
    assert len(named) <= 90


def test_the_section_is_said_only_where_the_place_does_not_name_it() -> None:
    assert section("pdf", "Graphs > NetworkX") == "Graphs > NetworkX"
    assert section("perplexity", "What is X?") == "What is X?"
    assert section("epub", "Chapter 60 > The Return") == ""
    assert section("pptx", "Results") == ""
    assert section("web", "Monitoring > Signals") == ""
