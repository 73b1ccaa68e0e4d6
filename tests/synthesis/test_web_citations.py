"""A saved web page's citation: the heading path and a link to the live page with a text
fragment (``#:~:text=``, WICG Text Fragments) at the quoted passage, in the API's source, the
Markdown and BibTeX exports and the CLI's source line. The browser opening such a link is
tested in tests/e2e/test_web_app.py."""

from __future__ import annotations

from urllib.parse import unquote

import pytest

from quire.cli.chat import source_line
from quire.retrieval.hits import Hit
from quire.synthesis.answer import Evidence, fragment_passage, origin_url
from quire.synthesis.bibliography import Work, to_bibtex, to_csl
from quire.synthesis.export import Reference, reference_line
from quire.urls import text_fragment
from tests.synthesis.test_export import parsed

PAGE = "https://sre.google/sre-book/monitoring-distributed-systems/"
PASSAGE = (
    "The Four Golden Signals\n\n"
    "The four golden signals of monitoring are latency, traffic, errors, and saturation. If "
    "you can only measure four metrics of your user-facing system, focus on these four.\n\n"
    "- Latency: the time it takes to service a request."
)


@pytest.mark.parametrize(
    ("passage", "fragment"),
    [
        # Short: the whole passage, spaces and commas percent-encoded.
        (
            "latency, traffic, errors, and saturation",
            "latency%2C%20traffic%2C%20errors%2C%20and%20saturation",
        ),
        # The directive's own syntax characters: "-", "," and "&" never appear bare.
        ("Black-Box Versus White-Box & more", "Black%2DBox%20Versus%20White%2DBox%20%26%20more"),
        # Long: textStart,textEnd of five words each.
        (
            "If you can only measure four metrics of your user-facing system, focus on these four.",
            "If%20you%20can%20only%20measure,system%2C%20focus%20on%20these%20four.",
        ),
        # Written without spaces: the first and last twelve characters.
        (
            "一波波接續性低溫寒流報到已將新竹尖石鄉後山一帶層層山巒披上嫣紅的彩衣玉峰道路一路上雲氣山嵐",
            # 一波波接續性低溫寒流報到 … 衣玉峰道路一路上雲氣山嵐
            "%E4%B8%80%E6%B3%A2%E6%B3%A2%E6%8E%A5%E7%BA%8C%E6%80%A7%E4%BD%8E%E6%BA%AB%E5%AF%92"
            "%E6%B5%81%E5%A0%B1%E5%88%B0,%E8%A1%A3%E7%8E%89%E5%B3%B0%E9%81%93%E8%B7%AF%E4%B8%80"
            "%E8%B7%AF%E4%B8%8A%E9%9B%B2%E6%B0%A3%E5%B1%B1%E5%B5%90",
        ),
    ],
)
def test_a_text_fragment_is_encoded_as_the_spec_says(passage: str, fragment: str) -> None:
    link = text_fragment(PAGE + "#top", passage)
    assert link == f"{PAGE}#:~:text={fragment}"  # the page's own anchor replaced
    terms = link.split("#:~:text=", 1)[1].split(",")
    assert all("-" not in t and "&" not in t for t in terms)
    assert " ".join(passage.split()).startswith(unquote(terms[0]))
    assert " ".join(passage.split()).endswith(unquote(terms[-1]))


def test_an_empty_passage_leaves_the_address_alone() -> None:
    assert text_fragment(PAGE, " \n") == PAGE


def test_the_fragment_names_words_the_page_holds() -> None:
    sentence = "The four golden signals of monitoring are latency, traffic, errors, and saturation."
    assert fragment_passage(sentence, PASSAGE) == sentence  # an extractive quote, verbatim
    # An LLM's fact in its own words: the first real paragraph of the passage instead.
    assert fragment_passage("Watch four numbers.", PASSAGE).startswith("The four golden signals")
    # What the reader added is not on the page: a bullet, a table row's headers.
    assert fragment_passage("- Latency: the time it takes to service a request.", PASSAGE) == (
        "Latency: the time it takes to service a request."
    )
    row = "Symptom: I’m serving HTTP 500s or 404s · Cause: Database servers are refusing"
    assert fragment_passage(row, row) == "I’m serving HTTP 500s or 404s"


def hit(kind: str, metadata: dict[str, object]) -> Hit:
    return Hit(
        chunk_id=9,
        document_id=4,
        title="Google - Site Reliability Engineering",
        kind=kind,  # type: ignore[arg-type]
        filename="sre.html",
        page=6,
        heading_path="Monitoring Distributed Systems > The Four Golden Signals",
        text=PASSAGE,
        highlights=[],
        ranks={},
        scores={},
        fused=0.5,
        metadata=metadata,
    )


def test_a_web_source_links_the_live_page_at_its_passage() -> None:
    quote = "The four golden signals of monitoring are latency, traffic, errors, and saturation."
    link = origin_url(hit("web", {"url": PAGE}), quote)
    assert link == text_fragment(PAGE, quote)
    source = Evidence(hit("web", {"url": PAGE}), quote, n=1).source()
    assert source.origin_url == link
    assert source.heading_path.endswith("The Four Golden Signals")
    # No address known (a page saved without one): no link is made up.
    assert origin_url(hit("web", {"url": None}), quote) is None
    # Other kinds keep theirs: a thread's own address, a PDF's none.
    assert origin_url(hit("perplexity", {"url": "https://perplexity.ai/t"}), quote) == (
        "https://perplexity.ai/t"
    )
    assert origin_url(hit("pdf", {"url": PAGE}), quote) is None
    line = source_line(source)
    assert "(web, The Four Golden Signals)" in line
    assert line.endswith(f"\n    {link}")


def test_exports_cite_the_page_and_link_the_passage() -> None:
    quote = "The four golden signals of monitoring are latency, traffic, errors, and saturation."
    source = Evidence(hit("web", {"url": PAGE}), quote, n=1).source()
    work = Work(4, "web", "Monitoring Distributed Systems", ["Rob Ewaschuk"], 2017, url=PAGE)
    work.publisher, work.accessed = "sre.google", "2026-12-05"
    line = reference_line(Reference(source, work))
    assert f"<{PAGE}> Passage: <{source.origin_url}>" in line
    assert "*Monitoring Distributed Systems*. The Four Golden Signals. <" in line
    [entry] = parsed(to_bibtex([work])).entries
    assert entry.entry_type == "online"
    assert entry["url"] == PAGE and entry["urldate"] == "2026-12-05"
    [item] = to_csl([work])
    assert item["type"] == "webpage" and item["URL"] == PAGE
    assert item["accessed"] == {"date-parts": [[2026, 12, 5]]}
