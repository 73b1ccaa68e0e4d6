"""Entries → hash and markdown, read back by the ingest parser turn by turn."""

from __future__ import annotations

import copy
from pathlib import Path

from quire.formats.detect import detect_kind
from quire.formats.perplexity_md import parse_perplexity_markdown
from quire.sources.perplexity.render import (
    answer_of,
    entries_hash,
    export_relpath,
    raw_relpath,
    render_markdown,
    safe_name,
    sources_of,
    thread_info,
)
from tests.fakes.perplexity import make_entry, make_thread

URL = "https://www.perplexity.ai/search/x"


def test_hash_ignores_key_order_but_not_content() -> None:
    entries = make_thread(1).entries
    shuffled = [dict(reversed(list(e.items()))) for e in entries]
    assert entries_hash(shuffled) == entries_hash(entries)
    changed = copy.deepcopy(entries)
    changed[1]["blocks"][2]["markdown_block"]["answer"] += " More."
    assert entries_hash(changed) != entries_hash(entries)


def test_duplicate_answers_are_written_once_and_partials_give_way() -> None:
    entry = make_entry("s", "T", "q", "The answer is 42.", [], 0)
    assert answer_of(entry) == "The answer is 42."
    # ask_text holds a partial stream, ask_text_0_markdown the final text: only the final.
    entry["blocks"][2]["markdown_block"]["answer"] = "The answer"
    assert answer_of(entry) == "The answer is 42."
    # Two genuinely different texts are both kept.
    entry["blocks"][2]["markdown_block"]["answer"] = "A different answer."
    assert answer_of(entry) == "A different answer.\n\nThe answer is 42."
    # An answer carried only as chunks.
    entry["blocks"] = [{"intended_usage": "ask_text", "markdown_block": {"chunks": ["Hel", "lo"]}}]
    assert answer_of(entry) == "Hello"


def test_sources_in_citation_order_without_duplicates_or_non_web_urls() -> None:
    rows = [
        {"web_result": {"name": "B", "url": "https://b.example/"}, "citation": 2},
        {"web_result": {"name": "A", "url": "https://a.example/"}, "citation": 1},
        {"web_result": {"name": "A again", "url": "https://a.example/"}, "citation": 3},
        {"web_result": {"name": "file", "url": "file:///etc/passwd"}, "citation": 4},
        "junk",
    ]
    entry = {
        "blocks": [{"intended_usage": "sources_answer_mode", "sources_mode_block": {"rows": rows}}]
    }
    assert [(s.number, s.name) for s in sources_of(entry)] == [(1, "A"), (2, "B")]


def test_export_round_trips_through_the_ingest_parser(tmp_path: Path) -> None:
    thread = make_thread(3, turns=3, space="Research")
    # Answers with their own `##`, `---` and a `---` right before a `## ` heading.
    tricky = "Intro.\n\n## Details\n\nMore.\n\n---\n\n## Not a new turn\n\nEnd."
    for block in thread.entries[1]["blocks"]:
        if block["intended_usage"].startswith("ask_text"):
            block["markdown_block"]["answer"] = tricky
    thread.entries[2]["blocks"][1]["sources_mode_block"]["rows"] = []  # a turn without sources
    thread.entries[2]["query_str"] = ""
    info = thread_info(thread.list_item(), thread.entries)
    text = render_markdown(info, thread.entries, URL)
    path = tmp_path / "t.md"
    path.write_text(text, encoding="utf-8")
    assert detect_kind(path) == "perplexity"
    parsed = parse_perplexity_markdown(text)
    assert [p.number for p in parsed.pages] == [1, 2, 3]
    assert parsed.metadata["url"] == URL
    assert parsed.metadata["slug"] == thread.slug and parsed.metadata["space"] == "Research"
    assert parsed.metadata["title"] == thread.title
    first, second, third = parsed.pages
    assert first.meta["query"] == thread.title  # the first query falls back to the title
    assert "glimmerstone count of topic 3 is 3000" in first.text
    assert first.meta["urls"] == ["https://example.org/3/0/1", "https://example.com/wiki/T3_(0)"]
    assert "## Not a new turn" in second.text and "End." in second.text
    assert second.text.count("Intro.") == 1  # ask_text and ask_text_0_markdown: once
    assert third.meta["query"] == "Follow-up" and third.meta["urls"] == []


def test_file_names_are_safe_and_bounded() -> None:
    assert safe_name("a/b\\c: what? <x>|*") == "a b c what x"
    assert safe_name("../..") == "Untitled"
    assert safe_name("CON") == "_CON"
    long = safe_name("ü" * 300)
    assert len(long.encode()) <= 120 and long == "ü" * 60
    info = thread_info({"uuid": "u", "slug": "s/../x", "title": "A/B testing?"}, [])
    assert export_relpath(info) == Path("exports/Library/A B testing (s .. x).md")
    assert raw_relpath(info) == Path("raw/s .. x.json")
    assert ".." not in export_relpath(info).parts


def test_header_falls_back_to_the_entries() -> None:
    thread = make_thread(4, space="Work")
    entries = copy.deepcopy(thread.entries)
    entries[0]["collection_info"] = {"title": "Work", "emoji": "x"}
    info = thread_info({"uuid": "u", "slug": thread.slug}, entries)
    assert info.title == thread.title and info.space == "Work"
    assert info.date == entries[-1]["updated_datetime"]
