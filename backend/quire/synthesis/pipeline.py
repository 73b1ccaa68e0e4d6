"""One answer, as a stream of events: rewrite → plan → retrieve (+ rerank) → map → filter →
dedup → reduce (streamed) → verify (→ at most one more retrieval round).

    engine = ChatEngine(db, settings, searcher, router)      # router None: extractive only
    prepared = engine.prepare(ChatRequest(message="…"))      # validates, stores the question
    async for name, data in engine.stream(prepared):          # ("plan", {...}), ("token", ...)
        ...

Events and their data are documented in docs/chat-api.md. ``prepare`` raises the usual
errors (InputError, NotFound) before anything is streamed; once streaming, every failure
becomes an ``error`` event, and the stream always ends with ``done`` or ``error``.

When no LLM answers (none configured, unreachable, or failing before the first answer token)
the answer is extractive: quoted sentences of the top passages, each cited, labelled as such.
An LLM stream that breaks after text was shown ends in an ``error`` event; the partial answer
is stored with status ``interrupted``. A cancelled stream (the client left) stores the partial
answer the same way, and cancellation reaches the LLM's HTTP request (see llm/base.py).
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from quire.config import Settings
from quire.errors import InputError, LLMInterrupted, LLMUnavailable, NotFound, QuireError
from quire.llm.base import Message, Purpose, backend_label
from quire.llm.router import LLMRouter
from quire.retrieval.filters import Filter
from quire.retrieval.planner import Plan, heuristic_plan, plan_from_json
from quire.retrieval.search import Hit, Searcher, SearchOptions, SearchResult
from quire.storage import conversations
from quire.storage.db import Database
from quire.synthesis import extractive, parse, prompts

log = logging.getLogger(__name__)

Event = tuple[str, dict[str, Any]]
Mode = Literal["llm", "extractive"]

MAX_MESSAGE_CHARS = 8000
MAP_BATCH = 10
MAP_PASSAGE_CHARS = 1200  # per passage in a map prompt: ten of them stay under ~4k tokens
ANSWER_MAX_SOURCES = 15
EXTRACTIVE_SENTENCES = 5
HISTORY_TURNS = 6
_ANAPHORA = re.compile(
    r"\b(it|its|they|them|their|this|that|these|those|he|she|his|her|there|which one|"
    r"the same|more|else|why|how so)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ChatRequest:
    message: str
    conversation_id: int | None = None
    strategy: Literal["precise", "exhaustive"] | None = None
    hyde_mode: Literal["off", "fusion", "supplement"] | None = None
    document_ids: tuple[int, ...] = ()
    kinds: tuple[str, ...] = ()
    rerank: bool = True
    use_llm: bool = True
    history: tuple[tuple[str, str], ...] = ()  # given by the caller (OpenAI endpoint) instead
    persist: bool = True  # False: nothing stored (the OpenAI endpoint is stateless)


@dataclass
class Prepared:
    request: ChatRequest
    question: str
    conversation_id: int | None
    user_message_id: int | None
    history: list[tuple[str, str]]


@dataclass
class Source:
    """A numbered source the answer may cite, with the fact or sentence it contributes."""

    hit: Hit
    quote: str
    n: int = 0
    fallback: bool = False  # the fact is a raw snippet (the model gave nothing usable)

    @property
    def key(self) -> tuple[int, int]:
        return (self.hit.document_id, self.hit.page)

    def to_dict(self) -> dict[str, Any]:
        h = self.hit
        url = f"/api/documents/{h.document_id}/file"
        if h.kind == "pdf":
            url += f"#page={h.page}"
        elif h.kind == "perplexity" and h.metadata.get("url"):
            url = str(h.metadata["url"])
        return {
            "n": self.n,
            "chunk_id": h.chunk_id,
            "document_id": h.document_id,
            "title": h.title,
            "kind": h.kind,
            "filename": h.filename,
            "page": h.page,
            "heading_path": h.heading_path,
            "passage": h.text,
            "highlights": [list(span) for span in h.highlights],
            "quote": self.quote,
            "url": url,
            "view": f"/api/documents/{h.document_id}/pages/{h.page}",
            "score": h.rerank if h.rerank is not None else h.fused,
        }


@dataclass
class _Run:
    """The state of one answer while it streams (what gets stored at the end)."""

    prepared: Prepared
    mode: Mode
    model: str | None
    standalone: str = ""
    plan: Plan | None = None
    sources: list[Source] = field(default_factory=list)
    answer: str = ""
    verify: dict[str, Any] | None = None
    why_extractive: str = "no language model answered."
    notices: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)
    stored: bool = False


class ChatEngine:
    """Answers questions over the library; shared by the chat API, /v1 and the CLI."""

    def __init__(
        self, db: Database, settings: Settings, searcher: Searcher, router: LLMRouter | None
    ) -> None:
        self.db = db
        self.settings = settings
        self.searcher = searcher
        self.router = router

    @property
    def llm(self) -> LLMRouter:
        """The router, for the stages that only run in LLM mode."""
        if self.router is None:
            raise LLMUnavailable("no language model is configured")
        return self.router

    # -- before the stream ------------------------------------------------------------------
    def prepare(self, request: ChatRequest) -> Prepared:
        """Validate and store the question; raises InputError / NotFound (nothing streamed)."""
        question = request.message.strip()
        if not question:
            raise InputError("the message is empty")
        if len(question) > MAX_MESSAGE_CHARS:
            raise InputError(
                f"the message has {len(question)} characters; the limit is {MAX_MESSAGE_CHARS}"
            )
        with self.db.read() as conn:
            if request.conversation_id is not None:
                conversations.require(conn, request.conversation_id)
            missing = Filter(request.document_ids).missing_documents(conn)
        if missing:
            raise NotFound(f"no such document: {', '.join(map(str, missing))}")
        history = list(request.history)
        conversation_id = request.conversation_id
        user_message_id = None
        if request.persist:
            with self.db.write() as conn:
                if conversation_id is None:
                    conversation_id = conversations.create(conn, conversations.title_for(question))
                else:
                    history = conversations.history(conn, conversation_id, turns=HISTORY_TURNS)
                user_message_id = conversations.add_message(conn, conversation_id, "user", question)
        return Prepared(request, question, conversation_id, user_message_id, history)

    # -- the stream -------------------------------------------------------------------------
    async def stream(self, prepared: Prepared) -> AsyncIterator[Event]:
        req = prepared.request
        mode, model, why = await self._mode(req)
        run = _Run(prepared, mode, model)
        if why:
            run.notices.append(why)
            run.why_extractive = why
        try:
            async for event in self._answer(run):
                yield event
        except asyncio.CancelledError:
            self._store(run, "interrupted")
            raise
        except LLMInterrupted as exc:
            message_id = self._store(run, "interrupted", error=exc.message)
            yield "error", _error_data(exc, message_id)
        except QuireError as exc:
            message_id = self._store(run, "error", error=exc.message)
            yield "error", _error_data(exc, message_id)
        except Exception as exc:  # noqa: BLE001 - the stream must end with an event, not hang
            log.exception("chat: the answer failed")
            message_id = self._store(run, "error", error=f"{type(exc).__name__}: {exc}")
            yield (
                "error",
                {
                    "status": 500,
                    "code": "internal_error",
                    "message": "the answer failed unexpectedly; see the server log",
                    "retryable": False,
                    "message_id": message_id,
                },
            )
        finally:
            if not run.stored:  # a consumer that stopped iterating (generator closed)
                self._store(run, "interrupted")

    async def _mode(self, req: ChatRequest) -> tuple[Mode, str | None, str | None]:
        if not req.use_llm:
            return "extractive", None, "the LLM was switched off for this question."
        if self.router is None:
            return "extractive", None, "no language model is configured."
        available = await self.router.available()
        if not available:
            rows = await self.router.status()
            why = "; ".join(f"{r['name']}: {r['error']}" for r in rows if r.get("error"))
            return "extractive", None, f"no language model is reachable ({why})."
        return "llm", backend_label(available[0]), None

    async def _answer(self, run: _Run) -> AsyncIterator[Event]:
        prep = run.prepared
        t0 = time.perf_counter()
        run.standalone = await self._rewrite(run)
        run.timings["rewrite"] = _ms(t0)
        yield (
            "start",
            {
                "conversation_id": prep.conversation_id,
                "user_message_id": prep.user_message_id,
                "question": prep.question,
                "standalone_question": run.standalone,
                "mode": run.mode,
                "model": run.model,
                "notices": list(run.notices),
            },
        )

        t0 = time.perf_counter()
        run.plan = await self._plan(run)
        run.timings["plan"] = _ms(t0)
        yield "plan", run.plan.model_dump()

        result = await self._search(run, run.standalone, round_=1)
        yield "retrieval", _retrieval_data(result, round_=1)
        hits = result.hits

        if run.mode == "llm" and hits:
            try:
                async for event in self._llm_answer(run, hits):
                    yield event
            except LLMInterrupted:
                raise
            except LLMUnavailable as exc:
                if run.answer.strip():  # text was shown: an interruption, not a fallback
                    raise LLMInterrupted(exc.message) from exc
                run.mode, run.model, run.answer = "extractive", None, ""
                run.why_extractive = f"the language model failed ({exc.message})."
                run.notices.append(run.why_extractive)
                run.sources = []
                async for event in self._extractive(run, hits):
                    yield event
        else:
            async for event in self._extractive(run, hits):
                yield event

        if run.mode == "llm" and self.llm.active_name:
            run.model = self.llm.active_name  # the backend that actually answered
        run.timings["total"] = _ms(run.started)
        message_id = self._store(run, "complete")
        cleaned, cited = parse.clean_citations(run.answer, len(run.sources))
        yield (
            "done",
            {
                "message_id": message_id,
                "conversation_id": prep.conversation_id,
                "answer": cleaned,
                "citations": cited,
                "mode": run.mode,
                "model": run.model,
                "notices": run.notices,
                "timings_ms": run.timings,
                "status": "complete",
            },
        )

    # -- stages -----------------------------------------------------------------------------
    async def _ask(self, prompt: str, purpose: Purpose, *, json_mode: bool) -> str:
        messages: list[Message] = [
            {"role": "system", "content": prompts.SYSTEM},
            {"role": "user", "content": prompt},
        ]
        try:
            result: str = await self.llm.complete(messages, purpose=purpose, json_mode=json_mode)
        except LLMInterrupted as exc:
            # Nothing of an internal step reached the user: a failure, not an interruption.
            raise LLMUnavailable(exc.message, detail=exc.detail) from exc
        return result

    async def _rewrite(self, run: _Run) -> str:
        prep = run.prepared
        question = prep.question
        last_user = next((c for r, c in reversed(prep.history) if r == "user"), None)
        if last_user is None:
            return question
        if run.mode == "llm":
            history = "\n".join(
                f"{'User' if r == 'user' else 'Assistant'}: {extractive.clip(c, 500)}"
                for r, c in prep.history[-HISTORY_TURNS:]
            )
            try:
                raw = await self._ask(
                    prompts.REWRITE_PROMPT.format(history=history, question=question),
                    "rewrite",
                    json_mode=False,
                )
            except LLMUnavailable as exc:
                run.notices.append(f"the follow-up was not rewritten ({exc.message}).")
            else:
                line = next((ln.strip() for ln in raw.strip().splitlines() if ln.strip()), "")
                line = line.strip("\"'“” ").removeprefix("Rewritten question:").strip()
                if 3 <= len(line) <= 2 * MAX_MESSAGE_CHARS // 8:
                    return line
        # Without a model: a short or referring follow-up searches with the previous question.
        if len(question.split()) <= 6 or _ANAPHORA.search(question):
            return f"{last_user} {question}"
        return question

    async def _plan(self, run: _Run) -> Plan:
        if run.mode == "llm":
            try:
                raw = await self._ask(
                    prompts.PLAN_PROMPT.format(query=run.standalone), "plan", json_mode=True
                )
            except LLMUnavailable as exc:
                run.notices.append(f"planned without the model ({exc.message}).")
            else:
                plan = plan_from_json(raw, run.standalone)
                if plan is not None:
                    return plan
                run.notices.append("the model's plan was unusable: heuristic plan used.")
        return heuristic_plan(run.standalone)

    def _options(self, run: _Run) -> SearchOptions:
        req = run.prepared.request
        return SearchOptions(
            strategy=req.strategy,
            hyde_mode=req.hyde_mode,
            document_ids=req.document_ids,
            kinds=req.kinds,
            rerank=req.rerank,
        )

    async def _search(self, run: _Run, query: str, *, round_: int) -> SearchResult:
        t0 = time.perf_counter()
        plan = run.plan if round_ == 1 else heuristic_plan(query)
        result = await asyncio.to_thread(self.searcher.search, query, self._options(run), plan=plan)
        run.timings["retrieval" if round_ == 1 else "retrieval_2"] = _ms(t0)
        run.notices.extend(n for n in result.notices if n not in run.notices)
        return result

    async def _map(self, run: _Run, hits: Sequence[Hit]) -> AsyncIterator[Event | Source]:
        """Facts from the hits, a batch of ten at a time (yields stage events and Sources)."""
        batches = [hits[i : i + MAP_BATCH] for i in range(0, len(hits), MAP_BATCH)]
        for b, batch in enumerate(batches):
            passages = "\n\n".join(
                f"[{i}] {_where(h)}\n{extractive.clip(h.text, MAP_PASSAGE_CHARS)}"
                for i, h in enumerate(batch, start=1)
            )
            raw = await self._ask(
                prompts.MAP_PROMPT.format(
                    question=run.standalone, count=len(batch), passages=passages
                ),
                "map",
                json_mode=True,
            )
            facts = parse.parse_facts(raw, len(batch))
            if facts:
                for fact in sorted(facts, key=lambda f: f.node_id):
                    yield Source(batch[fact.node_id - 1], fact.fact)
            else:
                # Nothing usable: the batch's passages go on as raw snippets, not lost.
                for h in batch:
                    yield Source(h, extractive.best_sentence(run.standalone, h), fallback=True)
            yield "stage", {"stage": "map", "done": b + 1, "total": len(batches)}

    async def _filter(self, run: _Run, facts: list[Source]) -> list[Source]:
        if len(facts) <= 1:
            return facts
        listing = "\n".join(f"{i}. {s.quote}" for i, s in enumerate(facts, start=1))
        raw = await self._ask(
            prompts.FILTER_PROMPT.format(question=run.standalone, facts=listing),
            "filter",
            json_mode=True,
        )
        chosen = parse.parse_selection(raw, len(facts))
        if not chosen:  # none passed (or junk): keep all
            return facts
        if len(chosen) == 1 and len(facts) > 3:
            # One of many passed: the gate is probably too strict. Keep four: that one and
            # the best-ranked others.
            one = chosen[0] - 1
            keep = [one] + [i for i in range(len(facts)) if i != one][:3]
            return [facts[i] for i in sorted(keep)]
        return [facts[i - 1] for i in sorted(chosen)]

    async def _llm_answer(self, run: _Run, hits: Sequence[Hit]) -> AsyncIterator[Event]:
        t0 = time.perf_counter()
        facts: list[Source] = []
        async for item in self._map(run, hits):
            if isinstance(item, Source):
                facts.append(item)
            else:
                yield item
        run.timings["map"] = _ms(t0)

        t0 = time.perf_counter()
        facts = await self._filter(run, facts)
        run.timings["filter"] = _ms(t0)
        yield "stage", {"stage": "filter", "done": 1, "total": 1}
        run.sources = _number(_dedup(facts)[:ANSWER_MAX_SOURCES])
        yield "sources", {"sources": [s.to_dict() for s in run.sources]}

        t0 = time.perf_counter()
        yield "stage", {"stage": "answer", "done": 0, "total": 1}
        prompt = prompts.ANSWER_PROMPT.format(
            sources=_listing(run.sources), question=run.standalone
        )
        async for event in self._stream_answer(run, prompt):
            yield event
        run.timings["answer"] = _ms(t0)
        if not run.answer.strip():
            raise LLMUnavailable("the model returned an empty answer")

        async for event in self._verify(run):
            yield event

    async def _stream_answer(self, run: _Run, prompt: str) -> AsyncIterator[Event]:
        messages: list[Message] = [
            {"role": "system", "content": prompts.SYSTEM},
            {"role": "user", "content": prompt},
        ]
        t0 = time.perf_counter()
        first = True
        async for delta in self.llm.stream(messages, purpose="answer"):
            if first:
                run.timings.setdefault("first_token", _ms(t0))
                first = False
            run.answer += delta
            yield "token", {"text": delta}

    async def _verify(self, run: _Run) -> AsyncIterator[Event]:
        t0 = time.perf_counter()
        yield "stage", {"stage": "verify", "done": 0, "total": 1}
        try:
            raw = await self._ask(
                prompts.VERIFY_PROMPT.format(question=run.standalone, answer=run.answer),
                "verify",
                json_mode=True,
            )
        except LLMUnavailable as exc:
            run.notices.append(f"the answer was not verified ({exc.message}).")
            return
        verdict = parse.parse_verdict(raw)
        run.timings["verify"] = _ms(t0)
        if verdict is None:
            run.notices.append("the model's verification was unusable; skipped.")
            return
        run.verify = {**verdict.model_dump(), "round": 1}
        yield "verify", run.verify
        if verdict.status != "missed-info" or not verdict.suggestion:
            return
        # One more retrieval round for what is missing; new facts extend the answer.
        result = await self._search(run, verdict.suggestion, round_=2)
        seen = {s.hit.chunk_id for s in run.sources}
        fresh = [h for h in result.hits if h.chunk_id not in seen][:MAP_BATCH]
        yield "retrieval", {**_retrieval_data(result, round_=2), "candidates": len(fresh)}
        if not fresh:
            return
        facts = [s async for s in self._map(run, fresh) if isinstance(s, Source)]
        facts = [s for s in await self._filter(run, facts) if not s.fallback]
        known = {s.key for s in run.sources}
        new = [s for s in _dedup(facts) if s.key not in known][:5]
        if not new:
            return
        first = len(run.sources) + 1
        for i, s in enumerate(new):
            s.n = first + i
        run.sources.extend(new)
        yield "sources", {"sources": [s.to_dict() for s in run.sources]}
        prompt = prompts.ADDENDUM_PROMPT.format(
            question=run.standalone, answer=run.answer, sources=_listing(new), first=first
        )
        run.answer += "\n\n"
        yield "token", {"text": "\n\n"}
        async for event in self._stream_answer(run, prompt):
            yield event

    async def _extractive(self, run: _Run, hits: Sequence[Hit]) -> AsyncIterator[Event]:
        t0 = time.perf_counter()
        embedder = self.searcher.embedder
        chosen = await asyncio.to_thread(
            extractive.select, run.standalone, hits, embedder, count=EXTRACTIVE_SENTENCES
        )
        by_chunk: dict[int, Source] = {}
        lines = []
        for s in chosen:
            hit = hits[s.hit_index]
            src = by_chunk.get(hit.chunk_id)
            if src is None:
                src = by_chunk[hit.chunk_id] = Source(hit, s.text, n=len(by_chunk) + 1)
            lines.append(f"- “{' '.join(s.text.split())}” [{src.n}]\n")
        if lines:
            header = prompts.EXTRACTIVE_HEADER.format(why=_sentence(run.why_extractive))
            pieces = [header, *lines]
        elif hits:
            # No sentence holds a query term or comes close in meaning: say so, and still
            # point at the nearest passages.
            for hit in hits[:3]:
                by_chunk[hit.chunk_id] = Source(
                    hit, extractive.best_sentence(run.standalone, hit), n=len(by_chunk) + 1
                )
            refs = ", ".join(f"[{s.n}]" for s in by_chunk.values())
            pieces = [
                "Nothing in your library clearly answers this question. "
                f"The closest passages are {refs}."
            ]
        else:
            pieces = ["Nothing in your library matches this question."]
        if not lines and (run.prepared.request.document_ids or run.prepared.request.kinds):
            pieces.append(" (The search was limited by a document or kind filter.)")
        run.sources = list(by_chunk.values())
        yield "sources", {"sources": [s.to_dict() for s in run.sources]}
        for piece in pieces:
            run.answer += piece
            yield "token", {"text": piece}
        run.timings["extract"] = _ms(t0)

    # -- storing ----------------------------------------------------------------------------
    def _store(self, run: _Run, status: str, *, error: str | None = None) -> int | None:
        prep = run.prepared
        if run.stored or not prep.request.persist or prep.conversation_id is None:
            run.stored = True
            return None
        run.stored = True
        cleaned, cited = parse.clean_citations(run.answer, len(run.sources))
        meta: dict[str, Any] = {
            "mode": run.mode,
            "verify": run.verify,
            "notices": run.notices,
            "standalone_question": run.standalone,
            "cited": cited,
        }
        if error:
            meta["error"] = error
        run.timings.setdefault("total", _ms(run.started))
        try:
            with self.db.write() as conn:
                return conversations.add_message(
                    conn,
                    prep.conversation_id,
                    "assistant",
                    cleaned,
                    sources=[s.to_dict() for s in run.sources],
                    plan=run.plan.model_dump() if run.plan else None,
                    timings=run.timings,
                    model=run.model or "extractive",
                    status=status,
                    meta=meta,
                )
        except Exception:  # noqa: BLE001 - storing must not turn into a second failure
            log.exception("chat: could not store the answer")
            return None


# -- helpers ----------------------------------------------------------------------------------
def _retrieval_data(result: SearchResult, *, round_: int) -> dict[str, Any]:
    return {
        "counts": result.counts,
        "timings_ms": result.timings_ms,
        "notices": result.notices,
        "hyde_used": result.hyde_used,
        "rerank": result.rerank,
        "candidates": len(result.hits),
        "strategy": result.strategy,
        "round": round_,
    }


def _error_data(exc: QuireError, message_id: int | None) -> dict[str, Any]:
    return {
        "status": exc.status_code,
        "code": exc.code,
        "message": exc.message,
        "retryable": exc.retryable,
        "message_id": message_id,
    }


def _dedup(facts: Sequence[Source]) -> list[Source]:
    """The best (first-ranked) fact per source page."""
    seen: set[tuple[int, int]] = set()
    out = []
    for s in facts:
        if s.key not in seen:
            seen.add(s.key)
            out.append(s)
    return out


def _number(sources: list[Source]) -> list[Source]:
    for i, s in enumerate(sources, start=1):
        s.n = i
    return sources


def _where(h: Hit) -> str:
    unit = {"pdf": "page", "epub": "section", "perplexity": "turn"}.get(h.kind, "page")
    where = f"{h.title}, {unit} {h.page}"
    return f"{where} ({h.heading_path})" if h.heading_path else where


def _listing(sources: Sequence[Source]) -> str:
    return "\n".join(f"[{s.n}] ({_where(s.hit)}) {s.quote}" for s in sources)


def _sentence(text: str) -> str:
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 1)
