"""The BM25 leg from cached term scores ranks exactly as FTS5's bm25() does, on a real SQLite
file: frequent and rare terms, headings, filters, hidden documents, and after changes."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from quire.config import Settings
from quire.retrieval.filters import Filter
from quire.retrieval.lexical.fts5 import Fts5Lexical
from quire.retrieval.lexical.term_scores import TermScores
from quire.storage import chunks, term_postings
from quire.storage.backends import fts5
from quire.storage.backends.base import Averages
from quire.storage.db import Database
from quire.storage.migrate import open_database
from quire.text.stopwords import STOPWORDS

# Frequent words (one in > half the chunks, where FTS5 floors the IDF), a middle band, rare words.
FREQUENT = ["alpha", "beta", "gamma"]
MIDDLE = [f"mid{i}" for i in range(20)]
RARE = [f"rare{i}" for i in range(300)]
KINDS = ("pdf", "epub", "markdown")
QUERIES = [
    "alpha",
    "alpha beta gamma",
    "alpha rare3 mid4",
    "rare1 rare2 rare3",
    "beta mid1 mid2 rare7 rare8",
    "gamma running runs",  # two terms, one porter stem: two phrases
    "section alpha",  # 'section' is in the heading column too
    "snake_case words",  # one term, a two-token phrase
    "nothingmatchesthis",
    "the of and",  # stopwords only
]


def _text(rng: np.random.Generator) -> str:
    words = []
    for _ in range(int(rng.integers(20, 120))):
        u = rng.random()
        if u < 0.25:
            words.append(FREQUENT[int(rng.integers(len(FREQUENT)))])
        elif u < 0.55:
            words.append(MIDDLE[int(rng.integers(len(MIDDLE)))])
        elif u < 0.6:
            words.append(["running", "runs", "snake_case words"][int(rng.integers(3))])
        else:
            words.append(RARE[min(int(rng.zipf(1.3)), len(RARE)) - 1])
    return " ".join(words)


def add_document(
    db: Database, doc_id: int, n_chunks: int, seed: int, status: str = "ready"
) -> None:
    rng = np.random.default_rng(seed)
    now = "2026-01-01 00:00:00.000000"
    sha = hashlib.sha256(f"doc-{doc_id}-{seed}".encode()).hexdigest()
    with db.write() as conn:
        conn.exec_driver_sql(
            "INSERT INTO documents (id, kind, title, filename, sha256, byte_size, page_count, "
            "chunk_count, status, stored_path, created_at, updated_at, metadata) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (doc_id, KINDS[doc_id % 3], f"d{doc_id}", f"d{doc_id}.md", sha, 1, n_chunks,
             n_chunks, status, f"files/{sha}", now, now, "{}"),
        )  # fmt: skip
        for i in range(n_chunks):
            text = _text(rng)
            conn.exec_driver_sql(
                "INSERT INTO page_chunks (document_id, page, ordinal, heading_path, text, "
                "content_hash, char_count, source) VALUES (?,?,?,?,?,?,?,?)",
                (doc_id, i + 1, 0, f"Section {i % 4} > alpha" if i % 5 == 0 else "Intro",
                 text, hashlib.sha256(text.encode()).hexdigest(), len(text), "text_layer"),
            )  # fmt: skip


@pytest.fixture
def corpus(tmp_path: Path) -> Iterator[Database]:
    db = open_database(Settings(data_dir=tmp_path / "data"))
    for doc_id in range(1, 7):
        add_document(db, doc_id, 60, seed=doc_id)
    yield db
    db.dispose()


def fts5_ranking(db: Database, query: str, flt: Filter, limit: int) -> list[tuple[int, float]]:
    with db.read() as conn:
        return Fts5Lexical().bm25(conn, query, limit=limit, flt=flt)


def cached_ranking(
    db: Database, cache: TermScores, query: str, flt: Filter, limit: int
) -> list[tuple[int, float]]:
    with db.read() as conn:
        return Fts5Lexical(cache).bm25(conn, query, limit=limit, flt=flt)


def assert_same_ranking(
    got: list[tuple[int, float]], want: list[tuple[int, float]], tol: float = 1e-12
) -> None:
    """The same scores position by position; ids may differ only within ties."""
    assert len(got) == len(want)
    np.testing.assert_allclose([s for _, s in got], [s for _, s in want], rtol=tol, atol=tol)
    for (gid, gs), (wid, _) in zip(got, want, strict=True):
        if gid != wid:
            tied = {i for i, s in want if abs(s - gs) <= 1e3 * tol * max(1.0, abs(gs))}
            assert gid in tied or abs(gs - want[-1][1]) <= 1e3 * tol * max(1.0, abs(gs))


def check_all(db: Database, cache: TermScores, flt: Filter | None = None, limit: int = 25) -> None:
    flt = flt or Filter()
    for q in QUERIES:
        assert_same_ranking(
            cached_ranking(db, cache, q, flt, limit), fts5_ranking(db, q, flt, limit)
        )


def test_ranking_equals_fts5_bm25(corpus: Database) -> None:
    cache = TermScores()
    try:
        with corpus.read() as conn:
            share = conn.exec_driver_sql(
                "SELECT count(*) * 1.0 / (SELECT count(*) FROM page_chunks) FROM page_chunks_fts "
                "WHERE page_chunks_fts MATCH 'alpha'"
            ).scalar_one()
        assert share > 0.5  # the IDF floor is exercised
        for limit in (1, 10, 200, 1000):
            check_all(corpus, cache, limit=limit)
        # With the cache warm, and with another heading weight (its own entries).
        check_all(corpus, cache)
        with corpus.read() as conn:
            want = Fts5Lexical().bm25(
                conn, "section alpha", limit=20, flt=Filter(), heading_weight=2.0
            )
        with corpus.read() as conn:
            got = Fts5Lexical(cache).bm25(
                conn, "section alpha", limit=20, flt=Filter(), heading_weight=2.0
            )
        assert_same_ranking(got, want)
        assert cached_ranking(corpus, cache, "nothingmatchesthis", Filter(), 10) == []
    finally:
        cache.close()


def test_filters_and_documents_that_are_not_ready(corpus: Database) -> None:
    cache = TermScores()
    try:
        check_all(corpus, cache, Filter(document_ids=(2, 5)))
        check_all(corpus, cache, Filter(kinds=("epub",)))
        check_all(corpus, cache, Filter(document_ids=(1, 2), kinds=("epub",)))
        got = cached_ranking(corpus, cache, "alpha beta", Filter(document_ids=(3,)), 500)
        with corpus.read() as conn:
            doc3 = {
                int(r[0])
                for r in conn.exec_driver_sql("SELECT id FROM page_chunks WHERE document_id = 3")
            }
        assert got and {cid for cid, _ in got} <= doc3
        with corpus.write() as conn:
            conn.exec_driver_sql("UPDATE documents SET status = 'processing' WHERE id = 3")
        hidden = cached_ranking(corpus, cache, "alpha beta", Filter(), 1000)
        assert hidden and not {cid for cid, _ in hidden} & doc3
        check_all(corpus, cache)
        with corpus.write() as conn:
            conn.exec_driver_sql("UPDATE documents SET status = 'ready' WHERE id = 3")
        assert {cid for cid, _ in cached_ranking(corpus, cache, "alpha", Filter(), 1000)} & doc3
    finally:
        cache.close()


def test_follows_inserts_deletes_and_updates(corpus: Database) -> None:
    cache = TermScores()
    try:
        check_all(corpus, cache)
        # A commit that leaves the index alone (a job heartbeat, a title) keeps the terms.
        terms = cache.stats()["terms"]
        with corpus.write() as conn:
            conn.exec_driver_sql("UPDATE documents SET title = 'renamed' WHERE id = 1")
        check_all(corpus, cache)
        assert cache.stats()["terms"] == terms
        # Inserts: the new rows join the cached row list, every term is scored again.
        add_document(corpus, 7, 40, seed=70)
        check_all(corpus, cache)
        with corpus.read() as conn:
            ids = [r[0] for r in conn.exec_driver_sql("SELECT id FROM page_chunks ORDER BY id")]
        assert cache._index is not None and cache._index.ids.tolist() == ids
        # A document indexed but not ready yet stays invisible.
        add_document(corpus, 8, 10, seed=80, status="processing")
        check_all(corpus, cache)
        # Deletes (the row list is read again), and an in-place heading change (the FTS5 row
        # is replaced under the same id).
        with corpus.write() as conn:
            chunks.delete_document_chunks(conn, 2)
            conn.exec_driver_sql(
                "UPDATE page_chunks SET heading_path = 'Section alpha alpha' "
                "WHERE id IN (SELECT id FROM page_chunks WHERE document_id = 4 LIMIT 5)"
            )
        check_all(corpus, cache)
        with corpus.read() as conn:
            gone = conn.exec_driver_sql("SELECT count(*) FROM page_chunks WHERE document_id = 2")
            assert gone.scalar_one() == 0
    finally:
        cache.close()


def test_memory_budget_evicts_least_recently_used_terms(corpus: Database) -> None:
    cache = TermScores(max_mb=0.002)  # ~170 postings: less than one frequent term
    try:
        check_all(corpus, cache)
        stats = cache.stats()
        assert stats["terms"] >= 1
        assert stats["postings"] <= cache.max_postings or stats["terms"] == 1
    finally:
        cache.close()


def test_searcher_uses_the_cache_and_can_do_without(corpus: Database, tmp_path: Path) -> None:
    from quire.retrieval.options import SearchOptions
    from quire.retrieval.search import Searcher

    on = Searcher(corpus, Settings(data_dir=tmp_path / "data"), None)
    off = Searcher(corpus, Settings(data_dir=tmp_path / "data", bm25_cache_mb=0), None)
    try:
        on_leg, off_leg = on.legs.lexical, off.legs.lexical
        assert isinstance(on_leg, Fts5Lexical) and isinstance(off_leg, Fts5Lexical)
        assert on_leg.cache is not None and off_leg.cache is None
        opts = SearchOptions(legs=("bm25",), rerank=False, limit=30)
        a = on.search("alpha rare3 mid4", opts)
        b = off.search("alpha rare3 mid4", opts)
        assert_same_ranking(
            [(h.chunk_id, h.scores["bm25"]) for h in a.hits],
            [(h.chunk_id, h.scores["bm25"]) for h in b.hits],
            tol=1e-5,  # hits carry rounded scores
        )
        assert on_leg.cache.stats()["terms"] == 3
    finally:
        on.close()
        off.close()


# -- the frequent terms' postings stored next to FTS5 (storage/term_postings.py) -------------

MIN_DF = 5  # of 360 chunks: the frequent and middle words and the commonest rare ones


@pytest.fixture
def stored(corpus: Database) -> Database:
    """The corpus with its frequent terms' postings read, as the idle worker does."""
    done = term_postings.refresh(corpus, MIN_DF, skip_words=STOPWORDS)
    assert done["terms"] >= len(FREQUENT) + len(MIDDLE) and not done["stopped"]
    return corpus


def stored_stems(db: Database) -> set[str]:
    with db.read() as conn:
        return {str(r[0]) for r in conn.exec_driver_sql("SELECT term FROM term_postings")}


def test_stored_postings_rank_as_fts5_bm25(stored: Database) -> None:
    with stored.read() as conn:
        df = {
            s: conn.exec_driver_sql(
                "SELECT count(*) FROM page_chunks_fts WHERE page_chunks_fts MATCH ?", (s,)
            ).scalar_one()
            for s in ("alpha", "mid3", "rare0", "rare250")
        }
    stems = stored_stems(stored)
    # Exactly the stems in at least MIN_DF chunks ("running" and "runs" are one: "run").
    assert {"alpha", "beta", "gamma", "mid3", "section", "run"} <= stems
    assert ("rare0" in stems) == (df["rare0"] >= MIN_DF) and "rare250" not in stems
    assert df["rare250"] < MIN_DF
    cache = TermScores()
    try:
        for limit in (1, 10, 200, 1000):
            check_all(stored, cache, limit=limit)
            cache.clear(keep_rows=True)  # every term from the table again, not the cache
        assert cache.stats()["from_table"] >= 4 * 8
        with stored.read() as conn:
            want = Fts5Lexical().bm25(
                conn, "section alpha", limit=20, flt=Filter(), heading_weight=2.0
            )
            got = Fts5Lexical(cache).bm25(
                conn, "section alpha", limit=20, flt=Filter(), heading_weight=2.0
            )
        assert_same_ranking(got, want)
        check_all(stored, cache, Filter(document_ids=(2, 5)))
    finally:
        cache.close()


def test_an_unreadable_entry_leaves_the_term_to_fts5(
    stored: Database, caplog: pytest.LogCaptureFixture
) -> None:
    with stored.write() as conn:  # an entry of another layout (an older Quire's)
        conn.exec_driver_sql("UPDATE term_postings SET body = zeroblob(36) WHERE term = 'alpha'")
    cache = TermScores()
    try:
        check_all(stored, cache)
        assert "unreadable" in caplog.text
    finally:
        cache.close()


def test_stored_postings_follow_inserts_and_deletes_and_updates_empty_them(
    stored: Database,
) -> None:
    cache = TermScores()
    try:
        # Rows added after the entries (their ids above ``upto``) are scored by FTS5 with them.
        add_document(stored, 7, 40, seed=70)
        before = cache.stats()["from_table"]
        check_all(stored, cache)
        assert cache.stats()["from_table"] > before
        # A deleted document's postings are dropped against the live rows.
        with stored.write() as conn:
            chunks.delete_document_chunks(conn, 2)
        cache.clear(keep_rows=True)
        before = cache.stats()["from_table"]
        check_all(stored, cache)
        assert cache.stats()["from_table"] > before
        with stored.read() as conn:
            assert term_postings.due(conn, MIN_DF)  # 100 of 360 rows changed
        # An in-place change of a chunk's text is the one an entry cannot follow: the trigger
        # empties the table, and FTS5 ranks alone until the worker reads it again.
        with stored.write() as conn:
            conn.exec_driver_sql(
                "UPDATE page_chunks SET heading_path = 'Section alpha alpha' "
                "WHERE id IN (SELECT id FROM page_chunks WHERE document_id = 4 LIMIT 5)"
            )
        assert stored_stems(stored) == set()
        cache.clear(keep_rows=True)
        before = cache.stats()["from_table"]
        check_all(stored, cache)
        assert cache.stats()["from_table"] == before
        term_postings.refresh(stored, MIN_DF, skip_words=STOPWORDS)
        with stored.read() as conn:
            assert not term_postings.due(conn, MIN_DF)
        cache.clear(keep_rows=True)
        check_all(stored, cache)
        assert cache.stats()["from_table"] > before
    finally:
        cache.close()


def test_due_and_an_interrupted_refresh(corpus: Database) -> None:
    with corpus.read() as conn:
        assert term_postings.due(conn, MIN_DF)  # never read, and 360 rows
        assert not term_postings.due(conn, 1000)  # no term can be in 1,000 of 360 chunks
    stopped = term_postings.refresh(corpus, MIN_DF, should_stop=lambda: True)
    assert stopped["stopped"] and stopped["terms"] == 0
    with corpus.read() as conn:
        assert term_postings.due(conn, MIN_DF)  # still due: nothing was recorded as read
    term_postings.refresh(corpus, MIN_DF, skip_words=["alpha"])
    assert "alpha" not in stored_stems(corpus) and "beta" in stored_stems(corpus)
    with corpus.read() as conn:
        assert not term_postings.due(conn, MIN_DF)
        assert term_postings.due(conn, MIN_DF + 1)  # another threshold: read again
    add_document(corpus, 7, 10, seed=70)  # 10 of 370 rows: under REFRESH_SHARE
    with corpus.read() as conn:
        assert not term_postings.due(conn, MIN_DF)
    add_document(corpus, 8, 20, seed=80)
    with corpus.read() as conn:
        assert term_postings.due(conn, MIN_DF)


def test_tokenizer_makes_fts5s_stems(corpus: Database) -> None:
    with corpus.read() as conn:
        tokenizer = fts5.index_tokenizer(conn)
    try:
        assert tokenizer.stems("Running systems' Café") == ["run", "system", "cafe"]
        assert tokenizer.stems("snake_case") == ["snake", "case"]  # a two-token phrase
        assert tokenizer.stems('say "hi"') == ["sai", "hi"]
        assert tokenizer.stems("") == []
    finally:
        tokenizer.close()


def test_the_idle_worker_reads_them_and_yields_to_a_queued_job(
    corpus: Database, tmp_path: Path
) -> None:
    from quire.ingest.worker import Worker
    from quire.storage import jobs
    from tests.fakes.embedder import CountingEmbedder

    settings = Settings(data_dir=tmp_path / "data", bm25_frequent_df=MIN_DF)
    worker = Worker(settings, corpus, CountingEmbedder())
    worker.run(drain=True)  # the re-embed job (another embedder), then idle: it reads them
    assert {"alpha", "beta", "mid3"} <= stored_stems(corpus)
    assert not {"the", "and"} & stored_stems(corpus)  # stopwords' stems are left out
    # A job queued while it reads: it stops and leaves the table due, the job goes first.
    add_document(corpus, 7, 40, seed=70)
    with corpus.write() as conn:
        jobs.enqueue(conn, None, "reembed")
    worker.refresh_terms()
    with corpus.read() as conn:
        assert term_postings.due(conn, MIN_DF)
    # Off: nothing is read.
    off = Worker(
        Settings(data_dir=tmp_path / "data", bm25_frequent_df=0), corpus, CountingEmbedder()
    )
    with corpus.write() as conn:
        conn.exec_driver_sql("DELETE FROM ingest_jobs")
        conn.exec_driver_sql("DELETE FROM term_postings")
        conn.exec_driver_sql("DELETE FROM term_postings_state")
    off.refresh_terms()
    assert stored_stems(corpus) == set()


def test_one_worker_reads_them_at_a_time(corpus: Database) -> None:
    claim = json.dumps({"owner": "other-worker", "at": time.time()})
    with corpus.write() as conn:
        conn.exec_driver_sql(
            "INSERT INTO term_postings_state(key, value) VALUES ('claim', ?)", (claim,)
        )
    skipped = term_postings.refresh(corpus, MIN_DF, owner="me")
    assert skipped["skipped"] == "claimed" and stored_stems(corpus) == set()
    # A claim older than CLAIM_S is a dead worker's: taken over, and released after.
    stale = json.dumps({"owner": "other-worker", "at": time.time() - term_postings.CLAIM_S - 1})
    with corpus.write() as conn:
        conn.exec_driver_sql(
            "UPDATE term_postings_state SET value = ? WHERE key = 'claim'", (stale,)
        )
    done = term_postings.refresh(corpus, MIN_DF, owner="me")
    assert "skipped" not in done and "alpha" in stored_stems(corpus)
    with corpus.read() as conn:
        keys = {r[0] for r in conn.exec_driver_sql("SELECT key FROM term_postings_state")}
    assert keys == {"state"}


def test_positions_of_chunk_ids_dense_and_sparse() -> None:
    from quire.retrieval.lexical.term_scores import _Index

    for ids in (np.array([2, 3, 5, 8, 9]), np.array([2, 3, 5, 8, 90_000])):  # table, search
        index = _Index(None, ids, np.zeros(len(ids), np.int64), Averages(5, 50))
        asked = np.array([3, 4, 9, 8, 1, 100_000, 2])
        pos, known = index.positions(asked)
        assert known.tolist() == [True, False, ids[-1] == 9, True, False, False, True]
        assert [int(ids[p]) for p, k in zip(pos, known, strict=True) if k] == [
            a for a, k in zip(asked.tolist(), known, strict=True) if k
        ]
        assert (index._where is not None) == (ids[-1] == 9)


def test_status_says_whether_they_are_read(corpus: Database) -> None:
    with corpus.read() as conn:
        assert term_postings.status(conn, 0) == (
            True,
            "off (QUIRE_BM25_FREQUENT_DF=0): BM25 ranks in FTS5 alone",
        )
        ok, detail = term_postings.status(conn, 1000)
        assert ok and detail.startswith("not needed yet: 360 chunks")
        ok, detail = term_postings.status(conn, MIN_DF)
        assert not ok and detail.startswith("not read yet (360 chunks)")
    term_postings.refresh(corpus, MIN_DF, skip_words=STOPWORDS)
    with corpus.read() as conn:
        ok, detail = term_postings.status(conn, MIN_DF)
    terms = len(stored_stems(corpus))
    assert ok and detail.startswith(f"{terms:,} terms in >= 5 chunks") and "at 360 chunks" in detail
    add_document(corpus, 7, 40, seed=70)
    with corpus.read() as conn:
        ok, detail = term_postings.status(conn, MIN_DF)
    assert not ok and detail.endswith("read at 360 chunks, 400 now: due again")


@pytest.mark.parametrize(
    ("ids", "tf_text", "tf_heading", "length"),
    [
        ([3, 7, 8, 1_000_000], [1, 2, 1, 1], [0, 0, 0, 0], [250, 310, 17, 298]),
        ([1, 70_000, 70_001], [300, 70_000, 1], [1, 0, 2], [70_000, 5, 4_000_000]),  # wide
        ([], [], [], []),
    ],
)
def test_postings_round_trip_in_their_narrowest_widths(
    ids: list[int], tf_text: list[int], tf_heading: list[int], length: list[int]
) -> None:
    body = term_postings.encode(np.array(ids, dtype=np.int64), tf_text, tf_heading, length)
    entry = term_postings.decode(9, body)
    assert entry.upto == 9
    assert entry.ids.tolist() == ids
    assert entry.tf_text.tolist() == tf_text and entry.tf_heading.tolist() == tf_heading
    assert entry.length.tolist() == length
    if ids == [3, 7, 8, 1_000_000]:
        # Gaps 3, 4, 1, 999,992 need 4 bytes; counts 1, the heading nothing, lengths 2.
        assert len(body) == term_postings._HEADER.size + 4 * (4 + 1 + 0 + 2)
    with pytest.raises(ValueError, match="format"):
        term_postings.decode(9, b"\x07" + body[1:])
