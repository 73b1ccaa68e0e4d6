"""The LLM's stages of an answer: map (one fact per passage, ten passages a call), filter (the
facts relevant to the question), and the prompts' model calls. The engine streams the answer
and runs the verification round around these.

    model = Model(router)
    budget = Budget(await model.context_window())
    async for item in map_facts(model, question, hits, budget):   # Evidence, StageEvent progress
        ...
    kept = await filter_facts(model, question, facts)

The map calls are as many as batches of ten make; when ten passages of ``MAP_PASSAGE_CHARS``
do not fit the model's context, the passages are shortened (around their best sentences, down
to ``MAP_PASSAGE_MIN_CHARS``), and then the lowest-ranked are left out (synthesis/budget.py).
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Sequence
from functools import partial

from quire.errors import LLMInterrupted, LLMUnavailable
from quire.llm.base import Message, Purpose
from quire.llm.router import LLMRouter, Reply
from quire.retrieval.hits import Hit
from quire.retrieval.windows import passage_span
from quire.synthesis import extractive, parse, prompts
from quire.synthesis.answer import Evidence, where
from quire.synthesis.budget import Budget
from quire.synthesis.events import StageEvent

MAP_BATCH = 10
MAP_PASSAGE_CHARS = 1200  # per passage in a map prompt: ten of them stay under ~4k tokens
#: How far passages are shortened, in turn, before any is left out of a small context.
MAP_PASSAGE_MIN_CHARS = 400
_SHORTER = (MAP_PASSAGE_CHARS, 900, 600, MAP_PASSAGE_MIN_CHARS)
#: The filter gate kept one fact of more than this many: it is probably too strict.
FILTER_TOO_STRICT = 3
FILTER_KEEP = 4


class Model:
    """The router as an answer's stages use it: a prompt in, text (or deltas) out."""

    def __init__(self, router: LLMRouter) -> None:
        self.router = router

    @staticmethod
    def messages(prompt: str) -> list[Message]:
        return prompts.messages(prompt)

    async def context_window(self) -> int:
        """Tokens a call may use (prompt and reply) on whichever backend answers."""
        return await self.router.context_window()

    async def ask(self, prompt: str, purpose: Purpose, *, json_mode: bool) -> str:
        """The whole reply of an internal step; LLMUnavailable if none came."""
        try:
            result: str = await self.router.complete(
                self.messages(prompt), purpose=purpose, json_mode=json_mode
            )
        except LLMInterrupted as exc:
            # Nothing of an internal step reached the user: a failure, not an interruption.
            raise LLMUnavailable(exc.message, detail=exc.detail) from exc
        return result

    def stream(self, prompt: str) -> Reply:
        """The answer's deltas, as the model writes them."""
        return self.router.stream(self.messages(prompt), purpose="answer")


Batch = list[tuple[Hit, str]]  # the passages of one map call, as shown


async def map_facts(
    model: Model, question: str, hits: Sequence[Hit], budget: Budget | None = None
) -> AsyncIterator[Evidence | StageEvent]:
    """Facts from the hits, a batch of ten at a time (and a StageEvent after each batch); with
    a ``budget``, each batch fits the model's context."""
    batches = plan_batches(question, hits, budget)
    for b, batch in enumerate(batches):
        raw = await model.ask(_map_prompt(question, batch), "map", json_mode=True)
        facts = parse.parse_facts(raw, len(batch))
        if facts:
            for fact in sorted(facts, key=lambda f: f.node_id):
                yield Evidence(batch[fact.node_id - 1][0], fact.fact)
        else:
            # Nothing usable: the batch's passages go on as raw snippets, not lost.
            for h, _ in batch:
                yield Evidence(h, extractive.best_sentence(question, h), fallback=True)
        yield StageEvent(stage="map", done=b + 1, total=len(batches))


def plan_batches(question: str, hits: Sequence[Hit], budget: Budget | None) -> list[Batch]:
    """The map calls: batches of ten passages in rank order, as many calls as that makes; with
    a ``budget``, passages shortened and then the last left out until each call fits."""
    if budget is None:
        shown = [(h, _readable(h)) for h in hits]
        return [shown[i : i + MAP_BATCH] for i in range(0, len(shown), MAP_BATCH)]
    calls = math.ceil(len(hits) / MAP_BATCH)
    for chars in _SHORTER:
        batches = _pack(question, hits, budget, chars, calls)
        placed = sum(len(b) for b in batches)
        if placed == len(hits):
            break
    if hits and not placed:
        raise budget.too_small()
    budget.offered["passages"] += len(hits)
    budget.left_out["passages"] += len(hits) - placed
    budget.shortened["passages"] += sum(
        len(text) < len(_readable(h)) for batch in batches for h, text in batch
    )
    return batches


def _pack(
    question: str, hits: Sequence[Hit], budget: Budget, chars: int, calls: int
) -> list[Batch]:
    """Passages of ``chars`` packed into at most ``calls`` batches that fit, in rank order,
    until one does not fit (it and the rest are left out)."""
    batches: list[Batch] = [[]]
    for h in hits:
        shown = (h, _readable(h, chars))
        if len(batches[-1]) < MAP_BATCH and budget.fits(
            _map_prompt(question, [*batches[-1], shown])
        ):
            batches[-1].append(shown)
        elif batches[-1] and len(batches) < calls and budget.fits(_map_prompt(question, [shown])):
            batches.append([shown])
        else:
            break
    return [b for b in batches if b]


def _map_prompt(question: str, batch: Batch) -> str:
    passages = "\n\n".join(f"[{i}] {where(h)}\n{text}" for i, (h, text) in enumerate(batch, 1))
    return prompts.MAP_PROMPT.format(question=question, count=len(batch), passages=passages)


def _readable(hit: Hit, chars: int = MAP_PASSAGE_CHARS) -> str:
    """The part of a hit a map prompt shows, on one line: its best sentences widened to
    ``chars`` (the whole chunk when it fits)."""
    start, end = passage_span(hit.text, hit.focus, chars)
    return " ".join(hit.text[start:end].split())


async def filter_facts(
    model: Model, question: str, facts: list[Evidence], budget: Budget | None = None
) -> list[Evidence]:
    """The facts the model finds relevant; all when none pass (or junk), and the best four
    when only one of many passes. With a ``budget``, the model judges the best facts that fit
    its context, and the rest follow them unjudged."""
    shown = facts if budget is None else budget.prefix(facts, partial(_filter_prompt, question))
    if len(shown) <= 1:
        return facts
    raw = await model.ask(_filter_prompt(question, shown), "filter", json_mode=True)
    return _relevant(parse.parse_selection(raw, len(shown)), shown) + facts[len(shown) :]


def _relevant(chosen: list[int] | None, facts: list[Evidence]) -> list[Evidence]:
    if not chosen:
        return facts
    if len(chosen) == 1 and len(facts) > FILTER_TOO_STRICT:
        # Keep four: that one and the best-ranked others.
        one = chosen[0] - 1
        keep = [one] + [i for i in range(len(facts)) if i != one][: FILTER_KEEP - 1]
        return [facts[i] for i in sorted(keep)]
    return [facts[i - 1] for i in sorted(chosen)]


def _filter_prompt(question: str, facts: Sequence[Evidence]) -> str:
    numbered = "\n".join(f"{i}. {e.quote}" for i, e in enumerate(facts, start=1))
    return prompts.FILTER_PROMPT.format(question=question, facts=numbered)
