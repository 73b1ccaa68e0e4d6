"""BM25 on PostgreSQL with FTS5's numbers (migration 0013).

PostgreSQL's ``ts_rank`` is not BM25. So the PostgreSQL library keeps what FTS5's ``bm25()``
reads: for every term of a chunk its count in the text and heading columns and the chunk's
length in tokens (``bm25_postings``), and the row count and total length (``bm25_totals``).
The terms are FTS5's own: the chunk's text (its bigrams for unspaced scripts, as SQLite
indexes it) goes through an in-memory FTS5 table with the tokenizer of ``page_chunks_fts``
and its ``fts5vocab`` instances are read back, so stems, case folding and diacritics are
exactly SQLite's. The score is then FTS5's formula (storage/term_postings.py ``bm25``/``idf``)
summed over the query's terms, ranked in one SQL statement.

A query phrase of several tokens (a CJK word's bigrams, ``snake_case``) is scored as FTS5
scores a phrase: its occurrences are the positions where its tokens follow each other, found
by tokenizing the candidate chunks again; its document frequency is the count of those chunks.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import sqlean
from sqlalchemy import Connection, text

from quire.storage import term_postings
from quire.storage.db import Database

#: The tokenizer of page_chunks_fts (migration 0001).
TOKENIZER = "porter unicode61 remove_diacritics 2"


@dataclass(frozen=True)
class Tokens:
    """One row's tokens in order, per column (text, heading)."""

    text: list[str]
    heading: list[str]

    @property
    def length(self) -> int:
        return len(self.text) + len(self.heading)


def tokenize(rows: Sequence[tuple[str, str]]) -> list[Tokens]:
    """Each (text, heading) as FTS5 tokenizes it for ``page_chunks_fts``."""
    con = sqlean.connect(":memory:")
    try:
        con.execute(f"CREATE VIRTUAL TABLE t USING fts5(a, b, tokenize='{TOKENIZER}')")
        con.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        con.executemany(
            "INSERT INTO t (rowid, a, b) VALUES (?, ?, ?)",
            [(i + 1, a, b) for i, (a, b) in enumerate(rows)],
        )
        cols: list[tuple[dict[int, str], dict[int, str]]] = [({}, {}) for _ in rows]
        for term, doc, col, offset in con.execute("SELECT term, doc, col, offset FROM v"):
            cols[int(doc) - 1][0 if col == "a" else 1][int(offset)] = str(term)
    finally:
        con.close()
    return [Tokens([a[k] for k in sorted(a)], [b[k] for k in sorted(b)]) for a, b in cols]


def index(conn: Connection, chunk_ids: Sequence[int]) -> None:
    """(Re)write the postings and BM25 length of these chunks from their stored text."""
    if not chunk_ids:
        return
    ids = [int(i) for i in chunk_ids]
    conn.execute(
        text("DELETE FROM bm25_postings WHERE chunk_id = ANY(CAST(:ids AS bigint[]))"),
        {"ids": ids},
    )
    rows = conn.execute(
        text(
            "SELECT id, coalesce(fts_text, text), coalesce(fts_heading, heading_path) "
            "FROM page_chunks WHERE id = ANY(CAST(:ids AS bigint[])) ORDER BY id"
        ),
        {"ids": ids},
    ).all()
    found = tokenize([(str(r[1]), str(r[2])) for r in rows])
    terms: list[str] = []
    owners: list[int] = []
    tf_text: list[int] = []
    tf_heading: list[int] = []
    lengths: list[int] = []
    for r, toks in zip(rows, found, strict=True):
        in_text, in_heading = Counter(toks.text), Counter(toks.heading)
        for term in in_text.keys() | in_heading.keys():
            terms.append(term)
            owners.append(int(r[0]))
            tf_text.append(in_text[term])
            tf_heading.append(in_heading[term])
            lengths.append(toks.length)
    if terms:
        # COPY: ~3x faster than a multi-row INSERT of the same rows (bench/postgres.py).
        raw = conn.connection.driver_connection
        assert raw is not None
        with (
            raw.cursor() as cur,
            cur.copy(
                "COPY bm25_postings (term, chunk_id, tf_text, tf_heading, len) FROM STDIN"
            ) as copy,
        ):
            for row in zip(terms, owners, tf_text, tf_heading, lengths, strict=True):
                copy.write_row(row)
    conn.execute(
        text(
            "UPDATE page_chunks SET bm25_len = u.len FROM unnest(CAST(:c AS bigint[]), "
            "CAST(:l AS integer[])) AS u(id, len) WHERE page_chunks.id = u.id"
        ),
        {"c": [int(r[0]) for r in rows], "l": [t.length for t in found]},
    )


@dataclass(frozen=True)
class Totals:
    rows: int
    tokens: int
    trigrams: int
    #: The highest chunk id: with the counts, it changes whenever a chunk is added or removed
    #: (ids are never reused), so it keys the document-frequency cache.
    last_chunk: int

    def averages(self, trigrams: bool = False) -> term_postings.Averages:
        total = self.trigrams if trigrams else self.tokens
        return term_postings.Averages(rows=self.rows, tokens=total)


def totals(conn: Connection) -> Totals:
    """The row count and total lengths that FTS5's bm25() reads, summed over writer slots."""
    r = conn.execute(
        text(
            "SELECT sum(rows), sum(tokens), sum(trigrams), (SELECT max(id) FROM page_chunks) "
            "FROM bm25_totals"
        )
    ).one()
    return Totals(int(r[0] or 0), int(r[1] or 0), int(r[2] or 0), int(r[3] or 0))


class _FrequencyCache:
    """Terms' document frequencies as of one state of a library (``Totals``): counting a
    common term's postings reads 100k-300k index entries at 1M chunks, and the BM25 leg and
    the window stage both need them. Any added or removed chunk changes the key and empties
    the cache; at most ``size`` terms are kept."""

    def __init__(self, size: int = 100_000) -> None:
        self._lock = threading.Lock()
        self._key: tuple[str, Totals] | None = None
        self._df: OrderedDict[str, int] = OrderedDict()
        self._size = size

    def get(self, conn: Connection, terms: Sequence[str], stats: Totals) -> dict[str, int]:
        key = (conn.engine.url.render_as_string(), stats)  # one cache, one database at a time
        with self._lock:
            if self._key != key:
                self._key, self._df = key, OrderedDict()
            known = {t: self._df[t] for t in terms if t in self._df}
        todo = sorted({t for t in terms if t not in known})
        if todo:
            counted = {
                str(r[0]): int(r[1])
                for r in conn.execute(
                    text(
                        "SELECT term, count(*) FROM bm25_postings "
                        "WHERE term = ANY(CAST(:t AS text[])) GROUP BY term"
                    ),
                    {"t": todo},
                )
            }
            found = {t: counted.get(t, 0) for t in todo}
            known.update(found)
            with self._lock:
                if self._key == key:
                    self._df.update(found)
                    while len(self._df) > self._size:
                        self._df.popitem(last=False)
        return known


_frequencies = _FrequencyCache()


def term_frequencies(conn: Connection, terms: Sequence[str], stats: Totals) -> dict[str, int]:
    """How many chunks hold each of these (FTS5) terms, as of ``stats``."""
    return _frequencies.get(conn, terms, stats)


def phrase_tokens(phrases: Sequence[str]) -> list[list[str]]:
    """Each query phrase's tokens (a phrase may hold several, or none)."""
    return [t.text for t in tokenize([(p, "") for p in phrases])]


def document_frequency(conn: Connection, phrase: str, cap: int) -> int:
    """How many chunks hold every token of ``phrase``, counted up to ``cap`` (for a phrase of
    several tokens, an upper bound: their order is not checked)."""
    toks = sorted(set(phrase_tokens([phrase])[0]))
    if not toks:
        return 0
    if len(toks) == 1:
        return min(term_frequencies(conn, toks, totals(conn))[toks[0]], cap)
    return int(
        conn.execute(
            text(
                "SELECT count(*) FROM (SELECT chunk_id FROM bm25_postings "
                "WHERE term = ANY(CAST(:t AS text[])) GROUP BY chunk_id "
                "HAVING count(*) = :k LIMIT :cap) AS m"
            ),
            {"t": toks, "k": len(toks), "cap": cap},
        ).scalar_one()
    )


#: FTS5's per-term score of a posting ``p``, to be multiplied by the term's idf.
_SCORE = (
    "(((p.tf_text + :hw * p.tf_heading) * (:k1 + 1.0)) / ((p.tf_text + :hw * p.tf_heading) "
    "+ :k1 * (1.0 - :b + :b * p.len / :avgdl)))"
)
# One statement: every posting of the single-token terms, scored with FTS5's formula and
# summed per chunk; ``extra`` adds the phrase scores computed in Python (chunk id, score).
_SCORE_SQL = """
WITH q(term, idf) AS (SELECT * FROM unnest(CAST(:terms AS text[]), CAST(:idfs AS float8[]))),
     x(chunk_id, s) AS (SELECT * FROM unnest(CAST(:xc AS bigint[]), CAST(:xs AS float8[]))),
     scored AS (
       SELECT p.chunk_id, q.idf * {score} AS s
       FROM bm25_postings p JOIN q ON p.term = q.term
       UNION ALL SELECT chunk_id, s FROM x),
     summed AS (SELECT chunk_id, sum(s) AS s FROM scored GROUP BY chunk_id),
     best AS (SELECT chunk_id, s FROM summed {best})
SELECT t.chunk_id, t.s FROM best t
JOIN page_chunks c ON c.id = t.chunk_id JOIN documents d ON d.id = c.document_id
WHERE {where} ORDER BY t.s DESC, t.chunk_id LIMIT :n
""".replace("{score}", _SCORE)
#: The best ``WIDEN`` × limit chunks by score are checked against the filter first; only when
#: fewer than ``limit`` of them pass is every scored chunk checked (joining tens of thousands
#: of chunks of a common term to their documents was most of the leg's time).
WIDEN = 4
_BEST = "ORDER BY s DESC, chunk_id LIMIT :wide"

# MaxScore (Turtle and Flood, 1995): a term's score in a chunk is below idf × (k1 + 1)
# whatever its counts. The common terms of a query (COMMON_SHARE of the chunks or more) are
# not read in full: the chunks holding a rarer term are scored exactly (the common terms'
# postings looked up for those chunks only), and when the WIDEN × limit-th best of them beats
# what the common terms alone could give a chunk, no other chunk can reach the best ones, so
# they are the best ones of the whole library. Otherwise the full statement runs. At 1M
# chunks a common word holds 100k-300k postings and a rare one a few thousand.
COMMON_SHARE = 0.01
_CANDIDATES_SQL = """
WITH r(term, idf) AS (SELECT * FROM unnest(CAST(:terms AS text[]), CAST(:idfs AS float8[]))),
     m(term, idf) AS (SELECT * FROM unnest(CAST(:common AS text[]), CAST(:cidfs AS float8[]))),
     x(chunk_id, s) AS (SELECT * FROM unnest(CAST(:xc AS bigint[]), CAST(:xs AS float8[]))),
     rare AS (
       SELECT p.chunk_id, r.idf * {score} AS s
       FROM bm25_postings p JOIN r ON p.term = r.term
       UNION ALL SELECT chunk_id, s FROM x),
     cand AS (SELECT DISTINCT chunk_id FROM rare),
     common AS (
       SELECT p.chunk_id, m.idf * {score} AS s
       FROM cand CROSS JOIN m JOIN LATERAL (
         SELECT * FROM bm25_postings q WHERE q.term = m.term AND q.chunk_id = cand.chunk_id
       ) p ON true),
     summed AS (SELECT chunk_id, sum(s) AS s FROM (
       SELECT * FROM rare UNION ALL SELECT * FROM common) AS a GROUP BY chunk_id)
SELECT chunk_id, s FROM summed ORDER BY s DESC, chunk_id LIMIT :wide
""".replace("{score}", _SCORE)


def bm25(
    conn: Connection,
    phrases: Sequence[str],
    *,
    limit: int,
    where: str,
    params: dict[str, object],
    heading_weight: float,
) -> list[tuple[int, float]]:
    """Chunk ids with FTS5's bm25() of the OR of ``phrases`` (negated: higher is better), best
    first, among the chunks ``where`` lets through (over ``c`` page_chunks, ``d`` documents)."""
    stats = totals(conn)
    if not stats.rows or not phrases:
        return []
    avg = stats.averages()
    singles: dict[str, int] = {}
    multi: list[list[str]] = []
    for toks in phrase_tokens(phrases):
        if len(toks) == 1:
            singles[toks[0]] = singles.get(toks[0], 0) + 1
        elif toks:
            multi.append(toks)
    terms = list(singles)
    df = term_frequencies(conn, terms, stats)
    # A phrase given twice counts twice, as FTS5 sums over the query's phrases.
    idf = {t: term_postings.idf(stats.rows, df.get(t, 0)) * singles[t] for t in terms}
    extra: defaultdict[int, float] = defaultdict(float)
    for toks in multi:
        for cid, score in _phrase_scores(conn, toks, stats, heading_weight).items():
            extra[cid] += score
    values: dict[str, object] = {
        "xc": list(extra),
        "xs": list(extra.values()),
        "hw": heading_weight,
        "k1": term_postings.K1,
        "b": term_postings.B,
        "avgdl": avg.avgdl,
        "n": limit,
        "wide": limit * WIDEN,
        **params,
    }
    best = _max_score(conn, terms, df, idf, stats.rows, values, where)
    if best is not None:
        return best
    values.update(terms=terms, idfs=[idf[t] for t in terms])
    rows = conn.execute(text(_SCORE_SQL.format(where=where, best=_BEST)), values).all()
    if len(rows) < limit:
        rows = conn.execute(text(_SCORE_SQL.format(where=where, best="")), values).all()
    return [(int(r[0]), float(r[1])) for r in rows]


def _max_score(
    conn: Connection,
    terms: list[str],
    df: dict[str, int],
    idf: dict[str, float],
    rows: int,
    values: dict[str, object],
    where: str,
) -> list[tuple[int, float]] | None:
    """The best chunks found without reading the common terms' postings in full (see
    COMMON_SHARE), or None when that cannot be shown exact or too few pass the filter."""
    by_df = sorted(terms, key=lambda t: (-df.get(t, 0), t))
    top = max(idf.values(), default=0.0)
    common: list[str] = []
    ceiling = 0.0
    for t in by_df[:-1]:  # the rarest term is always read
        bound = idf[t] * (term_postings.K1 + 1.0)
        # Worth trying while the common terms together could not outscore about two of the
        # rarest term's hits (the check below is what makes the answer exact).
        if df.get(t, 0) < COMMON_SHARE * rows or ceiling + bound >= 2.0 * top:
            break
        common.append(t)
        ceiling += bound
    if not common:
        return None
    rare = [t for t in by_df if t not in common]
    got = conn.execute(
        text(_CANDIDATES_SQL),
        {
            **values,
            "terms": rare,
            "idfs": [idf[t] for t in rare],
            "common": common,
            "cidfs": [idf[t] for t in common],
        },
    ).all()
    wide = int(values["wide"])  # type: ignore[call-overload]
    if len(got) < wide or float(got[-1][1]) <= ceiling * (1.0 + 1e-9):
        return None
    ids = [int(r[0]) for r in got]
    passed = {
        int(r[0])
        for r in conn.execute(
            text(
                "SELECT c.id FROM page_chunks c JOIN documents d ON d.id = c.document_id "
                f"WHERE c.id = ANY(CAST(:maxscore_ids AS bigint[])) AND {where}"
            ),
            {**values, "maxscore_ids": ids},
        )
    }
    limit = int(values["n"])  # type: ignore[call-overload]
    kept = [(int(r[0]), float(r[1])) for r in got if int(r[0]) in passed][:limit]
    return kept if len(kept) == limit else None


def _phrase_scores(
    conn: Connection, toks: list[str], stats: Totals, heading_weight: float
) -> dict[int, float]:
    """bm25() of one phrase of several tokens, for every chunk that holds it."""
    rows = conn.execute(
        text(
            "SELECT c.id, coalesce(c.fts_text, c.text), coalesce(c.fts_heading, c.heading_path), "
            "c.bm25_len FROM page_chunks c WHERE c.id IN (SELECT chunk_id FROM bm25_postings "
            "WHERE term = ANY(CAST(:t AS text[])) GROUP BY chunk_id "
            "HAVING count(*) = :k) AND c.bm25_len IS NOT NULL"
        ),
        {"t": list(set(toks)), "k": len(set(toks))},
    ).all()
    found = tokenize([(str(r[1]), str(r[2])) for r in rows])
    hits: dict[int, tuple[int, int, int]] = {}
    for r, got in zip(rows, found, strict=True):
        in_text, in_heading = _runs(got.text, toks), _runs(got.heading, toks)
        if in_text or in_heading:
            hits[int(r[0])] = (in_text, in_heading, int(r[3]))
    idf = term_postings.idf(stats.rows, len(hits))
    avgdl = stats.averages().avgdl
    return {
        cid: float(term_postings.bm25(a + heading_weight * b, float(n), idf, avgdl))
        for cid, (a, b, n) in hits.items()
    }


def _runs(tokens: list[str], phrase: list[str]) -> int:
    """How often ``phrase`` occurs in ``tokens`` as consecutive tokens."""
    k = len(phrase)
    return sum(1 for i in range(len(tokens) - k + 1) if tokens[i : i + k] == phrase)


def settle(db: Database) -> None:
    """After a bulk load: VACUUM ANALYZE, so that the planner has statistics and the BM25
    leg's index-only scans (migration 0015) skip the heap at once rather than once
    autovacuum has come by."""
    with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql("VACUUM (ANALYZE)")
