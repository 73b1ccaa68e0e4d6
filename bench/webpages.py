"""Main-text extraction of saved web pages, measured against a hand-made oracle.

    .venv/bin/python bench/webpages.py [--extractors trafilatura readability quire]

For each saved page in ``office/html`` that has an oracle (ORACLE below), the page's main text
as a reader sees it, and the text each extractor keeps: recall (the share of the oracle's words
the extractor kept) and precision (the share of the extractor's words that belong to the
oracle), both over word multisets (CJK: one character one word), as trafilatura's own
evaluation counts them. Results are appended to bench/results/webpages.json.

The oracle (docs/sources/web.md, "How the extraction was chosen"): neither upstream's expected
outputs (readability's ``expected.html``, trafilatura's evaluation set) ship in any package on
PyPI, so it was built by hand from each page's source: the element that holds the article as a
reader sees it (chosen by reading the HTML), its title heading included, minus what a reader
skips inside it (share buttons, "Lire aussi" inserts, the comment form), scripts and styles.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "backend"), str(Path(__file__).parent)]

import lxml.html  # noqa: E402

from common import DOCS, RESULTS_DIR, append_record, machine_info  # noqa: E402

PAGES = DOCS / "office" / "html"
#: page -> (the title's XPath or None, the article's XPath, the XPaths of what a reader skips).
ORACLE: dict[str, tuple[str | None, str, tuple[str, ...]]] = {
    "readability-google-sre-book-1.html": (
        None,
        "//section[@id='chapter_monitoring']",
        (),
    ),
    "readability-dropbox-blog.html": (
        "//section/h1",
        "//div[@class='dr-article-content__content']",
        (),
    ),
    "readability-lemonde-1.html": (
        "//article/h1",
        "//div[@id='articleBody']",
        ("//p[@class='lire']",),  # "Lire aussi : <a>…</a>" inserts
    ),
    "readability-factorio-fff-282.html": (
        None,
        "//div[contains(@class,'blog-post')]",
        (),
    ),
    "readability-v8-blog.html": (None, "//main/article", ()),
    "readability-toc-missing.html": (
        "//main/div/header/h1",
        "//article[@class='article__content']",
        (),
    ),
    "readability-pixnet.html": (
        "//ul/li/h2",
        "//div[@id='article-content-inner']",
        (),
    ),
    "trafilatura-pluralsight.com.python.html": (None, "//main/article", ()),
    "trafilatura-laviedesidees.fr.evaluation.html": (
        "//h1",
        "//div[@class='entry-content texte']",
        (),
    ),
    "trafilatura-brandenburg.de.homo-brandenburgensis.html": (
        "//article/header/h1",
        "//div[contains(@class,'field-body')]",
        (),
    ),
}
_SKIP_TAGS = ("script", "style", "noscript", "template")
_CJK = "\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff"
#: A word: a CJK character on its own, else a run of other word characters.
_WORD = re.compile(f"[{_CJK}]|[^\\W{_CJK}]+")


def words(text: str) -> Counter[str]:
    """The text's words, lower-cased (a CJK character is a word of its own)."""
    return Counter(_WORD.findall(text.lower()))


def oracle_text(path: Path) -> str:
    """The page's main text as the oracle has it (the module docstring)."""
    title, article, skipped = ORACLE[path.name]
    root = lxml.html.fromstring(path.read_bytes().decode("utf-8"))  # all nine are UTF-8
    for el in root.iter(*_SKIP_TAGS):
        el.drop_tree()
    for xpath in skipped:
        for el in root.xpath(xpath):
            el.drop_tree()
    parts = [root.xpath(title)[0].text_content()] if title else []
    parts.append(root.xpath(article)[0].text_content())
    return " ".join(" ".join(parts).split())


def extract_trafilatura(data: bytes) -> str:
    import trafilatura

    return trafilatura.extract(data, include_comments=False, include_tables=True) or ""


def extract_readability(data: bytes) -> str:
    from readability import Document

    html = Document(data).summary(html_partial=True)
    return lxml.html.fromstring(html).text_content()


def extract_quire(data: bytes) -> str:
    from quire.formats.web import read_html

    return "\n".join(p.text for p in read_html(data).pages)


EXTRACTORS = {
    "trafilatura": extract_trafilatura,
    "readability": extract_readability,
    "quire": extract_quire,
}


def score(expected: Counter[str], got: Counter[str]) -> tuple[float, float]:
    """(recall, precision) of ``got`` against ``expected``, over word multisets."""
    common = sum((expected & got).values())
    return common / max(sum(expected.values()), 1), common / max(sum(got.values()), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--extractors", nargs="+", default=list(EXTRACTORS), choices=EXTRACTORS)
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    for name in ORACLE:
        path = PAGES / name
        expected = words(oracle_text(path))
        row: dict[str, Any] = {"page": name, "oracle_words": sum(expected.values())}
        for extractor in args.extractors:
            started = time.perf_counter()
            text = EXTRACTORS[extractor](path.read_bytes())
            elapsed = time.perf_counter() - started
            recall, precision = score(expected, words(text))
            row[extractor] = {"recall": recall, "precision": precision, "seconds": elapsed}
        rows.append(row)
    header = f"{'page':48} {'words':>6}" + "".join(f" {e[:11]:>11} R/P" for e in args.extractors)
    print(header)
    for row in rows:
        cells = "".join(
            f" {row[e]['recall']:7.3f}/{row[e]['precision']:.3f}" for e in args.extractors
        )
        print(f"{row['page'][:48]:48} {row['oracle_words']:6}{cells}")
    means = {
        e: {k: sum(r[e][k] for r in rows) / len(rows) for k in ("recall", "precision", "seconds")}
        for e in args.extractors
    }
    cells = "".join(
        f" {means[e]['recall']:7.3f}/{means[e]['precision']:.3f}" for e in args.extractors
    )
    print(f"{'mean':48} {'':6}{cells}")
    print(
        "minimum "
        + ", ".join(
            f"{e}: recall {min(r[e]['recall'] for r in rows):.3f}, "
            f"precision {min(r[e]['precision'] for r in rows):.3f}"
            for e in args.extractors
        )
    )
    append_record(
        RESULTS_DIR / "webpages.json",
        {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": machine_info(os.getloadavg()[0]),
            "args": vars(args),
            "pages": rows,
            "means": means,
        },
    )


if __name__ == "__main__":
    main()
