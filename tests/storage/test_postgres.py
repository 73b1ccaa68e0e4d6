"""The PostgreSQL library (migration 0013): its schema, and the BM25 and exact legs giving
FTS5's scores on the same chunks, so the two backends rank alike."""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text

from quire.config import Settings
from quire.ingest.intake import add_file
from quire.retrieval.filters import Filter
from quire.retrieval.lexical import postgres as pg_lexical
from quire.retrieval.lexical.entries import EntryCache
from quire.retrieval.lexical.postgres import PostgresLexical
from quire.storage import chunks, vectors
from quire.storage.backends import pg_bulk, pg_postings
from quire.storage.db import Database
from quire.storage.migrate import downgrade, open_database, upgrade
from quire.storage.records import Chunk, Page
from quire.storage.schema import metadata, utcnow
from tests import legs
from tests.pg import PgServer

# Text with stems, a heading match, repeats, a CJK run (bigrams: phrases of several tokens),
# diacritics, snake_case (two tokens), identifiers for the exact leg.
PAGES = [
    (
        "Methods > Sampling",
        "Running foxes jumped over the lazy dogs. The foxes ran again; ERR-4042 was logged.",
    ),
    ("Methods > Analysis", "Café owners analysed the sampling frame and the snake_case names."),
    ("Results", "東京都の人口は約千四百万人です。東京は日本の首都です。Foxes were counted."),
    (
        "Results > Tables",
        "Table 3: MIL-G-7711 grease, part 7711-B; ERR-4042 appears twice: ERR-4042.",
    ),
    ("Discussion", "Sampling foxes at night gave fewer counts than sampling by day."),
    ("Appendix", "Nothing here mentions the animals at all, only the weather and the café."),
]
QUERIES = [
    "running fox",
    "sampling",
    "cafe owners",
    "東京の人口",
    "snake_case names",
    "foxes foxes sampling methods",
    "weather",
    "absent-term-xyz",
]


def _page(n: int, head: str, body: str) -> Page:
    return Page(n, body, heading_path=head, source="text")


def _chunk(n: int, head: str, body: str) -> Chunk:
    digest = hashlib.sha256(body.encode()).hexdigest()
    return Chunk(n, 0, head, body, content_hash=digest, source="text")


def _fill(db: Database, name: str = "a") -> int:
    """A ready document ``name``.txt holding PAGES, one chunk a page; its id."""
    return _fill_many(db, PAGES, name)


def _fill_many(db: Database, pages: list[tuple[str, str]], name: str) -> int:
    """A ready document ``name``.txt of one page and chunk per (heading, text); its id."""
    with db.write() as conn:
        doc = int(
            conn.execute(
                text(
                    "INSERT INTO documents (kind, filename, sha256, byte_size, stored_path, "
                    "status, created_at, updated_at) VALUES ('text', :f, :s, 1, '/x', "
                    "'ready', :t, :t) RETURNING id"
                ),
                {"f": f"{name}.txt", "s": f"sha-{name}", "t": utcnow()},
            ).scalar_one()
        )
        found = [_chunk(i + 1, head, body) for i, (head, body) in enumerate(pages)]
        chunks.replace(conn, doc, [_page(c.page, c.heading_path, c.text) for c in found], found)
    return doc


@pytest.fixture
def both(tmp_path: Path, pg_server: PgServer) -> Iterator[tuple[Database, Database]]:
    url = pg_server.create_database()
    sqlite = open_database(Settings(data_dir=tmp_path / "sqlite"))
    postgres = open_database(Settings(data_dir=tmp_path / "pg", database_url=url))
    _fill(sqlite)
    _fill(postgres)
    yield sqlite, postgres
    sqlite.dispose()
    postgres.dispose()
    pg_server.drop_database(url)


def _bm25(db: Database, query: str) -> list[tuple[int, float]]:
    with db.read() as conn:
        return legs.lexical(conn).bm25(conn, query, limit=10, flt=Filter())


def test_bm25_on_postgresql_gives_fts5s_ranking_and_scores(
    both: tuple[Database, Database],
) -> None:
    sqlite, postgres = both
    for query in QUERIES:
        want, got = _bm25(sqlite, query), _bm25(postgres, query)
        assert [c for c, _ in got] == [c for c, _ in want], query
        for (_, a), (_, b) in zip(got, want, strict=True):
            assert a == pytest.approx(b, rel=1e-9), query
    assert _bm25(postgres, "東京の人口")  # the bigram phrases matched
    assert sum(bool(_bm25(postgres, q)) for q in QUERIES) == len(QUERIES) - 1


def test_bm25_checks_the_best_scored_first_and_all_when_too_few_pass(
    both: tuple[Database, Database],
) -> None:
    """The leg filters the best WIDEN x limit chunks first, then all of them when fewer than
    limit pass: a filter on the last of six equal documents still finds its chunks (every
    better-ranked one is another document's), as FTS5 does."""
    sqlite, postgres = both
    for name in "bcdef":
        _fill(sqlite, name)
        _fill(postgres, name)
    with postgres.read() as conn:
        last = int(conn.exec_driver_sql("SELECT max(id) FROM documents").scalar_one())
    query = QUERIES[0]
    for flt, limit in ((Filter(), 2), (Filter(document_ids=(last,)), 1), (Filter(), 40)):
        with sqlite.read() as a, postgres.read() as b:
            want = legs.lexical(a).bm25(a, query, limit=limit, flt=flt)
            got = legs.lexical(b).bm25(b, query, limit=limit, flt=flt)
        assert got and [c for c, _ in got] == [c for c, _ in want], (flt, limit)
        assert np.allclose([s for _, s in got], [s for _, s in want], rtol=1e-9)
    with postgres.read() as conn:
        (only,) = legs.lexical(conn).bm25(conn, query, limit=1, flt=Filter(document_ids=(last,)))
        owner = conn.execute(
            text("SELECT document_id FROM page_chunks WHERE id = :c"), {"c": only[0]}
        ).scalar_one()
    assert owner == last


def test_the_best_summed_scores_from_a_floor_are_those_of_ranking_every_chunk() -> None:
    """The BM25 leg ranks only the chunks at or above a floor taken from its rarest terms'
    chunks: the same ids, scores and tie order as ranking every chunk, for any k, with many
    ties, and when the ids are too sparse for a table."""
    rng = np.random.default_rng(5)
    for spread in (2_000, 10**9):  # a table of all ids; sorted distinct ids
        sizes = (5, 40, 300, 1_500)
        parts = [np.sort(rng.choice(spread, n, replace=False)).astype(np.int64) for n in sizes]
        # Scores in few distinct values: many chunks tie.
        scores = [np.round(rng.uniform(0.1, 3.0, len(p)), 1) for p in parts]
        held, where = np.unique(np.concatenate(parts), return_inverse=True)
        sums = np.bincount(where, weights=np.concatenate(scores))
        ranking = pg_lexical._Sums(parts, scores)
        for k in (1, 3, 5, 6, 41, 200, 1_000, len(held), len(held) + 7):
            order = np.lexsort((held, -sums))[:k]
            ids, got = ranking.best(k)
            assert ids.tolist() == held[order].tolist(), (spread, k)
            assert np.allclose(got, sums[order], rtol=1e-12), (spread, k)


def test_frequent_terms_are_read_from_their_stored_entries_and_still_rank_as_fts5(
    both: tuple[Database, Database], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker's entries of the frequent terms (storage/term_postings.py), read from
    bm25_postings on PostgreSQL: a frequent term is scored from its entry plus the chunks
    added since, chunks deleted since are dropped, a chunk indexed again in place makes the
    entries untrusted; the ranking and scores stay FTS5's throughout."""
    from quire.storage import term_postings
    from quire.text.stopwords import STOPWORDS

    rng = np.random.default_rng(3)
    filler = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()
    rares = ["quokka", "axolotl", "pangolin", "narwhal"]
    texts = []
    for i in range(300):
        words = list(rng.choice(filler, 12))
        if i % 3 == 0:
            words += ["harbour"] * int(rng.integers(1, 4))  # frequent: a third of the chunks
        if i % 25 < len(rares):
            words.append(rares[i % 25])  # rare: 12 chunks each
        rng.shuffle(words)
        texts.append(" ".join(words))
    docs: dict[str, list[int]] = {}
    for db in both:
        docs[db.name] = [
            _fill_many(db, [("Body", t) for t in texts[k : k + 50]], f"m{k}")
            for k in range(0, 300, 50)
        ]
    sqlite, postgres = both
    done = term_postings.refresh(postgres, 40, skip_words=STOPWORDS)
    with postgres.read() as conn:
        read_at = term_postings.state(conn)
        stored = set(term_postings.load_many(conn, ["harbour", "alpha", "quokka", "the"]))
    assert read_at is not None and done["rows"] == read_at["rows"] == 306
    assert stored == {"harbour", "alpha"}  # frequent ones only; stopwords never

    reads: list[dict[str, int]] = []
    real = pg_postings.read_postings

    def spy(conn: object, terms: list[str], after: list[int], *a: object) -> object:
        reads.append(dict(zip(terms, after, strict=True)))
        return real(conn, terms, after, *a)  # type: ignore[arg-type]

    monkeypatch.setattr(pg_postings, "read_postings", spy)
    cache = EntryCache(max_mb=1)

    def same(query: str, flt: Filter, limit: int) -> None:
        want_flt = flt
        if flt.document_ids:
            want_flt = Filter(
                document_ids=(docs["sqlite"][docs["postgresql"].index(flt.document_ids[0])],)
            )
        with sqlite.read() as a, postgres.read() as b:
            want = legs.lexical(a).bm25(a, query, limit=limit, flt=want_flt)
            # Twice with the serving process's cache (the second time from it), then without.
            kept = [PostgresLexical(cache).bm25(b, query, limit=limit, flt=flt) for _ in "12"]
            reads.clear()
            got = legs.lexical(b).bm25(b, query, limit=limit, flt=flt)
        assert len(got) == min(limit, len(want)) and got, query
        assert [c for c, _ in got] == [c for c, _ in want], query
        assert np.allclose([s for _, s in got], [s for _, s in want], rtol=1e-9), query
        assert kept == [got, got], query

    cases = [
        ("quokka harbour axolotl", Filter(), 8),
        ("harbour alpha", Filter(), 5),
        ("harbour pangolin narwhal harbour", Filter(), 3),
        ("quokka harbour", Filter(document_ids=(docs["postgresql"][5],)), 5),
    ]
    for query, flt, limit in cases:
        same(query, flt, limit)
        # The frequent term's postings were read only above its entry's chunk.
        assert reads[0]["harbour"] == read_at["upto"], query

    # Chunks added (a document of frequent and rare words) and deleted (a whole document)
    # after the entries were read.
    from quire.storage import documents

    for db in both:
        docs[db.name].append(
            _fill_many(db, [("Body", "harbour quokka harbour " + t) for t in texts[:20]], "new")
        )
        documents.delete_document(db, docs[db.name].pop(0))
    for query, flt, limit in cases[:3]:
        same(query, flt, limit)
        assert reads[0]["harbour"] == read_at["upto"], query

    # A chunk indexed again in place (a new heading): the entries are no longer trusted.
    for db in both:
        with db.write() as conn:
            doc = docs[db.name][0]
            found = [_chunk(1, "Harbour notes", texts[50])] + [
                _chunk(i + 1, "Body", t) for i, t in enumerate(texts[51:100], start=1)
            ]
            chunks.replace(conn, doc, [_page(c.page, c.heading_path, c.text) for c in found], found)
    with postgres.read() as conn:
        assert term_postings.state(conn) is None and term_postings.due(conn, 40)
    for query, flt, limit in cases[:3]:
        same(query, flt, limit)
        assert reads[0]["harbour"] == 0, query  # read from bm25_postings in full

    # Read again, then a heading changed in place and read again: the entries' upto and row
    # count are as before, only their contents (and the read id) differ; the cache follows.
    for heading in ("Harbour harbour notes", "Quiet notes"):
        term_postings.refresh(postgres, 40, skip_words=STOPWORDS)
        for query, flt, limit in cases[:3]:
            same(query, flt, limit)
            assert reads[0]["harbour"] > 0, query
        for db in both:
            with db.write() as conn:
                found = [_chunk(1, heading, texts[50])] + [
                    _chunk(i + 1, "Body", t) for i, t in enumerate(texts[51:100], start=1)
                ]
                pages = [_page(c.page, c.heading_path, c.text) for c in found]
                chunks.replace(conn, docs[db.name][0], pages, found)
    term_postings.refresh(postgres, 40, skip_words=STOPWORDS)
    with postgres.read() as conn:
        again = term_postings.state(conn)
    assert again is not None and again["upto"] > read_at["upto"]
    for query, flt, limit in cases[:3]:
        same(query, flt, limit)


def test_reading_the_entries_waits_for_a_writer_in_flight(
    both: tuple[Database, Database],
) -> None:
    """A writer's chunks not yet committed when the worker starts reading the entries: the
    read waits for the commit (its SHARE lock), so those chunks are in the entries, never
    below their chunk id and missing from them."""
    from quire.storage import term_postings

    postgres = both[1]
    started, finished = threading.Event(), threading.Event()
    got: dict[str, object] = {}

    def read() -> None:
        started.set()
        got.update(term_postings.refresh(postgres, 1))
        finished.set()

    with postgres.write() as conn:
        doc = int(
            conn.execute(
                text(
                    "INSERT INTO documents (kind, filename, sha256, byte_size, stored_path, "
                    "status, created_at, updated_at) VALUES ('text', 'w.txt', 'sha-w', 1, "
                    "'/x', 'ready', :t, :t) RETURNING id"
                ),
                {"t": utcnow()},
            ).scalar_one()
        )
        found = [_chunk(1, "Body", "wombats burrow at dusk")]
        written = chunks.replace(conn, doc, [_page(1, "Body", found[0].text)], found)
        reader = threading.Thread(target=read)
        reader.start()
        started.wait(5)
        assert not finished.wait(1.0)  # waiting for this transaction
    reader.join(30)
    assert finished.is_set() and got["rows"] == len(PAGES) + 1
    (mine,) = written.inserted_ids
    with postgres.read() as conn:
        read_at = term_postings.state(conn)
        entry = term_postings.load_many(conn, ["wombat"])["wombat"]
    assert read_at is not None and read_at["upto"] >= mine
    assert entry.ids.tolist() == [mine]


def test_exact_leg_on_postgresql_gives_the_same_hits_and_scores(
    both: tuple[Database, Database],
) -> None:
    sqlite, postgres = both
    for keywords in (["ERR-4042"], ["MIL-G-7711", "7711-B"], ["café"], ["nowhere-123"]):
        with sqlite.read() as conn:
            want = legs.exact(conn).exact(conn, keywords, limit=10, flt=Filter())
        with postgres.read() as conn:
            got = legs.exact(conn).exact(conn, keywords, limit=10, flt=Filter())
        assert [c for c, _ in got] == [c for c, _ in want], keywords
        assert bool(got) == (keywords != ["nowhere-123"])
        assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-9)


def test_totals_follow_inserts_edits_and_a_documents_deletion(
    both: tuple[Database, Database],
) -> None:
    _, postgres = both
    doc = _fill(postgres, "b")

    def totals() -> tuple[int, int, int, int, int, int]:
        with postgres.read() as conn:
            kept = conn.execute(
                text(
                    "SELECT count(*), coalesce(sum(bm25_len), 0), "
                    "coalesce(sum(greatest(char_length(text) - 2, 0)), 0) FROM page_chunks"
                )
            ).one()
            summed = conn.execute(
                text("SELECT sum(rows), sum(tokens), sum(trigrams) FROM bm25_totals")
            ).one()
        return (*map(int, kept), *map(int, summed))  # type: ignore[return-value]

    rows, tokens, trigrams, *summed = totals()
    assert rows == len(PAGES) * 2 and summed == [rows, tokens, trigrams]
    with postgres.write() as conn:
        # A kept chunk whose heading changed is indexed again (its length changes).
        chunks.replace(
            conn,
            doc,
            [_page(1, "A much longer new heading path", PAGES[0][1])],
            [_chunk(1, "A much longer new heading path", PAGES[0][1])],
        )
    rows, tokens, trigrams, *summed = totals()
    assert rows == len(PAGES) + 1 and summed == [rows, tokens, trigrams]
    with postgres.write() as conn:
        conn.execute(text("DELETE FROM documents WHERE id = :d"), {"d": doc})
    rows, tokens, trigrams, *summed = totals()
    assert rows == len(PAGES) and summed == [rows, tokens, trigrams]
    with postgres.read() as conn:
        orphans = conn.execute(
            text(
                "SELECT count(*) FROM bm25_postings p WHERE NOT EXISTS "
                "(SELECT 1 FROM page_chunks c WHERE c.id = p.chunk_id)"
            )
        ).scalar_one()
    assert orphans == 0


def test_postgresql_schema_matches_the_table_definitions(pg_server: PgServer) -> None:
    url = pg_server.create_database()
    db = open_database(Settings(data_dir=Path("/nonexistent"), database_url=url))
    with db.engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"compare_type": False})
        diff = [
            d
            for d in compare_metadata(ctx, metadata)
            # PostgreSQL's own search tables (0013) are not in the shared definitions.
            if not (d[0] == "remove_table" and d[1].name in ("bm25_postings", "bm25_totals"))
            and not (d[0] == "remove_column" and d[3].name == "bm25_len")
            and not (
                d[0] == "remove_index" and d[1].name.startswith(("ix_page_chunks_trgm", "ix_bm25_"))
            )
            and not (d[0] == "add_table" and d[1].schema == "vec")
        ]
    assert diff == []
    db.dispose()
    pg_server.drop_database(url)


def test_postgresql_upgrade_is_idempotent_and_downgrade_reverses(pg_server: PgServer) -> None:
    url = pg_server.create_database()
    db = open_database(Settings(data_dir=Path("/nonexistent"), database_url=url))
    upgrade(db)

    def tables() -> set[str]:
        with db.read() as conn:
            return {
                str(r[0])
                for r in conn.execute(
                    text(
                        "SELECT table_schema || '.' || table_name FROM information_schema.tables "
                        "WHERE table_schema IN ('public', 'vec')"
                    )
                )
            }

    assert {"public.documents", "public.bm25_postings", "vec.page_vecs"} <= tables()
    downgrade(db, "base")
    assert tables() == {"public.alembic_version"}
    upgrade(db)
    assert "vec.page_vecs" in tables()
    db.dispose()
    pg_server.drop_database(url)


def test_concurrent_uploads_of_one_file_make_one_document_and_one_job(
    tmp_path: Path, pg_server: PgServer
) -> None:
    """PostgreSQL writers do not queue as SQLite's do: the unique constraints settle a race."""
    url = pg_server.create_database()
    settings = Settings(data_dir=tmp_path / "data", database_url=url)
    db = open_database(settings)
    src = tmp_path / "same.txt"
    src.write_text("The same bytes, uploaded eight times at once.\n" * 20)
    barrier = threading.Barrier(8)

    def upload(_: int) -> str:
        barrier.wait(timeout=30)
        return add_file(db, settings.files_dir, src, "same.txt", max_bytes=10**6).status

    try:
        with ThreadPoolExecutor(8) as pool:
            outcomes = sorted(pool.map(upload, range(8)))
        assert outcomes == ["duplicate"] * 7 + ["queued"]
        with db.read() as conn:
            counts = conn.execute(
                text("SELECT (SELECT count(*) FROM documents), (SELECT count(*) FROM ingest_jobs)")
            ).one()
        assert tuple(counts) == (1, 1)
    finally:
        db.dispose()
        pg_server.drop_database(url)


def test_a_bulk_load_builds_its_indexes_at_the_end_and_an_interrupted_one_is_repaired(
    tmp_path: Path, pg_server: PgServer, caplog: pytest.LogCaptureFixture
) -> None:
    url = pg_server.create_database()
    settings = Settings(data_dir=tmp_path / "pg", database_url=url)
    db = open_database(settings)
    try:
        with db.write() as conn:
            vectors.ensure(conn, "m", 4)
        assert pg_bulk.missing(db) == []
        built: list[str] = []
        # A load that fails half-way still leaves every index built.
        with (
            pytest.raises(RuntimeError),
            pg_bulk.loading(db, "64MB", lambda n, *_: built.append(n)),
        ):
            assert {ix.name for ix in pg_bulk.missing(db)} == {ix.name for ix in pg_bulk.INDEXES}
            _fill(db)
            raise RuntimeError("the load died")
        assert pg_bulk.missing(db) == [] and built[-1] == "indexes"
        with db.read() as conn:
            assert [c for c, _ in legs.lexical(conn).bm25(conn, "foxes", limit=3, flt=Filter())]
        # A process killed inside the load leaves them dropped: the next open builds them.
        with db.write() as conn:
            for ix in pg_bulk.INDEXES:
                conn.exec_driver_sql(ix.drop)
        db.dispose()
        with caplog.at_level(logging.WARNING, logger="quire.storage.migrate"):
            db = open_database(settings)
        assert pg_bulk.missing(db) == [] and "interrupted bulk load" in caplog.text
        with db.read() as conn:
            names = conn.execute(
                text("SELECT indexname FROM pg_indexes WHERE schemaname IN ('public', 'vec')")
            ).scalars()
            assert {"bm25_postings_pkey", "ix_page_chunks_trgm", "ix_page_vecs_hnsw"} <= set(names)
    finally:
        db.dispose()
        pg_server.drop_database(url)
