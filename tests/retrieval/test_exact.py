"""The exact leg over the trigram index without positions ranks as bm25() over a positional
one did: on a real library, against a ``detail=full`` trigram table built beside it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

import pytest
from sqlalchemy import Connection

from quire.config import Settings
from quire.retrieval import exact
from quire.retrieval.filters import Filter
from quire.retrieval.options import SearchOptions
from quire.storage.backends import fts5
from quire.storage.backends.base import Averages
from quire.storage.db import Database
from tests.conftest import DOCS
from tests.retrieval.conftest import doc_id, ingest_library

pytestmark = pytest.mark.slow  # the DMCA summary and a Japanese book ingested

DMCA = DOCS / "pdf" / "dmca-summary.pdf"
JA = DOCS / "epub" / "pg39287-agony-column-ja-epub3.epub"


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Settings, Database]]:
    settings, db = ingest_library(tmp_path_factory.mktemp("exact"), (DMCA, JA))
    with db.write() as conn:  # the oracle: the positional index the leg used to ask
        conn.exec_driver_sql(
            "CREATE VIRTUAL TABLE tri_full USING fts5(text, content='page_chunks', "
            "content_rowid='id', tokenize='trigram')"
        )
        conn.exec_driver_sql("INSERT INTO tri_full(tri_full) VALUES ('rebuild')")
    yield settings, db
    db.dispose()


def _oracle(db: Database, keyword: str, docs: set[int] | None = None) -> list[tuple[int, float]]:
    with db.read() as conn:
        rows = conn.exec_driver_sql(
            "SELECT t.rowid, -bm25(tri_full), c.document_id FROM tri_full t "
            "JOIN page_chunks c ON c.id = t.rowid WHERE tri_full MATCH ? "
            "ORDER BY bm25(tri_full), t.rowid",
            ('"' + keyword.replace('"', '""') + '"',),
        ).all()
    return [(int(r[0]), float(r[1])) for r in rows if docs is None or r[2] in docs]


def _leg(db: Database, keyword: str, flt: Filter) -> list[tuple[int, float]]:
    with db.read() as conn:
        stats = fts5.averages(conn, "page_chunks_tri")
        return exact.TrigramExact().keyword(conn, keyword, stats, flt)


def _same(got: list[tuple[int, float]], expected: list[tuple[int, float]]) -> None:
    assert [cid for cid, _ in got] == [cid for cid, _ in expected]
    for (_, a), (_, b) in zip(got, expected, strict=True):
        assert a == pytest.approx(b, rel=1e-9)


def _ja_run(db: Database) -> str:
    with db.read() as conn:
        body = (
            conn.exec_driver_sql(
                "SELECT text FROM page_chunks WHERE text LIKE '%カールトン・ホテル%' ORDER BY id"
            )
            .scalars()
            .first()
        )
    assert body
    i = body.index("カールトン・ホテル")
    return body[i - 6 : i + 9]


@pytest.mark.parametrize(
    "keyword",
    [
        "1201",  # a number in many rows, often several times in one
        "Section 1201(a)",  # mixed case, punctuation
        "COPYRIGHT OFFICE",  # folded like FTS5's trigram tokenizer
        "the ",  # in nearly every English row: a low IDF
        "circumvent",
        "カールトン",  # katakana
        "no such thing anywhere",
    ],
)
def test_scores_and_order_match_bm25_over_a_positional_index(
    library: tuple[Settings, Database], keyword: str
) -> None:
    _, db = library
    expected = _oracle(db, keyword)
    got = _leg(db, keyword, Filter.of(SearchOptions()))
    _same(got, expected)
    if keyword != "no such thing anywhere":
        assert got


def test_a_copied_japanese_run_and_a_filter(library: tuple[Settings, Database]) -> None:
    _, db = library
    run = _ja_run(db)
    ja = doc_id(db, JA.name)
    expected = _oracle(db, run)
    assert expected
    _same(_leg(db, run, Filter.of(SearchOptions())), expected)
    # A filter narrows the rows, not the statistics: the document frequency stays the
    # table's, as bm25() counts it.
    only_dmca = Filter.of(SearchOptions(document_ids=[doc_id(db, DMCA.name)]))
    assert _leg(db, run, only_dmca) == []
    only_ja = Filter.of(SearchOptions(document_ids=[ja]))
    assert _leg(db, "1201", only_ja) == []  # the number is in the DMCA summary only
    # "the " is in both (the Japanese book has Project Gutenberg's English licence).
    in_ja = _oracle(db, "the ", {ja})
    assert in_ja and len(in_ja) < len(_oracle(db, "the "))
    _same(_leg(db, "the ", only_ja), in_ja)


def test_overlapping_occurrences_count_as_fts5_counts_them() -> None:
    assert exact.occurrences("aaaaa", "aaa") == 3
    assert exact.occurrences("ababab", "abab") == 2
    assert exact.occurrences("abc", "abd") == 0


def test_a_keyword_is_never_read_as_query_syntax() -> None:
    expected = ['"a""b"', '"""b "', '"b o"', '" or"', '"or "', '"r c"']
    assert exact.match_expression('a"b or c') == " AND ".join(expected)
    long = exact.match_expression("x" * 10 + "".join(chr(0x4E00 + i) for i in range(60)))
    assert long.count(" AND ") == exact.MAX_TRIGRAMS - 1


def test_beyond_the_candidate_cap_rows_still_hold_the_keyword(
    library: tuple[Settings, Database], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, db = library
    full = _oracle(db, "the ")
    assert len(full) > 10
    monkeypatch.setattr(exact, "MAX_CANDIDATES", 5)
    got = _leg(db, "the ", Filter.of(SearchOptions()))
    assert 0 < len(got) <= 5
    with db.read() as conn:
        for cid, _ in got:
            body = conn.exec_driver_sql("SELECT text FROM page_chunks WHERE id = ?", (cid,))
            assert "the " in body.scalar_one().lower()


def test_the_leg_ranks_chunks_with_more_keywords_first(library: tuple[Settings, Database]) -> None:
    _, db = library
    flt = Filter.of(SearchOptions())
    with db.read() as conn:
        both = exact.TrigramExact().exact(conn, ["1201", "circumvent"], limit=50, flt=flt)
        one = dict(_leg(db, "1201", flt))
        two = dict(_leg(db, "circumvent", flt))
    assert both
    counts = [(cid in one) + (cid in two) for cid, _ in both]
    assert counts == sorted(counts, reverse=True) and counts[0] == 2


def test_a_name_without_its_namespace_stands_alone_and_counts_as_the_name() -> None:
    """``CALL_PLT`` (asked as ``R_RISCV_CALL_PLT``, found as a specification's table lists it)
    is matched where it stands alone, not inside the whole name; a chunk holding the name in
    both forms holds one keyword, not two."""
    text = "auipc ra, 0 # r_riscv_call_plt; 19 call_plt"
    assert exact.occurrences(text, "call_plt") == 2
    assert exact.occurrences(text, "call_plt", alone=True) == 1
    seen: dict[str, bool] = {}
    scores = {"R_RISCV_CALL_PLT": [(1, 2.0)], "CALL_PLT": [(1, 1.0), (2, 3.0)]}

    class Leg(exact.TrigramExact):
        def averages(self, conn: Connection) -> Averages:
            return Averages(rows=10, tokens=100)

        def keyword(
            self,
            conn: Connection,
            keyword: str,
            stats: Averages,
            flt: Filter,
            *,
            alone: bool = False,
        ) -> list[tuple[int, float]]:
            seen[keyword] = alone
            return scores[keyword]

    ranked = Leg().exact(
        cast(Connection, None), list(scores), limit=10, flt=Filter.of(SearchOptions())
    )
    assert seen == {"R_RISCV_CALL_PLT": False, "CALL_PLT": True}
    # Chunk 2's lone CALL_PLT scores more than chunk 1's name in both forms.
    assert [cid for cid, _ in ranked] == [2, 1]
