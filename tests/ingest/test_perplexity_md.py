from __future__ import annotations

from pathlib import Path

import pytest

from quire.config import Settings
from quire.ingest.extract import extract_file
from quire.ingest.perplexity_md import parse_perplexity_markdown, shorten
from quire.ingest.types import Extracted

# CI clones the repo next to shared/: always resolve it as <repo>/../shared.
DOCS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "docs"

# Quire's exporter layout (DESIGN §7): two trailing spaces after the fields, `---` between
# turns, a `### Sources` list per turn. Turn 1's answer has its own `##` sections, a `---`
# rule, a `---` directly followed by `## `, a setext underline and a fenced block with both.
EXPORTER = """\
# Rust async runtimes

**Space:** Programming  
**ID:** rust-async-runtimes-AbC123  
**Date:** 2024-05-01T10:15:00  

## which async runtime should I use in rust?

Short answer: **Tokio** for most services.[1]

## Why Tokio

It has the largest ecosystem.[2]

---

Some people put a rule before a summary.

---

## Comparison

| Runtime | Notes |
|---|---|
| Tokio | default |

```text
---

## not a turn, inside a code block
```

A setext heading in the answer
---

### Sources

1. [Tokio tutorial](https://tokio.rs/tokio/tutorial)
2. [Are we async yet?](https://areweasyncyet.rs/)

---

## how does async-std compare?

It mirrors the standard library API.[1]

### Sources

- https://github.com/async-rs/async-std
- <https://docs.rs/async-std/latest/async_std/>

---

## Follow-up

And smol is the smallest of the three.

### Sources

1. [smol](https://github.com/smol-rs/smol)
"""  # noqa: W291 - the two trailing spaces are part of the layout

# The seed exporter's layout: no Sources lists.
SEED = """\
# Sourdough

**Space:** Cooking  
**ID:** sourdough-xyz  
**Date:** 2024-06-01  

## how do I start a sourdough starter?

Mix flour and water.

## Feeding

Feed it daily.

---

## how long until it is ready?

About a week.

```markdown
---

## still the second answer
```
"""  # noqa: W291


@pytest.fixture(scope="module")
def pnw() -> Extracted:
    return extract_file(DOCS / "perplexity" / "pnw-states-multiturn.md", Settings())


def test_builtin_export_has_four_turns(pnw: Extracted) -> None:
    assert pnw.kind == "perplexity"
    assert [p.number for p in pnw.pages] == [1, 2, 3, 4]
    assert [p.meta["query"] for p in pnw.pages] == [
        "Compare population size and land area of the PNW states",
        "what are the three most embarrassing political blunders?",
        "contrast and compare figs and Newton",
        "Explain this in plain English:",
    ]
    assert [p.heading_path for p in pnw.pages] == [p.meta["query"] for p in pnw.pages]
    assert all(p.source == "markdown" for p in pnw.pages)
    assert pnw.title == "Compare population size and land area of the PNW states"
    assert pnw.metadata["layout"] == "builtin"
    assert pnw.metadata["url"] is None and pnw.metadata["slug"] is None


def test_builtin_footnotes_resolve_to_urls(pnw: Extracted) -> None:
    first, second, third, fourth = (p.meta["urls"] for p in pnw.pages)
    assert len(first) == 30 and len(second) == 8 and len(third) == 15 and len(fourth) == 15
    assert first[0] == "https://ofm.wa.gov/data-research/washington-trends/population-changes/"
    assert first[1] == "https://www.census.gov/quickfacts/fact/table/WA/PST045225"
    assert first[29] == "https://lmi.idaho.gov/census/"  # [^1_30], defined in numeric order
    assert second[:2] == [
        "https://www.saturdayeveningpost.com/2017/02/8-embarrassing-presidential-gaffes/",
        "https://www.educationworld.com/a_cutsloose/top-five-political-embarrassing-moments.shtml",
    ]
    assert third[2] == "https://en.wikipedia.org/wiki/Newtons_(cookie)"  # parentheses kept
    assert fourth[0] == "https://elifesciences.org/articles/00065"
    assert pnw.pages[0].meta["cited"] == [1, 2, 3, 4, 5, 6]
    assert pnw.pages[3].meta["cited"] == [1, 2, 3, 4, 5, 6, 7, 8, 9]


def test_builtin_text_is_clean_and_readable(pnw: Extracted) -> None:
    for page in pnw.pages:
        assert "[^" not in page.text
        assert "display:none" not in page.text and "⁂" not in page.text
        assert "<img" not in page.text and "<div" not in page.text
        assert "https://" not in page.text  # URLs live in meta, not in the passage text
        assert page.text.startswith(page.meta["query"])
    first = pnw.pages[0].text
    assert "| Washington | 8,035,700 | 66,455 sq mi | Most populous of the three. [1][2] |" in first
    assert "## Takeaways" in first
    assert (
        "FGF21" in pnw.pages[3].text and "Methionine, isoleucine, and valine" in pnw.pages[3].text
    )
    assert "It was a wonderfully" not in pnw.pages[3].text
    assert pnw.pages[3].text.rstrip().endswith("do individually.")


def test_exporter_layout_turns_sources_and_metadata(tmp_path: Path) -> None:
    path = tmp_path / "Rust async runtimes (rust-async-runtimes-AbC123).md"
    path.write_text(EXPORTER, encoding="utf-8")
    doc = extract_file(path, Settings())
    assert doc.kind == "perplexity"
    assert doc.title == "Rust async runtimes"
    assert doc.metadata == {
        "title": "Rust async runtimes",
        "space": "Programming",
        "slug": "rust-async-runtimes-AbC123",
        "date": "2024-05-01T10:15:00",
        "url": "https://www.perplexity.ai/search/rust-async-runtimes-AbC123",
        "layout": "exporter",
    }
    assert [p.meta["query"] for p in doc.pages] == [
        "which async runtime should I use in rust?",
        "how does async-std compare?",
        "Follow-up",
    ]
    assert [p.meta["urls"] for p in doc.pages] == [
        ["https://tokio.rs/tokio/tutorial", "https://areweasyncyet.rs/"],
        ["https://github.com/async-rs/async-std", "https://docs.rs/async-std/latest/async_std/"],
        ["https://github.com/smol-rs/smol"],
    ]
    first = doc.pages[0].text
    # Everything of the first answer stayed in the first turn, in order...
    for part in (
        "## Why Tokio",
        "Some people put a rule before a summary.",
        "## Comparison",
        "| Tokio | default |",
        "## not a turn, inside a code block",
        "A setext heading in the answer\n---",
    ):
        assert part in first, part
    # ...and the Sources list went to meta.
    assert "### Sources" not in first and "tokio.rs" not in first
    assert doc.pages[2].text == "Follow-up\n\nAnd smol is the smallest of the three."


def test_seed_layout_without_sources(tmp_path: Path) -> None:
    doc = parse_perplexity_markdown(SEED)
    assert doc.metadata["layout"] == "exporter"
    assert doc.metadata["date"] == "2024-06-01T00:00:00"
    assert [p.meta["query"] for p in doc.pages] == [
        "how do I start a sourdough starter?",
        "how long until it is ready?",
    ]
    assert "## Feeding\n\nFeed it daily." in doc.pages[0].text
    assert doc.pages[0].text.endswith("Feed it daily.")  # the separator is not content
    assert "## still the second answer" in doc.pages[1].text
    assert all(p.meta["urls"] == [] for p in doc.pages)


def test_long_question_is_shortened_for_the_heading_path() -> None:
    question = "why " + "does this very long question keep going " * 8 + "?"
    text = f"# {question}\n\nAn answer.[^1_1]\n\n[^1_1]: https://example.org/a\n"
    doc = parse_perplexity_markdown(text)
    [page] = doc.pages
    assert page.meta["query"] == question
    assert len(page.heading_path) <= 120 and page.heading_path.endswith("…")
    assert page.heading_path.startswith("why does this very long question")
    assert page.meta["urls"] == ["https://example.org/a"]


def test_footnote_definition_that_is_a_title_or_link() -> None:
    text = (
        '<img class="logo" src="x.png"/>\n\n# q?\n\nA[^1_1] B[^1_2]\n\n'
        "[^1_1]: [Some page](https://example.org/page)\n\n[^1_2]: A book title\n"
    )
    [page] = parse_perplexity_markdown(text).pages
    assert page.text == "q?\n\nA[1] B[2]"
    assert page.meta["urls"] == ["https://example.org/page", "A book title"]


def test_shorten() -> None:
    assert shorten("  short\n question ") == "short question"
    assert shorten("word " * 100, 30) == "word word word word word word…"
