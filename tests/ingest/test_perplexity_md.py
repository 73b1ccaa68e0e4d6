from __future__ import annotations

from pathlib import Path

import pytest

from quire.config import Settings
from quire.formats.extract import extract_file
from quire.formats.perplexity_md import parse_perplexity_markdown, shorten
from quire.formats.types import Extracted
from quire.ingest.chunking import chunk_pages
from quire.sources.perplexity.render import ThreadInfo, render_markdown
from quire.storage.records import Page
from quire.storage.web_sources import web_sources

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
    # A table is read as rows with their headers, its citations kept.
    assert (
        "State: Washington · Population: 8,035,700 · Land area: 66,455 sq mi · "
        "Notes: Most populous of the three. [1][2]\n"
    ) in first
    assert "| Washington |" not in first and "|---" not in first
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
        "Runtime: Tokio · Notes: default",
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


# Sections and web sources per passage (issue 13, item 4), on the real exports.
def _chunks(page: Page) -> list[tuple[str, list[int], str]]:
    """(heading path, cited web source numbers, text) of each chunk of a turn."""
    return [
        (c.heading_path, [w.n for w in web_sources(page.meta, page.text, c.text)], c.text)
        for c in chunk_pages([page])
    ]


def test_sections_of_an_answer_become_heading_paths(pnw: Extracted) -> None:
    q = "Compare population size and land area of the PNW states"
    paths = [path for path, _, _ in _chunks(pnw.pages[0])]
    assert paths == [q, f"{q} > Population and area", f"{q} > Takeaways"]
    chunk = _chunks(pnw.pages[0])[1][2]
    assert chunk.startswith("## Population and area") and "Idaho · Population: 1,839,106" in chunk
    # Every turn: the question alone above its first heading, "question > heading" under it.
    turn3 = _chunks(pnw.pages[2])
    assert [p for p, _, _ in turn3][1:] == [
        "contrast and compare figs and Newton > Quick contrast",
        "contrast and compare figs and Newton > Similarity",
    ]


def test_subsections_and_a_heading_without_text_of_its_own() -> None:
    path = DOCS / "perplexity" / "Langflow on SURF Research Cloud Ubuntu VM.md"
    [page] = extract_file(path, Settings()).pages
    q = "Langflow on SURF Research Cloud Ubuntu VM"
    paths = list(dict.fromkeys(p for p, _, _ in _chunks(page)))
    assert paths == [
        q,
        f"{q} > Prerequisites",
        # "## Setup Scripts" has no text before "### get-files.sh": one section, not a sliver.
        f"{q} > Setup Scripts > get-files.sh",
        f"{q} > Setup Scripts > create-langflow.sh",
        f"{q} > Docker Files > Dockerfile",
        f"{q} > docker-compose.yaml",
        f"{q} > Usage",
        f"{q} > Customization & Troubleshooting",  # the export's "\&" unescaped
    ]
    # The `#` comments inside its shell and YAML blocks are no headings.
    assert not any("Step" in p or "#" in p for p in paths)
    # Its footnotes name attached files, not web pages: markers, but no web sources.
    assert page.meta["cites"] and page.meta["sources"] == []
    assert all(cited == [] for _, cited, _ in _chunks(page))


def test_a_passage_carries_the_web_sources_its_markers_cite(pnw: Extracted) -> None:
    turn4 = pnw.pages[3]
    urls = turn4.meta["urls"]
    [(path, cited, text)] = [c for c in _chunks(turn4) if c[0].endswith("> Simple version")]
    assert "[4]" in text and "[7]" in text and cited == [4, 7]
    found = web_sources(turn4.meta, turn4.text, text)
    assert [(w.n, w.url) for w in found] == [(4, urls[3]), (7, urls[6])]
    assert all(w.title is None for w in found)  # the built-in export gives bare URLs
    # The table rows of turn 1 cite [1]–[6], each the turn's own URL of that number.
    [(_, cited, _)] = [c for c in _chunks(pnw.pages[0]) if c[0].endswith("> Population and area")]
    assert cited == [1, 2, 3, 4, 5, 6]


def test_a_passage_without_markers_carries_no_web_sources(pnw: Extracted) -> None:
    [(_, cited, text)] = [c for c in _chunks(pnw.pages[0]) if c[0].endswith("> Takeaways")]
    assert "[" not in text and cited == []
    # The thread's hidden list of uncited sources ([^1_7] … [^1_30]) cites nothing.
    assert {n for _, c, _ in _chunks(pnw.pages[0]) for n in c} == {1, 2, 3, 4, 5, 6}


def test_one_turn_export_with_unprefixed_footnotes() -> None:
    [page] = extract_file(DOCS / "perplexity" / "Epoch AI Models Dataset.md", Settings()).pages
    assert "[^" not in page.text and "[1][3]" in page.text
    assert page.meta["urls"][0] == "https://epoch.ai/data/ai-models"
    assert len(page.meta["sources"]) == 11
    chunks = _chunks(page)
    assert chunks[0][1] == [1, 3]
    quickstart = next(c for c in chunks if c[0].endswith("> Quickstart"))
    assert quickstart[1] == []  # its python has `df['frontier']`, and no marker
    assert chunks[-1][0] == "Epoch AI Models Dataset > Citation & License"


def test_markers_beyond_the_list_and_inside_code_are_ignored() -> None:
    text = (DOCS / "perplexity" / "pnw-states-multiturn.md").read_text()
    # Turn 2 lists 8 sources: cite a 42nd one, and put a footnote-looking index in code.
    text = text.replace("debate blunder, which", "debate blunder[^2_42], which", 1)
    text = text.replace("## Note\n", "## Note\n\nIn code: `items[3]`.\n", 1)
    turn2 = parse_perplexity_markdown(text).pages[1]
    assert "blunder[42]" in turn2.text and "`items[3]`" in turn2.text
    assert sorted({n for _, n in turn2.meta["cites"]}) == [1, 2, 42]
    assert {n for _, c, _ in _chunks(turn2) for n in c} == {1, 2}  # [42] has no source


def test_exporter_sources_keep_their_numbers_and_titles() -> None:
    [one, two, three] = parse_perplexity_markdown(EXPORTER).pages
    assert one.meta["sources"] == [
        {"n": 1, "url": "https://tokio.rs/tokio/tutorial", "title": "Tokio tutorial"},
        {"n": 2, "url": "https://areweasyncyet.rs/", "title": "Are we async yet?"},
    ]
    q = "which async runtime should I use in rust?"
    chunks = _chunks(one)
    assert [p for p, _, _ in chunks] == [
        q,
        f"{q} > Why Tokio",
        f"{q} > Comparison",
        f"{q} > A setext heading in the answer",  # and not the `## ` inside the code block
    ]
    assert [c for _, c, _ in chunks] == [[1], [2], [], []]
    # Bare URLs are numbered by their place in the list.
    assert [(s["n"], s["title"]) for s in two.meta["sources"]] == [(1, None), (2, None)]
    assert [w.url for w in web_sources(two.meta, two.text, two.text)] == [
        "https://github.com/async-rs/async-std"
    ]
    assert three.meta["cites"] == [] and "headings" not in three.meta


def test_sync_export_renders_to_the_same_citations() -> None:
    """A synced thread is rendered (perplexity/render.py) and read back by this parser: its
    Sources numbers are the answer's [N]."""
    entry = {
        "query_str": "what is tokio?",
        "blocks": [
            {
                "intended_usage": "ask_text",
                "markdown_block": {
                    "answer": "Tokio is a runtime.[2]\n\n## Why\n\nSpeed and ecosystem.[1][9]"
                },
            },
            {
                "intended_usage": "sources_answer_mode",
                "sources_mode_block": {
                    "rows": [
                        {
                            "web_result": {"name": "Tokio", "url": "https://tokio.rs/"},
                            "citation": 1,
                        },
                        {
                            "web_result": {"name": "Docs [rs]", "url": "https://docs.rs/tokio"},
                            "citation": 2,
                        },
                    ]
                },
            },
        ],
    }
    info = ThreadInfo("u1", "tokio-abc", "Tokio", None, "2025-01-01")
    md = render_markdown(info, [entry], "https://www.perplexity.ai/search/tokio-abc")
    [page] = parse_perplexity_markdown(md).pages
    chunks = _chunks(page)
    assert [p for p, _, _ in chunks] == ["what is tokio?", "what is tokio? > Why"]
    found = [web_sources(page.meta, page.text, t) for _, _, t in chunks]
    assert [[(w.n, w.title) for w in f] for f in found] == [[(2, "Docs [rs]")], [(1, "Tokio")]]
