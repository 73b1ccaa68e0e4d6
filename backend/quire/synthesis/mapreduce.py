"""The LLM's stages of an answer: map (one fact per passage, ten passages a call), filter (the
facts relevant to the question), and the prompts' model calls. The engine streams the answer
and runs the verification round around these.

    model = Model(router)
    async for item in map_facts(model, question, hits):   # Evidence, and StageEvent progress
        ...
    kept = await filter_facts(model, question, facts)
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from quire.errors import LLMInterrupted, LLMUnavailable
from quire.llm.base import Message, Purpose
from quire.llm.router import LLMRouter, Reply
from quire.retrieval.hits import Hit
from quire.retrieval.windows import passage_span
from quire.synthesis import extractive, parse, prompts
from quire.synthesis.answer import Evidence, where
from quire.synthesis.events import StageEvent

MAP_BATCH = 10
MAP_PASSAGE_CHARS = 1200  # per passage in a map prompt: ten of them stay under ~4k tokens
#: The filter gate kept one fact of more than this many: it is probably too strict.
FILTER_TOO_STRICT = 3
FILTER_KEEP = 4


class Model:
    """The router as an answer's stages use it: a prompt in, text (or deltas) out."""

    def __init__(self, router: LLMRouter) -> None:
        self.router = router

    @staticmethod
    def messages(prompt: str) -> list[Message]:
        return [
            {"role": "system", "content": prompts.SYSTEM},
            {"role": "user", "content": prompt},
        ]

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


async def map_facts(
    model: Model, question: str, hits: Sequence[Hit]
) -> AsyncIterator[Evidence | StageEvent]:
    """Facts from the hits, a batch of ten at a time (and a StageEvent after each batch)."""
    batches = [hits[i : i + MAP_BATCH] for i in range(0, len(hits), MAP_BATCH)]
    for b, batch in enumerate(batches):
        passages = "\n\n".join(
            f"[{i}] {where(h)}\n{_readable(h)}" for i, h in enumerate(batch, start=1)
        )
        raw = await model.ask(
            prompts.MAP_PROMPT.format(question=question, count=len(batch), passages=passages),
            "map",
            json_mode=True,
        )
        facts = parse.parse_facts(raw, len(batch))
        if facts:
            for fact in sorted(facts, key=lambda f: f.node_id):
                yield Evidence(batch[fact.node_id - 1], fact.fact)
        else:
            # Nothing usable: the batch's passages go on as raw snippets, not lost.
            for h in batch:
                yield Evidence(h, extractive.best_sentence(question, h), fallback=True)
        yield StageEvent(stage="map", done=b + 1, total=len(batches))


def _readable(hit: Hit) -> str:
    """The part of a hit a map prompt shows, on one line: its best sentences widened to the
    passage size (the whole chunk when it fits)."""
    start, end = passage_span(hit.text, hit.focus, MAP_PASSAGE_CHARS)
    return " ".join(hit.text[start:end].split())


async def filter_facts(model: Model, question: str, facts: list[Evidence]) -> list[Evidence]:
    """The facts the model finds relevant; all when none pass (or junk), and the best four
    when only one of many passes."""
    if len(facts) <= 1:
        return facts
    numbered = "\n".join(f"{i}. {e.quote}" for i, e in enumerate(facts, start=1))
    raw = await model.ask(
        prompts.FILTER_PROMPT.format(question=question, facts=numbered), "filter", json_mode=True
    )
    chosen = parse.parse_selection(raw, len(facts))
    if not chosen:
        return facts
    if len(chosen) == 1 and len(facts) > FILTER_TOO_STRICT:
        # Keep four: that one and the best-ranked others.
        one = chosen[0] - 1
        keep = [one] + [i for i in range(len(facts)) if i != one][: FILTER_KEEP - 1]
        return [facts[i] for i in sorted(keep)]
    return [facts[i - 1] for i in sorted(chosen)]
