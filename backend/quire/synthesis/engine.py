"""One answer, as a stream of typed events: rewrite → plan → retrieve (+ rerank) → map →
filter → dedup → reduce (streamed) → verify (→ at most one more retrieval round).

    engine = ChatEngine(db, settings, searcher, router)      # router None: extractive only
    prepared = engine.prepare(ChatRequest(message="…"))      # validates, stores the question
    async for event in engine.stream(prepared):               # StartEvent, PlanEvent, ...
        ...

The events are the models of synthesis/events.py. ``prepare`` raises the usual errors
(InputError, NotFound) before anything is streamed, and is the one place a question and its
document filter are checked; once streaming, every failure becomes an ``ErrorEvent``, and the
stream always ends with a ``DoneEvent`` or an ``ErrorEvent``.

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
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from typing import Any

from quire.config import Settings
from quire.errors import ErrorBody, InputError, LLMInterrupted, LLMUnavailable, QuireError
from quire.llm.base import backend_label
from quire.llm.router import LLMRouter
from quire.retrieval.hits import Hit, SearchResult
from quire.retrieval.options import SearchOptions
from quire.retrieval.planner import Plan, heuristic_plan
from quire.retrieval.search import NO_CROSS_ENCODER, Searcher
from quire.storage import conversations
from quire.storage.db import Database
from quire.synthesis import citecheck, extractive, parse, prompts
from quire.synthesis.answer import ChatRequest, Evidence, Prepared, Run, dedup, number
from quire.synthesis.budget import Budget
from quire.synthesis.events import (
    AnswerMode,
    DoneEvent,
    ErrorEvent,
    Event,
    PlanEvent,
    RetrievalEvent,
    SourcesEvent,
    StageEvent,
    StartEvent,
    TokenEvent,
    VerifyEvent,
)
from quire.synthesis.mapreduce import MAP_BATCH, Model, filter_facts, map_facts
from quire.synthesis.order import page_texts

log = logging.getLogger(__name__)

MAX_MESSAGE_CHARS = 8000
#: Where a quoted-only answer points for written ones: the web app's Settings page.
SET_UP_A_MODEL = "set one up in [Settings](/settings#s-answer) for written answers."
ANSWER_MAX_SOURCES = 15
HISTORY_TURNS = 6
SECOND_ROUND_SOURCES = 5
_ANAPHORA = re.compile(
    r"\b(it|its|they|them|their|this|that|these|those|he|she|his|her|there|which one|"
    r"the same|more|else|why|how so)\b",
    re.IGNORECASE,
)


class ChatEngine:
    """Answers questions over the library; shared by the chat API, /v1, the CLI and MCP."""

    def __init__(
        self, db: Database, settings: Settings, searcher: Searcher, router: LLMRouter | None
    ) -> None:
        self.db = db
        self.settings = settings
        self.searcher = searcher
        self.router = router

    @property
    def model(self) -> Model:
        """The LLM, for the stages that only run in LLM mode."""
        if self.router is None:
            raise LLMUnavailable("no language model is configured")
        return Model(self.router)

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
        if request.conversation_id is not None:
            with self.db.read() as conn:
                conversations.require(conn, request.conversation_id)
        self.searcher.check(SearchOptions.of(request.options))
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
    async def stream(self, prepared: Prepared) -> AsyncGenerator[Event, None]:
        mode, model, why = await self._mode(prepared.request)
        run = Run(prepared, mode, model)
        if why:  # said once, in the answer's first line (and the events' extractive_reason)
            run.why_extractive = why
        try:
            async for event in self._answer(run):
                yield event
        except asyncio.CancelledError:
            self._store(run, "interrupted")
            raise
        except LLMInterrupted as exc:
            message_id = self._store(run, "interrupted", error=exc.message)
            yield _error_event(exc.body(), exc.retryable, message_id)
        except QuireError as exc:
            message_id = self._store(run, "error", error=exc.message)
            yield _error_event(exc.body(), exc.retryable, message_id)
        except Exception as exc:  # noqa: BLE001 - the stream must end with an event, not hang
            log.exception("chat: the answer failed")
            message_id = self._store(run, "error", error=f"{type(exc).__name__}: {exc}")
            body = ErrorBody(
                status=500,
                code="internal_error",
                message="the answer failed unexpectedly; see the server log",
            )
            yield _error_event(body, False, message_id)
        finally:
            if not run.stored:  # a consumer that stopped iterating (generator closed)
                self._store(run, "interrupted")

    async def _mode(self, req: ChatRequest) -> tuple[AnswerMode, str | None, str | None]:
        if not req.use_llm:
            return "extractive", None, "the LLM was switched off for this question."
        if self.router is None:
            return "extractive", None, f"no language model is set up; {SET_UP_A_MODEL}"
        available = await self.router.available()
        if not available:
            # The servers' errors are the log's, /api/llm's and `quire doctor`'s to show.
            if missing := await self.router.missing_model():  # the fix, not the server's words
                name = missing.model.removesuffix(":latest")
                fix = f"run `ollama pull {name}`, or " if missing.name == "ollama" else ""
                why = f"the language model {name} is not installed: {fix}{SET_UP_A_MODEL}"
                return "extractive", None, why
            return "extractive", None, f"no language model is reachable; {SET_UP_A_MODEL}"
        return "llm", backend_label(available[0]), None

    async def _answer(self, run: Run) -> AsyncIterator[Event]:
        prep = run.prepared
        t0 = time.perf_counter()
        run.standalone = await self._rewrite(run)
        run.timings["rewrite"] = _ms(t0)
        yield StartEvent(
            conversation_id=prep.conversation_id,
            user_message_id=prep.user_message_id,
            question=prep.question,
            standalone_question=run.standalone,
            mode=run.mode,
            model=run.model,
            notices=list(run.notices),
            extractive_reason=run.why_extractive if run.mode == "extractive" else None,
        )

        t0 = time.perf_counter()
        run.plan = await self._plan(run)
        run.timings["plan"] = _ms(t0)
        yield PlanEvent(**run.plan.model_dump())

        result = await self._search(run, run.standalone, round_=1)
        yield _retrieval_event(result, round_=1, candidates=len(result.hits))
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
                log.warning("chat: the language model failed before answering: %s", exc.message)
                run.why_extractive = "the language model failed before answering (see the log)."
                run.evidence = []
                async for event in self._extractive(run, hits):
                    yield event
        else:
            if not hits:  # "nothing matches" is not a model's answer: say who answered
                run.mode, run.model = "extractive", None
            async for event in self._extractive(run, hits):
                yield event

        t0 = time.perf_counter()
        embedder = self.searcher.embedder
        run.citations = await asyncio.to_thread(citecheck.check_run, run, hits, embedder)
        run.timings["citations"] = _ms(t0)
        if run.mode == "llm" and run.budget and (trimmed := run.budget.notice()):
            run.notice(trimmed)
        run.timings["total"] = _ms(run.started)
        answer, cited = parse.clean_citations(run.answer, len(run.evidence))
        yield DoneEvent(
            message_id=self._store(run, "complete", cleaned=(answer, cited)),
            conversation_id=prep.conversation_id,
            answer=answer,
            citations=cited,
            mode=run.mode,
            model=run.model,
            notices=run.notices,
            extractive_reason=run.why_extractive if run.mode == "extractive" else None,
            timings_ms=run.timings,
            citations_checked=run.citations,
        )

    # -- stages -----------------------------------------------------------------------------
    async def _rewrite(self, run: Run) -> str:
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
                raw = await self.model.ask(
                    prompts.REWRITE_PROMPT.format(history=history, question=question),
                    "rewrite",
                    json_mode=False,
                )
            except LLMUnavailable as exc:
                log.warning("chat: rewriting the follow-up failed: %s", exc.message)
                run.notices.append("the follow-up was not rewritten: the model did not answer.")
            else:
                line = next((ln.strip() for ln in raw.strip().splitlines() if ln.strip()), "")
                line = line.strip("\"'“” ").removeprefix("Rewritten question:").strip()
                if 3 <= len(line) <= 2 * MAX_MESSAGE_CHARS // 8:
                    return line
        # Without a model: a short or referring follow-up searches with the previous question.
        if len(question.split()) <= 6 or _ANAPHORA.search(question):
            return f"{last_user} {question}"
        return question

    async def _plan(self, run: Run) -> Plan:
        if run.mode == "llm":
            try:
                raw = await self.model.ask(
                    prompts.PLAN_PROMPT.format(query=run.standalone), "plan", json_mode=True
                )
            except LLMUnavailable as exc:
                log.warning("chat: planning failed: %s", exc.message)
                run.notices.append("planned without the model: it did not answer.")
            else:
                plan = parse.parse_plan(raw, run.standalone)
                if plan is not None:
                    return plan
                run.notices.append("the model's plan was unusable: heuristic plan used.")
        return heuristic_plan(run.standalone)

    async def _search(self, run: Run, query: str, *, round_: int) -> SearchResult:
        t0 = time.perf_counter()
        plan = run.plan if round_ == 1 else heuristic_plan(query)
        options = SearchOptions.of(run.options)
        result = await asyncio.to_thread(self.searcher.run, query, options, plan=plan)
        run.timings["retrieval" if round_ == 1 else "retrieval_2"] = _ms(t0)
        for notice in result.notices:
            # How search ranks without a cross-encoder is the library's setup, not news about
            # this answer: /api/health, Settings and `quire doctor` say it.
            if notice != NO_CROSS_ENCODER:
                run.notice(notice)
        return result

    async def _llm_answer(self, run: Run, hits: Sequence[Hit]) -> AsyncIterator[Event]:
        run.budget = budget = Budget(await self.model.context_window())
        t0 = time.perf_counter()
        facts: list[Evidence] = []
        async for item in map_facts(self.model, run.standalone, hits, budget):
            if isinstance(item, Evidence):
                facts.append(item)
            else:
                yield item
        run.timings["map"] = _ms(t0)

        t0 = time.perf_counter()
        facts = await filter_facts(self.model, run.standalone, facts, budget)
        run.timings["filter"] = _ms(t0)
        yield StageEvent(stage="filter", done=1, total=1)
        best = number(dedup(facts)[:ANSWER_MAX_SOURCES])
        run.evidence = budget.fit(best, run.answer_prompt, kind="facts")
        yield SourcesEvent(sources=run.sources())

        t0 = time.perf_counter()
        yield StageEvent(stage="answer", done=0, total=1)
        prompt = run.answer_prompt(run.evidence)
        async for token in self._stream_answer(run, prompt):
            yield token
        run.timings["answer"] = _ms(t0)
        if not run.answer.strip():
            raise LLMUnavailable("the model returned an empty answer")

        async for event in self._verify(run):
            yield event

    async def _stream_answer(self, run: Run, prompt: str) -> AsyncIterator[TokenEvent]:
        t0 = time.perf_counter()
        first = True
        reply = self.model.stream(prompt)
        try:
            async for delta in reply:
                if first:
                    run.timings.setdefault("first_token", _ms(t0))
                    first = False
                run.answer += delta
                yield TokenEvent(text=delta)
        finally:
            await reply.aclose()
        if reply.label:
            run.model = reply.label  # the backend that actually answered this question

    async def _verify(self, run: Run) -> AsyncIterator[Event]:
        t0 = time.perf_counter()
        yield StageEvent(stage="verify", done=0, total=1)
        try:
            raw = await self.model.ask(
                prompts.VERIFY_PROMPT.format(question=run.standalone, answer=run.answer),
                "verify",
                json_mode=True,
            )
        except LLMUnavailable as exc:
            log.warning("chat: verifying the answer failed: %s", exc.message)
            run.notices.append("the answer was not verified: the model did not answer.")
            return
        verdict = parse.parse_verdict(raw)
        run.timings["verify"] = _ms(t0)
        if verdict is None:
            run.notices.append("the model's verification was unusable; skipped.")
            return
        run.verify = VerifyEvent(status=verdict.status, suggestion=verdict.suggestion, round=1)
        yield run.verify
        if verdict.status != "missed-info" or not verdict.suggestion:
            return
        # One more retrieval round for what is missing; new facts extend the answer.
        result = await self._search(run, verdict.suggestion, round_=2)
        seen = {e.hit.chunk_id for e in run.evidence}
        fresh = [h for h in result.hits if h.chunk_id not in seen][:MAP_BATCH]
        yield _retrieval_event(result, round_=2, candidates=len(fresh))
        if not fresh:
            return
        mapped = map_facts(self.model, run.standalone, fresh, run.budget)
        facts = [e async for e in mapped if isinstance(e, Evidence)]
        kept = await filter_facts(self.model, run.standalone, facts, run.budget)
        known = {e.key for e in run.evidence}
        new = [e for e in dedup([e for e in kept if not e.fallback]) if e.key not in known]
        new = number(new[:SECOND_ROUND_SOURCES], len(run.evidence) + 1)
        if run.budget is not None:
            new = run.budget.fit(new, run.addendum_prompt, kind="facts", required=False)
        if not new:
            return
        run.evidence.extend(new)
        yield SourcesEvent(sources=run.sources())
        prompt = run.addendum_prompt(new)
        run.answer += "\n\n"
        yield TokenEvent(text="\n\n")
        async for event in self._stream_answer(run, prompt):
            yield event

    async def _extractive(self, run: Run, hits: Sequence[Hit]) -> AsyncIterator[Event]:
        t0 = time.perf_counter()
        chosen = await asyncio.to_thread(self._select, run.standalone, hits)
        by_chunk: dict[int, Evidence] = {}
        lines = []
        for s in chosen:
            hit = hits[s.hit_index]
            e = by_chunk.get(hit.chunk_id)
            if e is None:
                e = by_chunk[hit.chunk_id] = Evidence(hit, s.text, n=len(by_chunk) + 1)
            lines.append(f"- “{parse.escape_citations(' '.join(s.text.split()))}” [{e.n}]\n")
        if lines:
            header = prompts.EXTRACTIVE_HEADER.format(why=_sentence(run.why_extractive))
            pieces = [header, *lines]
        elif hits:
            # No sentence holds a query term or comes close in meaning: say so, and still
            # point at the nearest passages.
            for hit in hits[:3]:
                by_chunk[hit.chunk_id] = Evidence(
                    hit, extractive.best_sentence(run.standalone, hit), n=len(by_chunk) + 1
                )
            refs = ", ".join(f"[{e.n}]" for e in by_chunk.values())
            pieces = [
                "Nothing in your library clearly answers this question. "
                f"The closest passages are {refs}."
            ]
        else:
            pieces = ["Nothing in your library matches this question."]
        if not lines and (run.options.document_ids or run.options.kinds or run.options.languages):
            pieces.append(" (The search was limited by a document, kind or language filter.)")
        run.evidence = list(by_chunk.values())
        yield SourcesEvent(sources=run.sources())
        for piece in pieces:
            run.answer += piece
            yield TokenEvent(text=piece)
        run.timings["extract"] = _ms(t0)

    def _select(self, question: str, hits: Sequence[Hit]) -> list[extractive.Sentence]:
        """The sentences to quote, read whole from their pages where a chunk cut them."""
        pages = page_texts(self.db, hits[: extractive.MAX_PASSAGES])
        return extractive.select(question, hits, self.searcher.embedder, pages=pages)

    # -- storing ----------------------------------------------------------------------------
    def _store(
        self,
        run: Run,
        status: str,
        *,
        error: str | None = None,
        cleaned: tuple[str, list[int]] | None = None,
    ) -> int | None:
        """Store the answer once (``cleaned``: its citations, when already cleaned)."""
        prep = run.prepared
        if run.stored or not prep.request.persist or prep.conversation_id is None:
            run.stored = True
            return None
        run.stored = True
        answer, cited = cleaned or parse.clean_citations(run.answer, len(run.evidence))
        meta: dict[str, Any] = {
            "mode": run.mode,
            "citations_checked": run.citations.model_dump() if run.citations else None,
            "verify": run.verify.model_dump(exclude={"event"}) if run.verify else None,
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
                    answer,
                    sources=[s.model_dump() for s in run.sources()],
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
def _retrieval_event(result: SearchResult, *, round_: int, candidates: int) -> RetrievalEvent:
    return RetrievalEvent(
        counts=result.counts,
        timings_ms=result.timings_ms,
        notices=result.notices,
        hyde_used=result.hyde_used,
        rerank=result.rerank,
        candidates=candidates,
        strategy=result.strategy,
        round=round_,
    )


def _error_event(body: ErrorBody, retryable: bool, message_id: int | None) -> ErrorEvent:
    return ErrorEvent(error=body, retryable=retryable, message_id=message_id)


def _sentence(text: str) -> str:
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 1)
