"""Page-exact question answering, measured: does search bring back the page that holds the
answer, and does the answer quote the fact and cite that page (and only that page)?

A question set is JSONL in the layout of ``shared/data/qa/README.md``: ``question``, ``file``
(relative to the documents folder), ``answer_any`` (short strings copied from the page), and
where the answer is — ``pages`` for a PDF (1-based physical pages), ``section`` for an EPUB
(the heading that opens it), ``turn`` for a Perplexity export, ``locator`` for an Office file
(:func:`office_gold`), ``locator.page`` for a page image (a frame of the file),
``locator.heading`` for a saved web page (the nearest heading of the cited passage's heading
path, :func:`web_gold`; null: before every heading). The documents the set names are
ingested once, by the real intake and worker, into a library cached under
``<data_dir>/eval/pageqa-<hash>`` (the hash covers the files, the embedder, the chunking and
:data:`INDEX_VERSION`). Then every question is searched over the whole library and answered
(extractively unless an LLM is asked for), and scored:

- search: right page first (hit@1), in the top 5 (hit@5), MRR@10;
- answer: contains an ``answer_any`` string (containment), the quoted evidence contains one;
- citations: the share of cited sources on a right page (precision), the first citation on a
  right page, at least one right page cited (recall); an answer that cites nothing scores 0;
- time: p50/p95 of search and of the whole answer.

Questions of kinds Quire does not read yet (``UNREAD_KINDS``, none today) are
reported as such, their files not ingested, and the rest of the set goes on.

Text is compared as the set's verifier compares it: NFKC, soft hyphens removed, whitespace
collapsed. A malformed line, a missing document or a page out of range is reported with its
line number, and the rest of the set goes on.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import shutil
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from quire.config import Settings
from quire.errors import InputError, QuireError
from quire.evaluation.questions import (
    OFFICE_SETS,
    Question,
    contains_answer,
    normalise,
    office_gold,
    read_questions,
    web_gold,
)
from quire.ingest.intake import add_file
from quire.ingest.worker import Worker
from quire.retrieval.hits import Hit
from quire.retrieval.options import RetrievalOptions, SearchOptions
from quire.runtime import Runtime
from quire.storage.chunks import get_page, list_pages
from quire.storage.documents import list_documents
from quire.storage.migrate import open_database, scratch_library
from quire.synthesis.answer import ChatRequest
from quire.synthesis.events import DoneEvent, Source, SourcesEvent
from quire.synthesis.parse import cited_numbers

log = logging.getLogger(__name__)

#: Bump when what the cached library holds changes (ingest, chunking), to build it anew.
# 4: Office files (issue 34); 5: saved web pages (issue 35); 6: PDF labels beside their values;
# 7: unmapped glyphs as bullets or U+FFFD; 8: PDF lines grouped at 0.4 overlap (quoted code);
# 9: TeX's spacing accents composed with their letters; 10: EPUB headings with their inline
# markup joined without a space ("—continued.", not "— continued ."); 11: ruled tables whose
# descriptions run on for lines (the yellow paper's opcodes); 12: PDF text boxes grouped the same
# way in every run (ties by first seen, not by memory address); 13: text turned a quarter (a
# chart's axis title) read along its letters; 14: a hanging indent goes on with its paragraph;
# 15: so do a paragraph's lines set a little more than half a line apart (the RISC-V ABI's);
# 16: a Markdown pipe table (Perplexity answers included) is read as rows with their headers
INDEX_VERSION = 16
SEARCH_LIMIT = 10
MANIFEST = "manifest.json"


#: ``progress(task, done, total)``: task is "ingest" or "questions".
PageQAProgress = Callable[[str, int, int], None]


# -- the library ------------------------------------------------------------------------------
@dataclass
class Library:
    """The cached library of a question set: where it is, and each file's document."""

    path: Path
    settings: Settings
    documents: dict[str, dict[str, Any]]  # file (as the set names it) -> its document row
    cached: bool
    problems: list[str] = field(default_factory=list)


def library_dir(settings: Settings, files: Sequence[Path], embedder_name: str) -> Path:
    """The scratch data directory for these files, this embedder and this chunking."""
    key = json.dumps(
        [
            INDEX_VERSION,
            embedder_name,
            settings.chunk_chars,
            settings.chunk_overlap,
            sorted((str(f), f.stat().st_size, f.stat().st_mtime_ns) for f in files),
        ]
    )
    return settings.data_dir / "eval" / f"pageqa-{hashlib.sha256(key.encode()).hexdigest()[:10]}"


def open_library(
    settings: Settings,
    docs: Path,
    questions: Sequence[Question],
    embedder_name: str,
    progress: PageQAProgress | None = None,
) -> Library:
    """Ingest every file the questions name (unless cached) with the real intake and worker."""
    wanted = sorted({q.file for q in questions})
    problems = []
    files: dict[str, Path] = {}
    for name in wanted:
        path = docs / name
        if path.is_file():
            files[name] = path
        else:
            lines = ", ".join(str(q.line) for q in questions if q.file == name)
            problems.append(f"line {lines}: no such document: {path}")
    path = library_dir(settings, list(files.values()), embedder_name)
    manifest = path / MANIFEST
    cached = manifest.is_file()
    if not cached:
        # A library without its manifest was left half-built (interrupted, or a file failed):
        # start again rather than trust it.
        shutil.rmtree(path, ignore_errors=True)
    scratch, new = scratch_library(settings, path, fresh=not cached)
    if new and cached:  # its database is gone: build it all again
        shutil.rmtree(path, ignore_errors=True)
        cached = False
    if not cached:
        log.info("pageqa: ingesting %d documents into %s", len(files), path)
        db = open_database(scratch)
        try:
            for name, src in files.items():
                add_file(
                    db,
                    scratch.files_dir,
                    src,
                    src.name,
                    max_bytes=scratch.max_upload_bytes,
                    source_key=f"pageqa:{name}",
                )
        finally:
            db.dispose()
        worker = Worker(scratch)
        try:
            worker.run(drain=True)
        finally:
            worker.close()
    db = open_database(scratch)
    try:
        with db.read() as conn:
            rows = {d["filename"]: d for d in list_documents(conn)}
    finally:
        db.dispose()
    documents = {}
    for name, src in files.items():
        row = rows.get(src.name)
        if row is None or row["status"] != "ready":
            why = row["error"] if row else "not ingested"
            problems.append(f"{name}: could not be ingested ({why})")
            continue
        documents[name] = row
    if not cached and len(documents) == len(files):
        manifest.write_text(json.dumps({"files": wanted, "index_version": INDEX_VERSION}))
    return Library(path, scratch, documents, cached, problems)


# -- scoring ----------------------------------------------------------------------------------
def is_gold(
    q: Question, document_id: int, page: int, heading_path: str, docs: dict[int, str]
) -> bool:
    """Whether a hit or source at (document, page, heading path) is where the answer is."""
    if docs.get(document_id) != q.file:
        return False
    if q.kind in ("pdf", "image"):
        return page in q.pages
    if q.kind == "perplexity":
        return page == q.turn
    if q.kind in OFFICE_SETS:
        return page in q.gold
    if q.kind == "html":
        return web_gold(q, heading_path)
    section = normalise(q.section or "")
    return bool(section) and section in normalise(heading_path)


@dataclass
class Outcome:
    """One question's scores."""

    question: Question
    rank: int | None  # 1-based rank of the first right page among the hits, None if absent
    search_ms: float
    answer_ms: float = 0.0
    contains: bool = False
    contains_nocase: bool = False
    evidence: bool = False  # a quoted/cited passage holds the answer
    cited: int = 0
    cited_right: int = 0
    first_cited_right: bool = False
    #: (file, page, heading path) of each cited source, in the order the answer cites them.
    cited_places: list[tuple[str, int, str]] = field(default_factory=list)
    answer: str = ""
    error: str | None = None

    @property
    def precision(self) -> float:
        return self.cited_right / self.cited if self.cited else 0.0


def score_search(q: Question, hits: Sequence[Hit], docs: dict[int, str]) -> int | None:
    for rank, h in enumerate(hits[:SEARCH_LIMIT], start=1):
        if is_gold(q, h.document_id, h.page, h.heading_path, docs):
            return rank
    return None


def score_answer(
    outcome: Outcome, done: DoneEvent, sources: Sequence[Source], docs: dict[int, str]
) -> None:
    q = outcome.question
    outcome.answer = done.answer
    outcome.contains, outcome.contains_nocase = contains_answer(q, done.answer)
    by_n = {s.n: s for s in sources}
    cited = [by_n[n] for n in cited_numbers(done.answer) if n in by_n]
    right = [is_gold(q, s.document_id, s.page, s.heading_path, docs) for s in cited]
    outcome.cited, outcome.cited_right = len(cited), sum(right)
    outcome.cited_places = [(docs.get(s.document_id, ""), s.page, s.heading_path) for s in cited]
    outcome.first_cited_right = bool(right) and right[0]
    outcome.evidence = any(contains_answer(q, s.quote + " " + s.passage)[0] for s in cited)


# -- running ----------------------------------------------------------------------------------
def run_pageqa(
    settings: Settings,
    questions_path: Path,
    *,
    docs: Path | None = None,
    use_llm: bool = False,
    progress: PageQAProgress | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """Evaluate a page-QA set; returns the report (JSON-ready)."""
    questions, problems = read_questions(questions_path)
    docs = (docs or questions_path.parent.parent / "docs").resolve()
    if not docs.is_dir():
        raise InputError(f"{docs}: no such documents folder (give it with --docs)")
    questions = questions[:limit] if limit else questions
    from quire.embed import make_embedder

    embedder = make_embedder(settings)
    name = embedder.name
    embedder.close()
    library = open_library(settings, docs, questions, name, progress)
    problems += library.problems
    by_id = {int(d["id"]): file for file, d in library.documents.items()}
    questions = _with_office_gold(library, questions)
    usable = []
    for q in questions:
        doc = library.documents.get(q.file)
        if doc is None:
            continue
        if q.kind in OFFICE_SETS and not q.gold:
            problems.append(f"line {q.line} ({q.id}): no page of {q.file} is at its locator")
        out_of_range = [p for p in q.pages if not 1 <= p <= int(doc["page_count"])]
        if q.kind == "perplexity" and q.turn is not None and q.turn > int(doc["page_count"]):
            out_of_range = [q.turn]
        if out_of_range:
            problems.append(
                f"line {q.line} ({q.id}): page {out_of_range[0]} is out of range "
                f"({q.file} has {doc['page_count']})"
            )
            continue
        usable.append(q)
    outcomes = asyncio.run(_answer_all(library.settings, usable, by_id, use_llm, progress))
    for o in outcomes:
        if o.error:
            problems.append(f"line {o.question.line} ({o.question.id}): {o.error}")
    return {
        "questions_file": str(questions_path),
        "library": {
            "path": str(library.path),
            "cached": library.cached,
            "documents": len(library.documents),
        },
        "mode": "llm" if use_llm else "extractive",
        "problems": problems,
        "overall": _summary([o for o in outcomes if not o.error]),
        "by_kind": _grouped(outcomes, lambda o: o.question.kind),
        "by_qtype": _grouped(outcomes, lambda o: o.question.qtype),
        "by_file": _grouped(outcomes, lambda o: o.question.file),
        "questions": [_row(o) for o in outcomes],
    }


def _with_office_gold(library: Library, questions: Sequence[Question]) -> list[Question]:
    """The questions, each Office one with its right pages (:func:`office_gold`)."""
    office = [q for q in questions if q.kind in OFFICE_SETS and q.file in library.documents]
    if not office:
        return list(questions)
    db = open_database(library.settings)
    pages: dict[str, list[dict[str, Any]]] = {}
    try:
        with db.read() as conn:
            for file in {q.file for q in office}:
                doc_id = int(library.documents[file]["id"])
                rows = [get_page(conn, doc_id, p["page"]) for p in list_pages(conn, doc_id)]
                pages[file] = [r for r in rows if r is not None]
    finally:
        db.dispose()
    return [
        q.model_copy(update={"gold": office_gold(q, library.documents[q.file], pages[q.file])})
        if q in office
        else q
        for q in questions
    ]


async def _answer_all(
    settings: Settings,
    questions: Sequence[Question],
    docs: dict[int, str],
    use_llm: bool,
    progress: PageQAProgress | None,
) -> list[Outcome]:
    outcomes = []
    async with Runtime.open(settings, llm=use_llm) as rt:
        for i, q in enumerate(questions, start=1):
            try:
                outcomes.append(await _one(rt, q, docs, use_llm))
            except QuireError as exc:
                outcomes.append(Outcome(q, None, 0.0, error=exc.message))
            if progress:
                progress("questions", i, len(questions))
    return outcomes


async def _one(rt: Runtime, q: Question, docs: dict[int, str], use_llm: bool) -> Outcome:
    t0 = time.perf_counter()
    result = await asyncio.to_thread(
        rt.searcher.search, q.question, SearchOptions(limit=SEARCH_LIMIT)
    )
    outcome = Outcome(q, score_search(q, result.hits, docs), _ms(t0))
    t0 = time.perf_counter()
    request = ChatRequest(
        message=q.question, options=RetrievalOptions(), use_llm=use_llm, persist=False
    )
    prepared = await asyncio.to_thread(rt.engine.prepare, request)
    sources: list[Source] = []
    done: DoneEvent | None = None
    async for event in rt.engine.stream(prepared):
        if isinstance(event, SourcesEvent):
            sources = event.sources
        elif isinstance(event, DoneEvent):
            done = event
    outcome.answer_ms = _ms(t0)
    if done is None:
        outcome.error = "the answer failed"
        return outcome
    score_answer(outcome, done, sources, docs)
    return outcome


def _summary(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    n = len(outcomes)
    if not n:
        return {"questions": 0}

    def mean(values: Sequence[float]) -> float:
        return round(float(np.mean(values)), 3) if values else 0.0

    def pct(values: Sequence[float], q: float) -> float:
        return round(float(np.percentile(values, q)), 1)

    ranks = [o.rank for o in outcomes]
    search = [o.search_ms for o in outcomes]
    answer = [o.answer_ms for o in outcomes]
    return {
        "questions": n,
        "hit@1": mean([r == 1 for r in ranks]),
        "hit@5": mean([r is not None and r <= 5 for r in ranks]),
        "mrr@10": mean([1.0 / r if r else 0.0 for r in ranks]),
        "containment": mean([o.contains for o in outcomes]),
        "containment_nocase": mean([o.contains_nocase for o in outcomes]),
        "evidence": mean([o.evidence for o in outcomes]),
        "cited_precision": mean([o.precision for o in outcomes]),
        "first_citation": mean([o.first_cited_right for o in outcomes]),
        "cited_recall": mean([o.cited_right > 0 for o in outcomes]),
        "no_citation": sum(o.cited == 0 for o in outcomes),
        "mean_sources_cited": mean([o.cited for o in outcomes]),
        "pages_per_chunk": 1.0,  # a chunk never spans two pages
        "search_ms": {"p50": pct(search, 50), "p95": pct(search, 95)},
        "answer_ms": {"p50": pct(answer, 50), "p95": pct(answer, 95)},
    }


def _grouped(outcomes: Sequence[Outcome], key: Callable[[Outcome], str]) -> dict[str, Any]:
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        if not o.error:
            groups[key(o)].append(o)
    return {k: _summary(v) for k, v in sorted(groups.items())}


def _row(o: Outcome) -> dict[str, Any]:
    return {
        "id": o.question.id,
        "kind": o.question.kind,
        "qtype": o.question.qtype,
        "rank": o.rank,
        "contains": o.contains,
        "cited": o.cited,
        "cited_right": o.cited_right,
        "first_cited_right": o.first_cited_right,
        "cited_places": [list(p) for p in o.cited_places],
        "answer": o.answer,
        "search_ms": o.search_ms,
        "answer_ms": o.answer_ms,
        "error": o.error,
    }


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 1)
