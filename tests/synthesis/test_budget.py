"""Prompts sized to the model's context: the map's batches, the filter's and the answer's
sources, and what the user is told."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

from quire.errors import LLMUnavailable
from quire.llm.base import REPLY_TOKENS
from quire.llm.router import LLMRouter
from quire.retrieval.hits import Hit
from quire.synthesis.answer import Evidence, listing
from quire.synthesis.budget import Budget
from quire.synthesis.mapreduce import (
    MAP_BATCH,
    MAP_PASSAGE_CHARS,
    MAP_PASSAGE_MIN_CHARS,
    Model,
    _map_prompt,
    filter_facts,
    plan_batches,
)
from tests.fakes.llm import ScriptedChat, hit

QUESTION = "What did the White Rabbit take out of its waistcoat-pocket?"
# A passage of about 1,500 characters: shown as 1,200 around its best sentences.
TEXT = " ".join(f"Sentence {i} of the passage says the Rabbit hurried on." for i in range(27))


def hits(n: int) -> list[Hit]:
    return [hit(i + 1, TEXT, page=i + 1) for i in range(n)]


def test_a_large_context_keeps_ten_whole_passages_a_call() -> None:
    budget = Budget(8192)
    batches = plan_batches(QUESTION, hits(35), budget)
    assert [len(b) for b in batches] == [10, 10, 10, 5]
    assert all(900 < len(text) <= MAP_PASSAGE_CHARS for b in batches for _, text in b)
    assert budget.notice() is None


def test_a_smaller_context_shortens_the_passages_before_leaving_any_out() -> None:
    budget = Budget(4096)
    batches = plan_batches(QUESTION, hits(35), budget)
    assert sum(len(b) for b in batches) == 35 and len(batches) == 4
    assert all(budget.fits(_map_prompt(QUESTION, b)) for b in batches)
    assert max(len(t) for b in batches for _, t in b) < MAP_PASSAGE_CHARS
    assert budget.notice() == (
        "To fit the model's 4,096-token context, 35 of 35 passages were shortened."
    )


def test_a_small_context_leaves_the_lowest_ranked_out_and_never_adds_calls() -> None:
    budget = Budget(2048)
    shown = hits(35)
    batches = plan_batches(QUESTION, shown, budget)
    placed = [h for b in batches for h, _ in b]
    assert len(batches) <= math.ceil(35 / MAP_BATCH)
    assert placed == shown[: len(placed)] and 0 < len(placed) < 35  # the best, in rank order
    assert all(budget.fits(_map_prompt(QUESTION, b)) for b in batches)
    assert all(len(t) <= MAP_PASSAGE_MIN_CHARS for b in batches for _, t in b)
    assert budget.notice() == (
        f"To fit the model's 2,048-token context, {35 - len(placed)} of 35 passages were left "
        f"out and {len(placed)} passages were shortened."
    )


def test_a_question_too_long_for_any_passage_is_refused() -> None:
    budget = Budget(REPLY_TOKENS + 300)
    with pytest.raises(LLMUnavailable, match="do not fit the model's 1,324-token context"):
        plan_batches("why " * 400, hits(3), budget)


def test_the_answer_s_sources_are_the_best_that_fit() -> None:
    facts = [Evidence(hit(i + 1, TEXT, page=i + 1), TEXT[:900], n=i + 1) for i in range(15)]

    def render(some: Sequence[Evidence]) -> str:
        return f"Sources:\n{listing(some)}\nQuestion: {QUESTION}"

    budget = Budget(3072)
    kept = budget.fit(facts, render, kind="facts")
    assert kept == facts[: len(kept)] and 0 < len(kept) < 15
    assert budget.fits(render(kept)) and not budget.fits(render(facts[: len(kept) + 1]))
    assert budget.notice() == (
        f"To fit the model's 3,072-token context, {15 - len(kept)} of 15 facts were left out."
    )
    assert budget.fit([], render, kind="facts") == []
    with pytest.raises(LLMUnavailable):
        Budget(REPLY_TOKENS + 100).fit(facts, render, kind="facts")
    assert Budget(REPLY_TOKENS + 100).fit(facts, render, kind="facts", required=False) == []


@pytest.mark.anyio
async def test_the_filter_judges_the_facts_that_fit_and_keeps_the_rest_after_them() -> None:
    backend = ScriptedChat(lambda prompt: '{"relevant": [2]}')
    facts = [Evidence(hit(i + 1, TEXT), f"Fact {i + 1}: {TEXT[:600]}") for i in range(12)]
    budget = Budget(3072)
    kept = await filter_facts(Model(LLMRouter([backend])), QUESTION, facts, budget)
    [(_, prompt)] = backend.prompts
    judged = len([ln for ln in prompt.splitlines() if ln.split(". ", 1)[-1].startswith("Fact ")])
    assert 1 < judged < 12
    # One fact of many chosen is judged too strict: four of the judged are kept, then the
    # unjudged follow.
    assert kept == facts[: min(4, judged)] + facts[judged:]
