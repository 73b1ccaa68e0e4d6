"""One search request, in stages: plan → legs (BM25, dense, exact; concurrently) → HyDE →
fusion → windows (the candidates by their best few sentences, fused in) → rerank → hydrate
(hits with highlights, per-leg ranks and scores, and timings).

    searcher = Searcher(db, settings, embedder, reranker)
    result = searcher.search("safe harbor", SearchOptions(kinds=("pdf",)))   # validates
    result = searcher.run(query, options, plan=plan)     # already validated (the chat engine)

The legs themselves are chosen once, for the library's database (retrieval/legs.py); what a
search returns is in retrieval/hits.py.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import Connection, text

from quire.config import Settings
from quire.embed.base import Embedder
from quire.embed.languages import coverage
from quire.errors import InputError, NotFound
from quire.retrieval import context as context_mod
from quire.retrieval import fusion, lexical, windows
from quire.retrieval.filters import Filter
from quire.retrieval.highlight import highlight, highlight_patterns
from quire.retrieval.hits import (
    Hit,
    LegRun,
    Rankings,
    SearchResult,
    from_view,
    merged,
    per_leg,
    sources,
)
from quire.retrieval.legs import open_legs
from quire.retrieval.options import SearchOptions, Strategy
from quire.retrieval.planner import Plan, heuristic_plan
from quire.retrieval.rerank import Reranker, RerankReport, rerank
from quire.retrieval.reranker_slot import RerankerSlot
from quire.storage import chunks, vectors
from quire.storage.db import Database
from quire.text.language import language_name
from quire.text.scripts import text_language

log = logging.getLogger(__name__)
MAX_QUERY_CHARS = 2000  # what the legs see; longer questions are cut with a notice
RERANK_TOP = {"precise": 35, "exhaustive": 60}
#: The best fused candidates the window stage scores (the others get no window score).
WINDOW_CANDIDATES = 30
#: Hits given a focus (reading 200 hits' sentences for an evaluation's depth costs ~40 ms).
FOCUS_HITS = 50


@dataclass
class _Request:
    """One request's state as it passes the stages."""

    query: str
    options: SearchOptions
    flt: Filter
    plan: Plan
    strategy: Strategy
    pool: int  # candidates fused
    limit: int  # hits returned
    timings: dict[str, float] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)
    views: dict[int, chunks.ChunkView] = field(default_factory=dict)  # fetched once
    #: Each scored chunk's best window of sentences (None: no query term in it).
    best: dict[int, windows.Window | None] = field(default_factory=dict)
    idf: dict[str, float] | None = None  # the query terms' weights, once counted


#: Orders the first hits of a search that asked to rerank when no cross-encoder is installed:
#: the runtime passes the order by sentence (synthesis/order.py's ``SentenceOrder``, scored as
#: the extractive answer scores), which this layer may not import.
HitOrder = Callable[[str, list[Hit]], list[Hit]]
NO_CROSS_ENCODER = "no reranker model installed: the first hits are ordered by their best sentence"


class Searcher:
    """Holds what searches share: the database, the embedder, the reranker (or, without one,
    the order by best sentence; replaceable while searches run), and the legs with their caches
    (retrieval/legs.py). ``owns_reranker``: ``close`` closes the reranker given."""

    def __init__(
        self,
        db: Database,
        settings: Settings,
        embedder: Embedder | None,
        reranker: Reranker | None = None,
        order: HitOrder | None = None,
        *,
        owns_reranker: bool = False,
    ) -> None:
        self.db = db
        self.settings = settings
        self.embedder = embedder
        #: The languages the embedder covers (its vectors are noise for the others).
        self.coverage = coverage(embedder.name, settings.embed_languages) if embedder else None
        self.rerankers = RerankerSlot(reranker, owned=owns_reranker)
        self.order = order
        self.legs = open_legs(db, settings)
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="quire-leg")

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.legs.close()
        self.rerankers.close()

    # -- the request ------------------------------------------------------------------------
    def check(self, options: SearchOptions) -> None:
        """NotFound when the options name documents that do not exist."""
        with self.db.read() as conn:
            missing = Filter.of(options).missing_documents(conn)
        if missing:
            raise NotFound(f"no such document: {', '.join(map(str, missing))}")

    def search(
        self, query: str, options: SearchOptions | None = None, *, plan: Plan | None = None
    ) -> SearchResult:
        """Validate, then run one search (InputError: an empty query; NotFound: no document)."""
        opts = options or SearchOptions()
        if not query.strip():
            raise InputError("the query is empty")
        self.check(opts)
        return self.run(query, opts, plan=plan)

    def run(self, query: str, options: SearchOptions, *, plan: Plan | None = None) -> SearchResult:
        """One search whose query is not empty and whose documents exist (see ``search``).

        ``plan``: one made already (the chat engine plans with its LLM); None: heuristic.
        """
        with self.rerankers.hold() as reranker:  # to the end, whatever replaces it meanwhile
            return self._run(query, options, plan, reranker)

    def _run(
        self, query: str, options: SearchOptions, plan: Plan | None, reranker: Reranker | None
    ) -> SearchResult:
        t_start, cpu_start = time.perf_counter(), time.process_time()
        req = self._plan(query, options, plan)
        rankings, qvecs = self._legs(req)
        hyde_used = self._hyde(req, rankings, qvecs)
        fused = self._windows(req, rankings, self._fuse(req, rankings))
        ranks, scores = per_leg(rankings)
        counts: dict[str, int] = {s: sum(s in r for r in ranks.values()) for s in sources(rankings)}
        counts["fused"] = len(fused)
        order, rerank_scores, spans, report = self._rerank(req, reranker, [c for c, _ in fused])
        hits = self._hydrate(req, order, ranks, scores, dict(fused), rerank_scores, spans)
        if req.options.rerank and reranker is None:
            hits = self._by_sentence(req, hits)
        req.timings["total"] = _ms(t_start)
        return SearchResult(
            query=req.query,
            plan=req.plan,
            strategy=req.strategy,
            hits=hits,
            counts=counts,
            timings_ms=req.timings,
            cpu_ms=round((time.process_time() - cpu_start) * 1000, 2),
            notices=req.notices,
            rerank=report,
            hyde_used=hyde_used,
        )

    # -- stages -----------------------------------------------------------------------------
    def _plan(self, query: str, options: SearchOptions, plan: Plan | None) -> _Request:
        t0 = time.perf_counter()
        query = query.strip()
        notices = []
        if len(query) > MAX_QUERY_CHARS:
            notices.append(f"the query was cut to its first {MAX_QUERY_CHARS} characters")
            query = query[:MAX_QUERY_CHARS]
        plan = plan or heuristic_plan(query)
        strategy: Strategy = options.strategy or plan.strategy
        pool = (
            self.settings.pool_exhaustive
            if strategy == "exhaustive"
            else self.settings.pool_precise
        )
        limit = options.limit or RERANK_TOP[strategy]
        req = _Request(
            query=query,
            options=options,
            flt=Filter.of(options),
            plan=plan,
            strategy=strategy,
            pool=max(pool, limit),
            limit=limit,
            notices=notices,
        )
        req.timings["plan"] = _ms(t0)
        return req

    def _legs(self, req: _Request) -> tuple[Rankings, np.ndarray | None]:
        """Run the legs concurrently, each on its own read connection; the query vectors
        (the variations', then HyDE's passage when it may be used) for the dense runs."""
        legs, variations = req.options.legs, req.plan.queries or [req.query]
        futures: dict[LegRun, Future[tuple[fusion.Ranking, float]]] = {}
        if "bm25" in legs:
            for i, q in enumerate(variations):
                futures[LegRun("bm25", i)] = self._submit(
                    self.legs.lexical.bm25,
                    q,
                    limit=req.pool,
                    flt=req.flt,
                    max_df=self.settings.bm25_max_df,
                )
        if "exact" in legs and req.plan.hard_keywords:
            futures[LegRun("exact")] = self._submit(
                self.legs.exact.exact, req.plan.hard_keywords, limit=req.pool, flt=req.flt
            )
        qvecs = None
        dense = False
        if "dense" in legs:
            with self.db.read() as conn:  # one read for both
                self._keyword_only(req, conn)
                dense = self._dense_ready(req, conn)
        if dense and self.embedder is not None:
            t0 = time.perf_counter()
            hyde = self._hyde_text(req)
            qvecs = self.embedder.embed(list(variations) + ([hyde] if hyde else []))
            req.timings["embed"] = _ms(t0)
            for i in range(len(variations)):
                futures[LegRun("dense", i)] = self._submit(self._knn, qvecs[i], flt=req.flt)
        rankings: Rankings = {}
        for run, fut in futures.items():
            rankings[run], ms = fut.result()
            req.timings[run.source] = max(req.timings.get(run.source, 0.0), ms)
        return rankings, qvecs

    def _hyde(self, req: _Request, rankings: Rankings, qvecs: np.ndarray | None) -> bool:
        """Add HyDE's dense run: always (``fusion``), or when the dense runs found little."""
        if qvecs is None or not self._hyde_text(req):
            return False
        found = [h for run, r in rankings.items() if run.source == "dense" for h in r]
        best = max((s for _, s in found), default=0.0)
        if self._hyde_mode(req) == "supplement" and (
            best >= self.settings.hyde_threshold_score
            and len(found) >= self.settings.hyde_threshold_count
        ):
            return False
        rankings[LegRun("hyde")], req.timings["hyde"] = self._submit(
            self._knn, qvecs[-1], flt=req.flt
        ).result()
        return True

    def _fuse(self, req: _Request, rankings: Rankings) -> list[tuple[int, float]]:
        t0 = time.perf_counter()
        weight = {
            "bm25": self.settings.weight_bm25,
            "dense": self.settings.weight_dense,
            "hyde": self.settings.weight_dense,
            "exact": self.settings.weight_exact,
            "window": self.settings.weight_window,
        }
        if self.settings.fusion == "blend":
            fused = fusion.blend(merged(rankings, "bm25"), merged(rankings, "dense", "hyde"))
            # Exact matches and windows have no comparable score: rank-fuse them with it.
            extra = {s: r for s in ("exact", "window") if (r := merged(rankings, s))}
            if extra:
                fused = fusion.rrf(
                    {"blend": fused, **extra},
                    k=self.settings.rrf_k,
                    weights={"blend": 1.0, **{s: weight[s] for s in extra}},
                )
        else:
            fused = fusion.rrf(
                {str(run): r for run, r in rankings.items()},
                k=self.settings.rrf_k,
                weights={str(run): weight[run.source] for run in rankings},
            )
        req.timings["fusion"] = req.timings.get("fusion", 0.0) + _ms(t0)
        return fused[: req.pool]

    def _windows(
        self, req: _Request, rankings: Rankings, fused: list[tuple[int, float]]
    ) -> list[tuple[int, float]]:
        """Fuse again with the window ranking of the fused candidates (see windows.py)."""
        if not self.settings.weight_window or "bm25" not in req.options.legs or not fused:
            return fused
        t0 = time.perf_counter()
        order = [cid for cid, _ in fused[:WINDOW_CANDIDATES]]
        with self.db.read() as conn:
            # Windows lift only these candidates, so the hits are among the first
            # max(WINDOW_CANDIDATES, limit) fused: their chunks are read now, in one go.
            self._views(req, [cid for cid, _ in fused[: max(len(order), req.limit)]], conn)
            found = self._best_windows(req, order, conn)
        req.timings["window"] = _ms(t0)
        if not found:
            return fused
        rankings[LegRun("window")] = windows.ranking(found, order)
        return self._fuse(req, rankings)

    def _best_windows(
        self, req: _Request, order: list[int], conn: Connection | None = None
    ) -> dict[int, windows.Window]:
        """The best window of each chunk of ``order`` (kept on the request for reranking);
        read on ``conn`` when given, else in a read of its own when anything is missing."""
        missing = [cid for cid in order if cid not in req.best]
        terms = lexical.terms(req.query)
        if missing and terms:
            with nullcontext(conn) if conn is not None else self.db.read() as reading:
                if req.idf is None:
                    req.idf = windows.idf_weights(reading, terms, self.legs.lexical)
                views = self._views(req, missing, reading)
            texts = {cid: v.text for cid, v in views.items()}
            found = windows.best_windows(
                terms, req.idf, texts, missing, size=self.settings.window_sentences
            )
            req.best.update({cid: found.get(cid) for cid in missing})
        return {cid: w for cid in order if (w := req.best.get(cid)) is not None}

    def _focus(self, req: _Request, order: list[int]) -> dict[int, tuple[int, int]]:
        """Where in each chunk the query's terms are closest together (its best window)."""
        return {cid: (w.start, w.end) for cid, w in self._best_windows(req, order).items()}

    def _rerank(
        self, req: _Request, reranker: Reranker | None, order: list[int]
    ) -> tuple[list[int], dict[int, float], dict[int, tuple[int, int]], RerankReport | None]:
        """The cross-encoder's order of the fused candidates (fusion order when there is no
        model or it fails; as many as ``order.reach`` asks for _by_sentence), cut to the limit;
        and the span of each chunk it read: its best window widened to rerank_passage_chars."""
        if not req.options.rerank or reranker is None:
            reach = getattr(self.order, "reach", None) if req.options.rerank else None
            return order[: max(req.limit, reach(req.query) if reach else 0)], {}, {}, None
        if not order:
            return order, {}, {}, None
        t0 = time.perf_counter()
        try:
            texts = {cid: v.text for cid, v in self._views(req, order).items()}
            focus = self._focus(req, order)
            limit = self.settings.rerank_passage_chars
            spans = {
                cid: windows.passage_span(texts[cid], focus.get(cid), limit)
                for cid in order
                if cid in texts
            }
            outcome = rerank(
                reranker,
                req.query,
                [(cid, texts[cid][slice(*spans[cid])]) for cid in order if cid in texts],
                top_n=req.limit,
                min_logit=self.settings.rerank_min_logit,
                budget_ms=self.settings.rerank_budget_ms,
            )
        except Exception as exc:  # noqa: BLE001 - a broken model must not fail the search
            log.warning("reranking failed; keeping fusion order", exc_info=True)
            req.notices.append(f"reranking failed ({type(exc).__name__}): fusion order kept")
            return order[: req.limit], {}, {}, None
        finally:
            req.timings["rerank"] = _ms(t0)
        read = {cid: spans[cid] for cid in outcome.scores}
        return outcome.order[: req.limit], outcome.scores, read, outcome.report()

    def _by_sentence(self, req: _Request, hits: list[Hit]) -> list[Hit]:
        """A search that asked to rerank without a cross-encoder: the hits in the order of their
        best sentence (``order``); fusion order without one, or if it fails."""
        if self.order is None:
            req.notices.append("no reranker model installed: results keep fusion order")
            return hits
        t0 = time.perf_counter()
        try:
            ordered = self.order(req.query, hits)[: req.limit]
        except Exception as exc:  # noqa: BLE001 - ordering must not fail the search
            log.warning("ordering by sentence failed; keeping fusion order", exc_info=True)
            req.notices.append(f"ordering by sentence failed ({type(exc).__name__})")
            return hits[: req.limit]
        finally:
            req.timings["rerank"] = _ms(t0)
        req.notices.append(NO_CROSS_ENCODER)
        return ordered

    def _hydrate(
        self,
        req: _Request,
        order: list[int],
        ranks: dict[int, dict[str, int]],
        scores: dict[int, dict[str, float]],
        fused: dict[int, float],
        rerank_scores: dict[int, float],
        rerank_spans: dict[int, tuple[int, int]],
    ) -> list[Hit]:
        t0 = time.perf_counter()
        views = self._views(req, order)
        focus = self._focus(req, order[:FOCUS_HITS])
        patterns = highlight_patterns([req.query, *req.plan.queries], req.plan.hard_keywords)
        hits = [
            from_view(
                v,
                highlights=highlight(v.text, patterns),
                ranks=ranks.get(cid, {}),
                scores={k: round(s, 5) for k, s in scores.get(cid, {}).items()},
                fused=round(fused.get(cid, 0.0), 6),
                rerank=round(rerank_scores[cid], 4) if cid in rerank_scores else None,
                rerank_span=rerank_spans.get(cid),
                focus=focus.get(cid),
            )
            for cid in order
            if (v := views.get(cid)) is not None
        ]
        if req.options.context and hits:
            with self.db.read() as conn:
                ctx = context_mod.adjacent_pages(conn, [(h.document_id, h.page) for h in hits])
            for h in hits:
                h.context = ctx.get((h.document_id, h.page))
        req.timings["hydrate"] = _ms(t0)
        return hits

    # -- helpers ----------------------------------------------------------------------------
    def _views(
        self, req: _Request, ids: list[int], conn: Connection | None = None
    ) -> dict[int, chunks.ChunkView]:
        """The chunks ``ids`` of ready documents, read once per request (on ``conn`` if given)."""
        missing = [cid for cid in ids if cid not in req.views]
        if missing:
            with nullcontext(conn) if conn is not None else self.db.read() as reading:
                req.views.update(chunks.ready_views(reading, missing))
        return {cid: req.views[cid] for cid in ids if cid in req.views}

    def _hyde_mode(self, req: _Request) -> str:
        return req.options.hyde_mode or self.settings.hyde_mode

    def _hyde_text(self, req: _Request) -> str | None:
        return req.plan.hyde_passage if self._hyde_mode(req) != "off" else None

    def _keyword_only(self, req: _Request, conn: Connection) -> None:
        """Say so when documents in the search's scope are still being embedded (the dense
        leg does not see their new chunks yet)."""
        where, params = req.flt.document_sql(conn)
        n = conn.execute(
            text(f"SELECT count(*) FROM documents d WHERE {where} AND d.status = 'searchable'"),
            params,
        ).scalar_one()
        if n:
            req.notices.append(
                f"{n} {'document is' if n == 1 else 'documents are'} searchable by keywords "
                "only while being embedded: found by BM25 and exact matches, not yet by meaning"
            )

    def _dense_ready(self, req: _Request, conn: Connection) -> bool:
        """Whether the dense leg can run; if not, why, in the request's notices."""
        why = None
        if self.embedder is None:
            why = "no embedder: BM25 and exact legs only"
        else:
            meta = vectors.read_meta(conn)
            if meta is None or meta.state != "ready":
                why = "the vector index is being rebuilt: BM25 and exact legs only"
            elif meta.model != self.embedder.name:
                why = f"the vector index holds {meta.model}, not {self.embedder.name}"
            else:
                why = self._unread_language(req.query)
        if why:
            req.notices.append(why)
        return why is None

    def _unread_language(self, query: str) -> str | None:
        """Why the dense leg is no use for a query in a script the embedder was not trained
        on (its vectors for a Japanese question are noise to an English model: page-QA
        held-out CJK hit@1 0.96 without it, 0.71 with it); None when it may run."""
        language = text_language(query)
        if language is None or language == "latin":
            return None  # Latin script: which language is not told from a short query
        if self.coverage is None or self.coverage.covers(language) is not False:
            return None
        return (
            f"{self.coverage.name} does not cover {language_name(language)}: BM25 and exact legs "
            "only (a multilingual embedder: see docs/running/languages.md)"
        )

    def _submit(
        self, fn: Callable[..., fusion.Ranking], *args: Any, **kwargs: Any
    ) -> Future[tuple[fusion.Ranking, float]]:
        """Run ``fn(conn, ...)`` on its own read connection in the pool; (ranking, ms)."""

        def timed() -> tuple[fusion.Ranking, float]:
            t0 = time.perf_counter()
            with self.db.read() as conn:
                result = fn(conn, *args, **kwargs)
            return result, _ms(t0)

        return self._pool.submit(timed)

    def _knn(self, conn: Connection, vec: np.ndarray, *, flt: Filter) -> list[tuple[int, float]]:
        return self.legs.dense.knn(conn, vec, k=self.settings.dense_k, flt=flt)


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 2)
