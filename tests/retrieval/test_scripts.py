"""Search in scripts without spaces (Japanese, Chinese) and right to left (Arabic), on the real
EPUBs: the BM25 leg finds a copied phrase on its page, and highlights land on its characters."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from quire.config import Settings
from quire.retrieval import lexical
from quire.retrieval.options import SearchOptions
from quire.retrieval.search import Searcher
from quire.storage import chunks
from quire.storage.db import Database
from tests.conftest import DOCS
from tests.retrieval.conftest import doc_id, ingest_library

JA = DOCS / "epub" / "pg39287-agony-column-ja-epub3.epub"
AR = DOCS / "epub" / "idpf-arabic-rtl.epub"
ALICE = DOCS / "epub" / "alice-epub3.epub"


# slow: Chinese and Japanese books ingested
pytestmark = [pytest.mark.both_backends, pytest.mark.slow]


@pytest.fixture(scope="module")
def library(
    tmp_path_factory: pytest.TempPathFactory, module_database_url: str | None
) -> Iterator[tuple[Settings, Database]]:
    settings, db = ingest_library(
        tmp_path_factory.mktemp("scripts"), (JA, AR, ALICE), module_database_url
    )
    yield settings, db
    db.dispose()


def _page_text(db: Database, document: int, page: int) -> str:
    with db.read() as conn:
        return chunks.page_texts(conn, [(document, page)])[(document, page)]


BM25 = SearchOptions(legs=("bm25",), limit=10)


def test_a_phrase_copied_from_a_japanese_page_is_found_there_by_bm25(
    searcher: Searcher, library: tuple[Settings, Database]
) -> None:
    _, db = library
    ja = doc_id(db, JA.name)
    text = _page_text(db, ja, 5)
    phrase = text[2000:2030]  # thirty characters from the middle of the chapter, no spaces
    assert " " not in phrase.strip()
    r = searcher.search(phrase, BM25)
    top = r.hits[0]
    assert (top.document_id, top.page) == (ja, 5), [(h.page, h.text[:20]) for h in r.hits[:3]]
    assert "bm25" in top.ranks
    # The highlights are the phrase's own characters, on the original text.
    marked = "".join(top.text[s:e] for s, e in top.highlights)
    assert phrase.strip()[:10] in marked or phrase.strip()[-10:] in marked
    # In hybrid search too: the English-only embedder's dense leg is left out for Japanese
    # (its vectors would be noise), and the search says so.
    hybrid = searcher.search(phrase, SearchOptions(limit=5))
    assert hybrid.hits[0].page == 5
    assert "dense" not in hybrid.counts
    assert any("does not cover Japanese" in n for n in hybrid.notices), hybrid.notices
    # An English question still runs the dense leg.
    assert "dense" in searcher.search("the white rabbit", SearchOptions(limit=5)).counts


def test_an_arabic_phrase_is_found_by_bm25_and_highlighted(
    searcher: Searcher, library: tuple[Settings, Database]
) -> None:
    _, db = library
    ar = doc_id(db, AR.name)
    r = searcher.search("الكائنات الأكثر بساطة كالبكتيريا", BM25)
    top = r.hits[0]
    assert top.document_id == ar and "bm25" in top.ranks
    spans = [top.text[s:e] for s, e in top.highlights]
    assert "الكائنات" in spans and any(s.startswith("كالبكتيريا") for s in spans)


def test_japanese_query_words_are_cut_where_the_script_changes() -> None:
    # Kanji compounds and katakana words are the terms; particles (hiragana) are left out,
    # a lone kanji keeps its first kana; Chinese (no kana) gives its bigrams.
    assert lexical.terms("ジェフリー・ウエストが朝食をとりに出かけた") == [
        "ジェフリー",
        "ウエスト",
        "朝食",
        "出か",
    ]
    assert lexical.phrases(["ウエスト"]) == ['"ウエ エス スト"']
    assert lexical.terms("Transformer の学習率") == ["transformer", "学習率"]
    assert lexical.terms("沙樁多深") == ["沙樁", "樁多", "多深"]
    # A query of particles only still searches for them.
    assert lexical.terms("これは") == ["これ", "れは"]


def test_question_words_are_left_out_of_chinese_and_japanese_queries() -> None:
    # As "which" and "when" are stopwords: the bigrams holding 哪 (which) go, the rest stay.
    assert lexical.terms("清朝哪位皇帝在位") == ["清朝", "位皇", "皇帝", "帝在", "在位"]
    assert lexical.terms("一九一四年の何月何日でしたか") == ["一九一四年"]
    assert lexical.terms("谁写的吗") == ["写的"]
    # A question of nothing else still searches for its words.
    assert lexical.terms("何時") == ["何時"]
    # English and other terms are untouched.
    assert lexical.terms("which emperor 皇帝") == ["emperor", "皇帝"]


def test_a_mixed_script_query_ranks_the_page_holding_both(
    searcher: Searcher, library: tuple[Settings, Database]
) -> None:
    _, db = library
    ja = doc_id(db, JA.name)
    # The Japanese book's Gutenberg page names the English title with the Japanese one.
    r = searcher.search("Gutenberg 苦悶の欄", BM25)
    assert (r.hits[0].document_id, r.hits[0].page) == (ja, 1)
    # English searches are unchanged by the Japanese book being there.
    assert searcher.search("White Rabbit pink eyes", BM25).hits[0].document_id == doc_id(
        db, ALICE.name
    )
