"""Hybrid search over real documents: legs, filters inside the query, safe FTS5, mirror."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from sqlalchemy import text

from quire.config import Settings
from quire.embed.base import Embedder
from quire.errors import InputError, NotFound
from quire.retrieval import dense, fusion, lexical
from quire.retrieval.dense import mirror as dense_mirror
from quire.retrieval.filters import Filter
from quire.retrieval.highlight import highlight, highlight_patterns
from quire.retrieval.hits import Hit, from_view
from quire.retrieval.options import SearchOptions
from quire.retrieval.planner import heuristic_plan
from quire.retrieval.rerank import CrossEncoderReranker
from quire.retrieval.search import Searcher
from quire.storage import chunks
from quire.storage.backends import sqlite as sqlite_backend
from quire.storage.db import Database
from quire.synthesis import order as ordering
from quire.synthesis.order import EXACT_READ, SentenceOrder
from quire.synthesis.parse import parse_plan
from quire.text.spelling import spellings
from tests.retrieval.conftest import doc_id

pytestmark = pytest.mark.both_backends

HOSTILE = [
    'AND OR NOT "',
    '"unbalanced quote',
    "state-of-the-art NEAR(x y)",
    "pre* (group) col:umn ^start",
    "Ω≈ç√∫ 😀🎉",
    "العربية النص",
    "東京大学の研究",
    "-- ; DROP TABLE documents; --",
    "\x00\x01 control",
    "a" * 10_000,
    "the of and to",
]


def test_each_leg_finds_what_it_should(searcher: Searcher) -> None:
    r = searcher.search("White Rabbit with pink eyes", SearchOptions(limit=5))
    top = r.hits[0]
    assert top.kind == "epub" and "Rabbit" in top.text
    assert {"bm25", "dense"} <= set(top.ranks)
    assert top.scores["bm25"] > 0 and 0 < top.scores["dense"] <= 1.0001
    assert top.heading_path  # EPUB section heading path comes with the hit
    spans = [top.text[s:e].lower() for s, e in top.highlights]
    assert any(s.startswith("rabbit") for s in spans)
    for stage in ("plan", "embed", "bm25", "dense", "fusion", "hydrate", "total"):
        assert stage in r.timings_ms
    assert r.counts["bm25"] > 0 and r.counts["dense"] > 0


def test_exact_leg_matches_hard_keywords_as_substrings(searcher: Searcher) -> None:
    r = searcher.search('what does "Section 512" say', SearchOptions(limit=5))
    assert "Section 512" in r.plan.hard_keywords
    exact_hits = [h for h in r.hits if "exact" in h.ranks]
    assert exact_hits and all("section 512" in h.text.lower() for h in exact_hits)
    assert exact_hits[0].kind == "pdf"


def test_filters_apply_inside_each_leg(
    searcher: Searcher, library: tuple[Settings, Database]
) -> None:
    _, db = library
    alice = doc_id(db, "alice-epub3.epub")
    r = searcher.search("copyright law", SearchOptions(document_ids=(alice,), limit=20))
    assert r.hits and {h.document_id for h in r.hits} == {alice}
    r = searcher.search("Washington Oregon Idaho", SearchOptions(kinds=("perplexity",), limit=20))
    assert r.hits and {h.kind for h in r.hits} == {"perplexity"}
    with pytest.raises(NotFound, match="999"):
        searcher.search("anything", SearchOptions(document_ids=(999,)))


def test_legs_can_be_chosen(searcher: Searcher) -> None:
    only_bm25 = searcher.search("Pacific Northwest states", SearchOptions(legs=("bm25",)))
    # The window stage re-ranks what the lexical leg found (it is a stage, not a leg).
    assert only_bm25.hits and all(set(h.ranks) - {"window"} == {"bm25"} for h in only_bm25.hits)
    assert any("window" in h.ranks for h in only_bm25.hits)
    only_dense = searcher.search("Pacific Northwest states", SearchOptions(legs=("dense",)))
    assert only_dense.hits and all(set(h.ranks) == {"dense"} for h in only_dense.hits)


@pytest.mark.parametrize("query", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_queries_never_raise(searcher: Searcher, query: str) -> None:
    r = searcher.search(query, SearchOptions(limit=5))
    assert isinstance(r.hits, list)
    if len(query) > 2000:
        assert any("cut" in n for n in r.notices)


def test_empty_query_is_an_input_error(searcher: Searcher) -> None:
    with pytest.raises(InputError):
        searcher.search("   ")


def test_match_expression_quotes_every_term() -> None:
    assert lexical.match_expression(lexical.terms('state-of-the-art "AND" OR x*')) == (
        '"state" OR "art" OR "x"'
    )
    assert lexical.terms("the of and") == ["the", "of", "and"]  # stopwords only: keep them
    assert lexical.match_expression([]) is None


@pytest.mark.parametrize(
    ("word", "others"),
    [
        ("favourite", ["favorite"]),
        ("behavior", ["behaviour"]),
        ("organisation", ["organization"]),
        ("analyzed", ["analysed"]),
        ("centre", ["center"]),
        ("defence", ["defense"]),
        ("travelled", ["traveled"]),
        ("modeling", ["modelling"]),
        ("catalogue", ["catalog"]),
        ("programme", ["program"]),
        ("member", []),
        # A constant's name, also without its namespace (as a table lists it).
        ("r_riscv_call_plt", ["riscv_call_plt", "call_plt"]),
        ("e_flags", []),
        # Words whose other spelling would be another word, or that have none.
        ("four", []),
        ("hours", []),
        ("floor", []),
        ("filled", []),
        ("called", []),
        ("enter", []),
        ("x86_64", []),
    ],
)
def test_other_spellings_by_rule(word: str, others: list[str]) -> None:
    assert spellings(word) == [word, *others]
    assert lexical.spelled([word, "rabbit"]) == [word, *others, "rabbit"]


def test_documents_not_ready_are_invisible(
    searcher: Searcher, library: tuple[Settings, Database]
) -> None:
    _, db = library
    pnw = doc_id(db, "pnw-states-multiturn.md")
    query = "Washington Oregon Idaho population"
    assert any(h.document_id == pnw for h in searcher.search(query).hits)
    with db.write() as conn:
        conn.execute(text("UPDATE documents SET status = 'processing' WHERE id = :d"), {"d": pnw})
    try:
        for legs in (("bm25",), ("dense",), ("bm25", "dense", "exact")):
            hits = searcher.search(query, SearchOptions(legs=legs)).hits  # type: ignore[arg-type]
            assert all(h.document_id != pnw for h in hits)
    finally:
        with db.write() as conn:
            conn.execute(text("UPDATE documents SET status = 'ready' WHERE id = :d"), {"d": pnw})


@pytest.mark.sqlite_only
def test_mirror_agrees_with_sqlite_vec_and_follows_changes(
    library: tuple[Settings, Database], embedder: Embedder
) -> None:
    _, db = library
    q = embedder.embed(["rabbit hole"])[0]
    mirror = dense.DenseMirror()
    with db.read() as conn:
        mirror.refresh(conn)
        from_sqlite = dense.knn_sqlite(conn, q, k=10, flt=Filter())
    from_mirror = mirror.knn(q, k=10)
    assert [c for c, _ in from_mirror] == [c for c, _ in from_sqlite]
    np.testing.assert_allclose([s for _, s in from_mirror], [s for _, s in from_sqlite], atol=1e-4)
    before = len(mirror.ids)
    # Remove the best chunk's vector: the mirror must notice and reload.
    best = from_mirror[0][0]
    with db.write() as conn:
        blob = conn.exec_driver_sql(
            "SELECT embedding FROM vec.page_vecs WHERE rowid = ?", (best,)
        ).scalar_one()
        conn.exec_driver_sql("DELETE FROM vec.page_vecs WHERE rowid = ?", (best,))
    try:
        with db.read() as conn:
            mirror.refresh(conn)
        assert len(mirror.ids) == before - 1
        assert best not in [c for c, _ in mirror.knn(q, k=10)]
    finally:
        with db.write() as conn:
            conn.exec_driver_sql(
                "INSERT INTO vec.page_vecs(rowid, embedding) VALUES (?, ?)", (best, blob)
            )
    with db.read() as conn:
        mirror.refresh(conn)
    assert mirror.knn(q, k=1)[0][0] == best


def test_rrf_and_blend() -> None:
    fused = fusion.rrf({"a": [(1, 9.0), (2, 8.0)], "b": [(2, 0.9), (3, 0.5)]}, k=60)
    assert [c for c, _ in fused] == [2, 1, 3]
    assert fused[0][1] == pytest.approx(1 / 62 + 1 / 61)
    weighted = fusion.rrf({"a": [(1, 1.0)], "b": [(2, 1.0)]}, k=60, weights={"a": 0.5})
    assert [c for c, _ in weighted] == [2, 1]
    assert fusion.rrf({"a": [(1, 1.0), (1, 0.5), (2, 0.1)]}, k=60)[1][1] == pytest.approx(1 / 62)
    blended = fusion.blend([(1, 10.0), (2, 8.0), (4, 0.0)], [(2, 0.9), (3, 0.5)])
    assert [c for c, _ in blended] == [2, 1, 4, 3]  # 2 is in both legs; 4 beats 3 on the tie
    assert [c for c, _ in fusion.blend([(5, 1.0)], [(6, 1.0)])] == [5, 6]  # BM25 first on ties


def test_heuristic_plan_and_llm_plan_validation() -> None:
    plan = heuristic_plan('compare "safe harbor" rules in DMCA-512 and parse_args() v2.1.3')
    assert plan.strategy == "exhaustive"
    for kw in ("safe harbor", "DMCA-512", "parse_args()", "2.1.3"):
        assert any(kw in k for k in plan.hard_keywords), (kw, plan.hard_keywords)
    assert heuristic_plan("what is a rabbit").strategy == "precise"
    good = parse_plan(
        'Sure! {"strategy": "precise", "queries": ["rabbit watch", 3], '
        '"hard_keywords": "ERR-1", "hyde_passage": "The rabbit had a watch."}',
        "why the watch",
    )
    assert good is not None and good.source == "llm"
    assert good.queries[0] == "why the watch" and "3" in good.queries
    assert good.hard_keywords == ["ERR-1"]
    assert parse_plan("not json at all", "q") is None
    assert parse_plan('{"strategy": "everything"}', "q") is None
    assert parse_plan('{"queries": {"bad": 1}}', "rabbit") is None
    # A junk or failing model's plan falls back to the heuristic one: tests/synthesis/test_engine.py


@pytest.mark.parametrize(
    ("query", "keywords"),
    [
        ("What does § 1201(b) prohibit?", ["1201(b)"]),  # "§" is often written "Section"
        ("section 1201(a)(2) of the DMCA", ["1201(a)(2)", "DMCA"]),
        ("Which spec is MIL-G-7711?", ["MIL-G-7711"]),
        ("What does RFC 9110 define?", ["RFC 9110"]),
        ("What total is due on invoice FV 1/2021?", ["FV 1/2021"]),
        ("What changed in v2.3.1?", ["v2.3.1"]),
        ("How did EIP-3529 change refunds and PUSH0?", ["EIP-3529", "PUSH0"]),
        ("state-of-the-art methods", []),
        # A run of 8,000 letters is no keyword, and is skipped (it took seconds to scan).
        ("x" * 8000 + " and PUSH0", ["PUSH0"]),
        # A number with thousands separators, as written and without them (not its "000").
        ("Which row has an income of $5,000?", ["5,000", "5000"]),
    ],
)
def test_identifiers_with_punctuation_are_hard_keywords_whole(
    query: str, keywords: list[str]
) -> None:
    assert heuristic_plan(query).hard_keywords == keywords


def test_a_statute_section_finds_its_page_through_the_exact_leg(searcher: Searcher) -> None:
    r = searcher.search("What does § 1201(g)(5) ask for?", SearchOptions(limit=10))
    exact_hits = [h for h in r.hits if "exact" in h.ranks]
    assert exact_hits and all("1201(g)(5)" in h.text for h in exact_hits)
    assert r.hits[0].kind == "pdf" and "1201(g)(5)" in r.hits[0].text


def test_highlight_spans_are_merged_and_case_insensitive() -> None:
    pats = highlight_patterns(["Running rabbits"], ["ERR-4"])
    text = "The RABBIT was running; err-4 and rabbit-hole."
    spans = highlight(text, pats)
    assert [text[s:e] for s, e in spans] == ["RABBIT", "running", "err-4", "rabbit"]


def test_a_five_letter_plural_lights_its_singular() -> None:
    """ "fails" lights "Cert fail" and "failed" (a five-letter word was matched whole); "class",
    "focus" and "virus" are not plurals."""
    pats = highlight_patterns(["certificate fails class focus virus"], [])
    text = "Cert fail; it failed. A clas, a classes, focu, viru."
    assert [text[s:e] for s, e in highlight(text, pats)] == ["fail", "failed", "classes"]


def test_a_constant_lights_whole_or_without_its_namespace_not_as_a_prefix() -> None:
    pats = highlight_patterns(["R_RISCV_CALL_PLT"], [])
    text = "R_RISCV_CALL_PLT, 19 CALL_PLT; R_RISCV_CALL is deprecated; call_foo"
    assert [text[s:e] for s, e in highlight(text, pats)] == ["R_RISCV_CALL_PLT", "CALL_PLT"]


def test_a_word_in_its_other_spelling_finds_and_lights_the_page(searcher: Searcher) -> None:
    """The DMCA summary says "organization"; asked "organisation", BM25 finds its page and the
    highlight lands on the word (the porter stemmer cuts "organis" and "organ")."""
    r = searcher.search("organisation", SearchOptions(limit=5, legs=("bm25",)))
    assert r.hits and r.hits[0].kind == "pdf"
    top = r.hits[0]
    assert any(top.text[s:e].lower().startswith("organization") for s, e in top.highlights)
    # And back: the American spelling is found from the British one.
    pats = highlight_patterns(["favourite colour"], [])
    text = "My favorite color is blue; my four hours are filled."
    assert [text[s:e] for s, e in highlight(text, pats)] == ["favorite", "color"]


def test_inner_patterns_match_a_term_inside_camel_case() -> None:
    """With ``inner``, a term matches where a camel-cased word has it ("addTextToElement",
    a PDF subscript glued on: "FShanghai"); not inside a lower-case word, and not at all
    without ``inner``."""
    inner = highlight_patterns(["element Shanghai"], [], inner=True)
    plain = highlight_patterns(["element Shanghai"], [])
    for camel in ("teletype.addTextToElement(para)", "Name: FShanghai"):
        assert any(p.search(camel) for p in inner)
        assert not any(p.search(camel) for p in plain)
    assert not any(p.search("subelements, XSHANGHAI") for p in inner)


def test_a_question_about_the_end_of_a_book_prefers_its_last_pages(
    library: tuple[Settings, Database], embedder: Embedder
) -> None:
    """Without a cross-encoder, "the book's closing paragraph" puts Alice's last chapter
    (the sister's dream, section 11 of 11) first; the same order without the end in mind
    puts the first chapter's page first."""
    settings, db = library
    question = "How does Alice's sister picture her in the book's closing paragraph?"
    plain = Searcher(db, settings, embedder)
    try:
        hits = plain.search(question, SearchOptions(limit=10, rerank=False)).hits
    finally:
        plain.close()
    alice = doc_id(db, "alice-epub3.epub")
    assert ordering.asks_for_the_end(question)
    ordered = SentenceOrder(db, embedder)(question, list(hits))
    assert (ordered[0].document_id, ordered[0].page) == (alice, 11)
    assert "sister" in ordered[0].text
    unaware = ordering.by_best_sentence(question, hits, embedder)
    assert (unaware[0].document_id, unaware[0].page) != (alice, 11)


def test_a_question_about_the_end_reads_the_last_pages_after_the_first_ten(
    library: tuple[Settings, Database], embedder: Embedder
) -> None:
    """The order by sentence reads a document's last pages among the first ``END_REACH`` hits
    when the question is about its end: the searcher hands it that many, and returns its
    limit."""
    settings, db = library
    question = "How does Alice's sister picture her in the book's closing paragraph?"
    seen: list[int] = []

    class Reading:
        def reach(self, query: str) -> int:
            return ordering.END_REACH if ordering.asks_for_the_end(query) else 0

        def __call__(self, query: str, hits: list[Hit]) -> list[Hit]:
            seen.append(len(hits))
            return hits

    searcher = Searcher(db, settings, embedder, order=Reading())
    try:
        assert len(searcher.search(question, SearchOptions(limit=3)).hits) == 3
        searcher.search("Alice's sister", SearchOptions(limit=3))
        hits = searcher.search(question, SearchOptions(limit=30, rerank=False)).hits
    finally:
        searcher.close()
    assert seen == [ordering.END_REACH, 3]
    alice = doc_id(db, "alice-epub3.epub")
    end = [h for h in hits if (h.document_id, h.page) == (alice, 11)]
    others = [h for h in hits if (h.document_id, h.page) != (alice, 11)]
    assert end and len(others) >= ordering.ORDER_TOP
    ordered = SentenceOrder(db, embedder)(question, others[: ordering.ORDER_TOP] + end)
    assert (ordered[0].document_id, ordered[0].page) == (alice, 11)


def test_a_hit_ending_its_page_is_read_with_the_next_pages_opening(
    library: tuple[Settings, Database], embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The DMCA summary's "General approach" goes on over page 3's foot: the order reads page
    4's opening passage after page 3's last one, and it answers the question. The
    introduction's last passage brings nothing (page 2 opens Title I)."""
    settings, db = library
    dmca = doc_id(db, "dmca-summary.pdf")
    with db.read() as conn:
        last = [
            conn.execute(
                text(
                    "SELECT id FROM page_chunks WHERE document_id = :d AND page = :p "
                    "ORDER BY ordinal DESC LIMIT 1"
                ),
                {"d": dmca, "p": page},
            ).scalar_one()
            for page in (3, 1)
        ]
        views = chunks.ready_views(conn, last)
    head = [from_view(views[cid]) for cid in last]
    question = "Is making or selling devices that circumvent technological measures prohibited?"

    def pages() -> list[int]:
        return [h.page for h in SentenceOrder(db, embedder)(question, list(head))]

    assert pages() == [4, 3, 1]
    monkeypatch.setattr(ordering, "CONTINUED", 0)
    assert pages() == [3, 1]


def test_bm25_only_while_the_vector_store_rebuilds(
    searcher: Searcher, library: tuple[Settings, Database]
) -> None:
    _, db = library
    with db.write() as conn:
        conn.exec_driver_sql("UPDATE vec.page_vecs_meta SET state = 'rebuilding'")
    try:
        r = searcher.search("White Rabbit")
        assert r.hits and all("dense" not in h.ranks for h in r.hits)
        assert any("rebuilt" in n for n in r.notices)
    finally:
        with db.write() as conn:
            conn.exec_driver_sql("UPDATE vec.page_vecs_meta SET state = 'ready'")
    assert any("dense" in h.ranks for h in searcher.search("White Rabbit").hits)


def test_search_reranks_with_a_real_onnx_cross_encoder(
    library: tuple[Settings, Database], embedder: Embedder, fp32: CrossEncoderReranker
) -> None:
    settings, db = library
    searcher = Searcher(db, settings.model_copy(update={"rerank_min_logit": -1e9}), embedder, fp32)
    try:
        r = searcher.search("White Rabbit", SearchOptions(limit=10))
    finally:
        searcher.close()
    assert r.rerank is not None and r.rerank.scored >= 10
    assert "reranked" in r.rerank.summary and "rerank" in r.timings_ms
    logits = [h.rerank for h in r.hits]
    assert all(v is not None for v in logits)
    assert logits == sorted(logits, reverse=True)  # type: ignore[type-var]
    assert len(set(logits)) > 1  # raw logits, not a normalised constant


def test_the_reranker_reads_each_candidates_best_sentences(
    library: tuple[Settings, Database], embedder: Embedder
) -> None:
    class Recording:
        """Scores by passage length, and keeps what it was given."""

        name = "recording"

        def __init__(self) -> None:
            self.passages: list[str] = []

        def score(self, query: str, passages: list[str]) -> np.ndarray:
            self.passages.extend(passages)
            return np.array([len(p) for p in passages], dtype=np.float32)

        def close(self) -> None:
            pass

    settings, db = library
    query = "White Rabbit pink eyes"
    for chars in (300, 0):
        reranker = Recording()
        tuned = settings.model_copy(update={"rerank_passage_chars": chars})
        searcher = Searcher(db, tuned, embedder, reranker)
        try:
            r = searcher.search(query, SearchOptions(limit=10))
        finally:
            searcher.close()
        assert r.rerank is not None and r.rerank.scored == len(reranker.passages) >= 10
        assert r.rerank.mean_chars == pytest.approx(
            sum(map(len, reranker.passages)) / len(reranker.passages), abs=0.1
        )
        for hit in r.hits:
            assert hit.rerank_span is not None
            start, end = hit.rerank_span
            assert hit.text[start:end] in reranker.passages
            assert hit.rerank == end - start  # the score of exactly that passage
            if chars:
                assert end - start <= chars
            else:
                assert (start, end) == (0, len(hit.text))
        if chars:
            # Where a long chunk names the rabbit, the part read is around the name.
            read = [
                h.text[slice(*h.rerank_span)]
                for h in r.hits
                if h.rerank_span and len(h.text) > 600 and "Rabbit" in h.text
            ]
            assert read and [w for w in read if "rabbit" not in w.lower()] == []


def test_a_failing_reranker_keeps_fusion_order(
    library: tuple[Settings, Database], embedder: Embedder
) -> None:
    class Broken:
        name = "broken"

        def score(self, query: str, passages: object) -> np.ndarray:
            raise RuntimeError("onnx exploded")

        def close(self) -> None:
            pass

    settings, db = library
    searcher = Searcher(db, settings, embedder, Broken())
    try:
        r = searcher.search("White Rabbit", SearchOptions(limit=5))
    finally:
        searcher.close()
    assert r.hits and r.rerank is None
    assert any("reranking failed" in n for n in r.notices)


@pytest.mark.sqlite_only
def test_mirror_appends_new_rows_without_reloading(
    library: tuple[Settings, Database], embedder: Embedder
) -> None:
    _, db = library
    mirror = dense.DenseMirror()
    with db.read() as conn:
        mirror.refresh(conn)
    before, rows_file = len(mirror.ids), mirror._rows
    vec = embedder.embed(["a passage added after the mirror was loaded"])[0]
    new_id = int(mirror.ids.max()) + 1000
    with db.write() as conn:
        conn.exec_driver_sql(
            "INSERT INTO vec.page_vecs(rowid, embedding) VALUES (?, ?)", (new_id, vec.tobytes())
        )
    try:
        with db.read() as conn:
            mirror.refresh(conn)
        assert len(mirror.ids) == before + 1 and mirror.ids[-1] == new_id
        np.testing.assert_allclose(mirror.matrix[-1], vec)
        assert mirror._rows is rows_file  # appended to, not reloaded
        # No chunk row behind it (document -1): never returned.
        assert new_id not in [c for c, _ in mirror.knn(vec, k=5)]
        with db.read() as conn:
            mirror.refresh(conn)  # nothing changed: the O(1) check keeps it as it is
        assert len(mirror.ids) == before + 1
    finally:
        with db.write() as conn:
            conn.exec_driver_sql("DELETE FROM vec.page_vecs WHERE rowid = ?", (new_id,))
        mirror.close()


@pytest.mark.sqlite_only
def test_mirror_signature_from_vec0s_rowid_table_is_the_tables_own(
    library: tuple[Settings, Database], embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, db = library

    def scanned() -> tuple[int, int, int]:
        with db.read() as conn:
            row = conn.exec_driver_sql(
                "SELECT count(*), max(rowid), sum(rowid) FROM vec.page_vecs"
            ).one()
        return int(row[0]), int(row[1]), int(row[2])

    def signature() -> tuple[int, int, int]:
        with db.read() as conn:
            sig = sqlite_backend.vector_signature(conn)
        assert sig is not None
        return sig.count, sig.max_id, sig.sum_id

    assert signature() == scanned()
    vec = embedder.embed(["one more passage"])[0]
    with db.read() as conn:
        low = int(conn.exec_driver_sql("SELECT min(rowid) FROM vec.page_vecs").scalar_one())
        blob = conn.exec_driver_sql(
            "SELECT embedding FROM vec.page_vecs WHERE rowid = ?", (low,)
        ).scalar_one()
    with db.write() as conn:  # a delete and an insert of a higher id: count unchanged
        conn.exec_driver_sql("DELETE FROM vec.page_vecs WHERE rowid = ?", (low,))
        conn.exec_driver_sql(
            "INSERT INTO vec.page_vecs(rowid, embedding) VALUES (?, ?)", (10**6, vec.tobytes())
        )
    try:
        assert signature() == scanned()
        # A sqlite-vec without that shadow table: the vec0 table is scanned instead.
        monkeypatch.setattr(sqlite_backend, "_ROWIDS_TABLE", "no_such_table")
        assert signature() == scanned()
    finally:
        with db.write() as conn:
            conn.exec_driver_sql("DELETE FROM vec.page_vecs WHERE rowid = ?", (10**6,))
            conn.exec_driver_sql(
                "INSERT INTO vec.page_vecs(rowid, embedding) VALUES (?, ?)", (low, blob)
            )


@pytest.mark.sqlite_only
def test_a_dense_mirror_that_cannot_spill_falls_back_to_sqlite_vec(
    searcher: Searcher,
    embedder: Embedder,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def full(*_args: object) -> None:
        raise OSError(28, "No space left on device")

    q = embedder.embed(["rabbit hole"])[0]
    with monkeypatch.context() as patch:
        patch.setattr(dense_mirror._RowFile, "write", full)
        with searcher.db.read() as conn:
            got = searcher._knn(conn, q, flt=Filter())
            want = dense.knn_sqlite(conn, q, k=searcher.settings.dense_k, flt=Filter())
    assert got == want and "searching sqlite-vec" in caplog.text
    # Space again: the next search loads the mirror and answers from it.
    with searcher.db.read() as conn:
        again = searcher._knn(conn, q, flt=Filter())
    assert isinstance(searcher.legs.dense, dense.MirrorDense)
    assert len(searcher.legs.dense.mirror.ids) > 0
    assert [c for c, _ in again] == [c for c, _ in want]


def test_a_question_naming_an_identifier_reads_the_exact_legs_first_hits(
    library: tuple[Settings, Database], embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A question naming an identifier (``1201(a)(1)``) is handed ``END_REACH`` hits, and the
    order by sentence reads, beside the first ten, those the exact leg put in its first
    ``EXACT_READ`` however low fusion put them; not the exact leg's later ones, and nothing
    more for a question naming none."""
    settings, db = library
    question = "What does section 1201(a)(1) of the DMCA prohibit?"
    order = SentenceOrder(db, embedder)
    assert order.reach(question) == ordering.END_REACH
    assert order.reach("How does Alice meet the White Rabbit?") == 0
    searcher = Searcher(db, settings, embedder)
    try:
        found = searcher.search(question, SearchOptions(limit=20, rerank=False)).hits
    finally:
        searcher.close()
    assert len(found) == 20
    hits = [replace(h, ranks={k: v for k, v in h.ranks.items() if k != "exact"}) for h in found]
    hits[14] = replace(hits[14], ranks={**hits[14].ranks, "exact": EXACT_READ})
    hits[16] = replace(hits[16], ranks={**hits[16].ranks, "exact": EXACT_READ + 1})
    read: list[list[int]] = []
    real = ordering.by_best_sentence

    def spy(question: str, head: list[Hit], *args: object, **kwargs: object) -> list[Hit]:
        read.append([h.chunk_id for h in head])
        return real(question, head, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ordering, "by_best_sentence", spy)
    monkeypatch.setattr(ordering, "CONTINUED", 0)  # passages over a page's foot: another test
    ordered = order(question, hits)
    first_ten = [h.chunk_id for h in hits[: ordering.ORDER_TOP]]
    assert read == [[*first_ten, hits[14].chunk_id]]
    assert sorted(h.chunk_id for h in ordered) == sorted(h.chunk_id for h in hits)
