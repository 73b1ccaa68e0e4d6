from __future__ import annotations

from pathlib import Path

from quire.config import Settings
from quire.formats.extract import extract_file
from quire.formats.markdown import PAGE_CHARS, parse_markdown, parse_text, tables_as_rows
from tests.conftest import DOCS

GUIDE = """\
# Field Guide

Intro paragraph with a [link](https://example.org).

## Setup

Install it:

```bash
# a shell comment, not a heading
pip install quire
```

### Linux

Use the package manager.

Usage
-----

Run `quire serve`.

# Appendix

#### A deep heading stays inside its section

Details.
"""


def test_markdown_sections_and_heading_paths() -> None:
    doc = parse_markdown(GUIDE)
    assert doc.kind == "markdown" and doc.title == "Field Guide"
    assert [(p.number, p.heading_path) for p in doc.pages] == [
        (1, "Field Guide"),
        (2, "Field Guide > Setup"),
        (3, "Field Guide > Setup > Linux"),
        (4, "Field Guide > Usage"),
        (5, "Appendix"),
    ]
    assert all(p.source == "markdown" for p in doc.pages)
    setup = doc.pages[1].text
    assert setup.startswith("## Setup\n\nInstall it:")
    assert "# a shell comment, not a heading\npip install quire" in setup
    assert doc.pages[3].text == "## Usage\n\nRun `quire serve`."
    assert (
        doc.pages[4].text
        == "# Appendix\n\n#### A deep heading stays inside its section\n\nDetails."
    )


def test_a_heading_without_text_yields_no_page() -> None:
    doc = parse_markdown("# Book\n\n## Chapter\n\nText.\n")
    assert [(p.heading_path, p.text) for p in doc.pages] == [
        ("Book > Chapter", "## Chapter\n\nText.")
    ]


def test_a_long_section_becomes_bounded_pages_with_the_same_path() -> None:
    paragraphs = "\n\n".join(f"Paragraph {i}. " + "Some words here. " * 40 for i in range(30))
    doc = parse_markdown(f"# Long\n\n{paragraphs}\n")
    assert len(doc.pages) > 3
    assert all(len(p.text) <= PAGE_CHARS * 1.1 for p in doc.pages)
    assert all(p.heading_path == "Long" for p in doc.pages)
    assert doc.pages[0].text.startswith("# Long") and doc.pages[1].text.startswith("Paragraph")
    # Pages break at paragraph boundaries and nothing is lost.
    assert all(p.text.rstrip().endswith("here.") for p in doc.pages)
    joined = " ".join(p.text for p in doc.pages).replace("# Long", "")
    assert " ".join(joined.split()) == " ".join(paragraphs.split())


def test_plain_text_pages_at_paragraph_boundaries() -> None:
    text = "A Title Line\n\n" + "\n\n".join("Sentence one. Sentence two. " * 30 for _ in range(20))
    doc = parse_text(text)
    assert doc.kind == "text" and doc.title == "A Title Line"
    assert len(doc.pages) >= 3 and [p.number for p in doc.pages] == list(
        range(1, len(doc.pages) + 1)
    )
    assert all(p.source == "text" and p.heading_path == "" for p in doc.pages)
    assert all(len(p.text) <= PAGE_CHARS * 1.1 for p in doc.pages)
    assert all(p.text.endswith("two.") for p in doc.pages)


def test_text_without_blank_lines_is_still_bounded() -> None:
    text = "\n".join(f"log line {i}: something happened" for i in range(2000))
    pages = parse_text(text).pages
    assert len(pages) > 5 and all(len(p.text) <= PAGE_CHARS * 1.1 for p in pages)
    assert all(p.text.startswith("log line") for p in pages)


def test_extract_file_reads_markdown_and_utf16_text(tmp_path: Path) -> None:
    md = tmp_path / "guide.txt"  # the name says txt; the content says markdown
    md.write_text(GUIDE, encoding="utf-8")
    doc = extract_file(md, Settings())
    assert doc.kind == "markdown" and len(doc.pages) == 5

    notes = tmp_path / "notes.md"
    notes.write_bytes("Zażółć gęślą jaźń\n\nDrugi akapit, 12 zł.\n".encode("utf-16"))
    doc = extract_file(notes, Settings())
    assert doc.kind == "text" and doc.title == "Zażółć gęślą jaźń"
    assert doc.pages[0].text == "Zażółć gęślą jaźń\n\nDrugi akapit, 12 zł."


def test_cp1252_text_is_decoded(tmp_path: Path) -> None:
    path = tmp_path / "legacy.txt"
    path.write_bytes(
        "Caf\u00e9 cr\u00e8me \u2013 na\u00efve \u201cquotes\u201d.\n".encode("cp1252")
    )
    doc = extract_file(path, Settings())
    assert doc.pages[0].text == "Café crème – naïve “quotes”."


def test_bare_numbers_in_markdown_are_content(tmp_path: Path) -> None:
    path = tmp_path / "answer.md"
    path.write_text("# The answer\n\nIt is:\n\n42\n\n- and a [link](https://x.org)\n")
    doc = extract_file(path, Settings())
    assert "\n\n42\n\n" in doc.pages[0].text


def test_front_matter_gives_the_title_and_is_not_content() -> None:
    text = (
        '---\ntitle: "My Note"\nauthor: Ann\ntags: [a, b]\n---\n\nBody text.\n\n## Part\n\nMore.\n'
    )
    doc = parse_markdown(text)
    assert (doc.title, doc.author) == ("My Note", "Ann")
    assert [(p.heading_path, p.text) for p in doc.pages] == [
        ("", "Body text."),
        ("Part", "## Part\n\nMore."),
    ]
    # A rule at the top is not front matter, and not a title either.
    doc = parse_markdown("---\n\nJust a rule first.\n")
    assert doc.title == "Just a rule first."


def test_a_pipe_table_is_read_as_rows_with_their_headers() -> None:
    text = """# Runtimes

| Runtime | Notes \\| caveats | Since |
| :-- | --- | --: |
| Tokio | default; `tokio::main`[1] | 2016 |
| smol |  | 2020 |

```text
| kept | as code |
|---|---|
```

- a list's table stays as written:
  | a | b |
  |---|---|
  | 1 | 2 |
"""
    pages = parse_markdown(text).pages
    assert pages[0].text.split("\n")[2:4] == [
        "Runtime: Tokio · Notes | caveats: default; `tokio::main`[1] · Since: 2016",
        "Runtime: smol · Since: 2020",  # an empty cell is left out
    ]
    assert "| kept | as code |\n|---|---|" in pages[0].text
    assert "  | a | b |\n  |---|---|\n  | 1 | 2 |" in pages[0].text
    assert tables_as_rows("a | b, not a table") == "a | b, not a table"


def test_a_real_perplexity_tables_row_keeps_its_header_and_citation(tmp_path: Path) -> None:
    doc = extract_file(
        DOCS / "perplexity" / "Langflow on SURF Research Cloud Ubuntu VM.md",
        Settings(data_dir=tmp_path),
    )
    text = "\n".join(p.text for p in doc.pages)
    assert "Issue: Cert fail · Solution: DNS/ports; `docker logs traefik`[2]" in text
    assert "| Cert fail |" not in text
