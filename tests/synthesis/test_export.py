"""Exports without a search: citation keys, names, BibTeX escaping read back by bibtexparser,
CSL items, and a stored answer whose documents are gone, or that is a question."""

from __future__ import annotations

import json
import re
from typing import Any

import bibtexparser
import pytest
from bibtexparser.middlewares import LatexDecodingMiddleware

from quire.errors import InputError, NotFound
from quire.storage import conversations
from quire.storage.db import Database
from quire.synthesis.bibliography import Work, assign_keys, person, to_bibtex, to_csl
from quire.synthesis.export import load_answer, render


def parsed(text: str) -> bibtexparser.Library:
    library = bibtexparser.parse_string(text, append_middleware=[LatexDecodingMiddleware()])
    assert library.failed_blocks == []
    return library


def test_keys_are_stable_and_deduplicated() -> None:
    works = [
        Work(1, "pdf", "Think Complexity", ["Allen B. Downey"], 2017),
        Work(2, "pdf", "Think Python", ["Allen B. Downey"], 2017),
        Work(3, "pdf", "Think Complexity, second printing", ["Downey, Allen"], 2017),
        Work(4, "pdf", "Think Complexity", ["Allen B. Downey"], 2017),
        Work(5, "epub", "九命奇冤", ["Jianren Wu"], 2008),
        Work(6, "epub", "九命奇冤", []),
        Work(7, "pdf", "The RISC-V ABIs Specification", []),
        Work(8, "epub", "Symphonies", ["Ludwig van Beethoven"], 1824),
        Work(9, "epub", "Über Änderungen", ["Jürgen Müller"], 1990),
    ]
    assign_keys(works)
    assert [w.key for w in works] == [
        "downey2017think",
        "downey2017thinka",
        "downey2017thinkb",
        "downey2017thinkc",
        "wu2008",
        "doc6",
        "riscvabis",
        "vanbeethoven1824symphonies",
        "muller1990uber",
    ]
    again = [Work(w.document_id, w.kind, w.title, w.authors, w.year) for w in works]
    assign_keys(again)
    assert [w.key for w in again] == [w.key for w in works]


def test_names() -> None:
    assert person("Allen B. Downey") == {"family": "Downey", "given": "Allen B."}
    assert person("Darwin, Charles") == {"family": "Darwin", "given": "Charles"}
    assert person("Ludwig van Beethoven") == {"family": "van Beethoven", "given": "Ludwig"}
    assert person("Plato") == {"family": "Plato"}
    assert person("United States Copyright Office") == {"literal": "United States Copyright Office"}


NASTY = 'R&D at 50% of $x_1$ {braces} #1 ~ ^ \\ "Über" — naïve 九命'


def test_bibtex_escapes_and_reads_back() -> None:
    works = [
        Work(1, "pdf", NASTY, ["José Ñúñez", "Acme Corporation"], 2020, doi="10.1000/a_b{c}"),
        Work(2, "epub", "A book", ["Jane Roe"], 2001, isbn="9780306406157", publisher="P & Q"),
        Work(3, "perplexity", "A thread", url="https://www.perplexity.ai/search/a_b%20c",
             accessed="2025-02-03"),
    ]  # fmt: skip
    text = to_bibtex(works)
    assert "\\&" in text and "\\%" in text and "\\_" in text  # escaped for LaTeX
    library = parsed(text)
    first, book, thread = library.entries
    assert first.entry_type == "misc" and book.entry_type == "book"
    assert thread.entry_type == "online"
    # Read back as written, but for LaTeX's typography of quotes and the circumflex; the CJK
    # characters stay UTF-8 (LaTeX has no macro for them, biber reads UTF-8).
    assert first["title"] == NASTY.replace('"Über"', "”Über”").replace("^", "ˆ")
    assert first["author"] == "Ñúñez, José and Acme Corporation"
    raw = bibtexparser.parse_string(text).entries  # URLs and DOIs are verbatim, not LaTeX
    assert raw[0]["author"].endswith(" and {Acme Corporation}")
    assert raw[0]["doi"] == "10.1000/a_b%7Bc%7D"  # braces would end the field
    assert raw[2]["url"] == "https://www.perplexity.ai/search/a_b%20c"
    assert book["isbn"] == "9780306406157" and book["publisher"] == "P & Q"
    assert thread["urldate"] == "2025-02-03"
    assert to_bibtex([]) == ""


def test_csl_items() -> None:
    works = [
        Work(1, "pdf", "A report", ["Jane Roe"], 2020, doi="10.1/x", pages=["ii", "3"]),
        Work(2, "pdf", "A printed book", [], isbn="080442957X"),
        Work(3, "perplexity", "A thread", url="https://x.example/t", accessed="2025-02-03"),
    ]
    report, book, thread = to_csl(works)
    assert report == {
        "id": "roe2020report",
        "type": "document",
        "title": "A report",
        "author": [{"family": "Roe", "given": "Jane"}],
        "issued": {"date-parts": [[2020]]},
        "DOI": "10.1/x",
        "page": "ii, 3",
    }
    assert book["type"] == "book" and book["ISBN"] == "080442957X"
    assert thread["type"] == "webpage" and thread["URL"] == "https://x.example/t"
    assert thread["accessed"] == {"date-parts": [[2025, 2, 3]]}


def _source(n: int, document_id: int, **extra: Any) -> dict[str, Any]:
    return {
        "n": n,
        "chunk_id": n,
        "document_id": document_id,
        "title": f"Doc {document_id}",
        "kind": "pdf",
        "filename": f"doc{document_id}.pdf",
        "page": 10 + n,
        "heading_path": "Part I > Chapter 2",
        "passage": "…",
        "highlights": [],
        "quote": "…",
        "score": 1.0,
        **extra,
    }


def test_a_stored_answer_whose_documents_are_gone(db: Database) -> None:
    sources = [
        _source(1, 7, page_label="iv"),
        _source(2, 8),
        _source(3, 7),
        _source(4, 9, kind="perplexity", origin_url="https://www.perplexity.ai/search/t",
                web_sources=[{"n": 1, "url": "https://example.org/a", "title": "A [page]"}]),
        {"n": 5, "broken": True},
    ]  # fmt: skip
    with db.write() as conn:
        conversation = conversations.create(conn, "q")
        question = conversations.add_message(conn, conversation, "user", "q?")
        answer = conversations.add_message(
            conn,
            conversation,
            "assistant",
            "One [3]. Two [1, 4]. Old style [2][3]. Invented [9].",
            sources=sources,
            meta={"cited": [3, 1, 4]},
        )
    with db.read() as conn:
        export = load_answer(conn, answer)
        with pytest.raises(InputError, match="question"):
            load_answer(conn, question)
        with pytest.raises(NotFound):
            load_answer(conn, answer + 100)
    assert export.question == "q?"
    markdown = render(export, "markdown")
    refs = dict(re.findall(r"^- \[(\d+)\] (.+)$", markdown, re.M))
    assert set(refs) == {"1", "2", "3", "4"}  # [2] only in the text: listed too; [9] is not
    assert '*Doc 7*. p. iv (PDF p. 11), "Part I > Chapter 2".' in refs["1"]
    assert "Perplexity thread: <https://www.perplexity.ai/search/t>" in refs["4"]
    assert "Web sources: [A \\[page\\]](<https://example.org/a>)" in refs["4"]
    # One work per document, in first-citation order; its cited pages in page order.
    assert [w.document_id for w in export.works] == [7, 9, 8]
    items = json.loads(render(export, "csl"))
    assert items[0]["page"] == "iv, 13" and items[0]["id"] == "doc7"
    library = parsed(render(export, "bibtex"))
    assert [e.key for e in library.entries] == [i["id"] for i in items]
