"""Prompts sized to the model's context. A server given a prompt longer than its context cuts it
without a word (Ollama keeps the end), so the stages trim what they send to fit, the best
first, and the user is told what was left out.

    budget = Budget(await model.context_window())
    kept = budget.fit(sources, lambda some: prompt_for(some), kind="facts")  # a prefix that fits
    budget.fits(prompt)                                   # prompt + room for the reply
    budget.notice()   # "To fit the model's 4,096-token context, 3 of 35 passages were left out."

The map stage packs passages into its calls with :meth:`Budget.fits` (synthesis/mapreduce.py):
shortened first, down to ``MAP_PASSAGE_MIN_CHARS`` around their best sentences, then the
lowest-ranked left out. The answer's sources are a prefix of the ranked facts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import TypeVar

from quire.errors import LLMUnavailable
from quire.llm.base import REPLY_TOKENS, estimate_tokens
from quire.synthesis import prompts

T = TypeVar("T")


class Budget:
    """What one answer's prompts may hold: ``window`` tokens, less ``REPLY_TOKENS`` for the
    reply; counts what had to go."""

    def __init__(self, window: int) -> None:
        self.window = window
        self.offered: Counter[str] = Counter()
        self.left_out: Counter[str] = Counter()
        self.shortened: Counter[str] = Counter()

    def tokens(self, prompt: str) -> int:
        """The prompt's estimated tokens, as the client sizes the call (system message too)."""
        return estimate_tokens(prompts.messages(prompt))

    def fits(self, prompt: str) -> bool:
        return self.tokens(prompt) + REPLY_TOKENS <= self.window

    def prefix(self, items: Sequence[T], render: Callable[[Sequence[T]], str]) -> list[T]:
        """The longest prefix of ``items`` (best first) whose prompt fits (maybe none)."""
        kept = len(items)
        while kept and not self.fits(render(items[:kept])):
            kept -= 1
        return list(items[:kept])

    def fit(
        self,
        items: Sequence[T],
        render: Callable[[Sequence[T]], str],
        *,
        kind: str,
        required: bool = True,
    ) -> list[T]:
        """:meth:`prefix`, counted for the notice; LLMUnavailable when ``required`` and not
        even the first item fits (the question alone is too long)."""
        kept = self.prefix(items, render)
        if items and not kept and required:
            raise self.too_small()
        self.offered[kind] += len(items)
        self.left_out[kind] += len(items) - len(kept)
        return kept

    def too_small(self) -> LLMUnavailable:
        err = LLMUnavailable(
            f"the question and one source do not fit the model's {self.window:,}-token context"
        )
        err.retryable = False
        return err

    def notice(self) -> str | None:
        """What was left out or shortened, for the user; None when everything fitted."""
        parts = []
        for kind, offered in self.offered.items():
            out, short = self.left_out[kind], self.shortened[kind]
            if out:
                parts.append(f"{out} of {offered} {kind} were left out")
            if short:
                of = "" if out else f" of {offered}"
                parts.append(f"{short}{of} {kind} were shortened")
        if not parts:
            return None
        return f"To fit the model's {self.window:,}-token context, {_and(parts)}."


def _and(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
