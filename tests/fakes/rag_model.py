"""A scripted "model" for the fake LLM server that answers Quire's prompts sensibly.

It recognises each prompt of quire.synthesis.prompts by its wording and replies the way a
small instruction-tuned model would: a JSON plan, one fact per passage that shares a word with
the question, all facts relevant, an answer that restates the first three facts it was given,
each cited, an "ok" verdict.
Tests override single purposes (``overrides["map"] = "junk"``) to inject bad behaviour.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_WORD = re.compile(r"[A-Za-z]{4,}")


def purpose_of(prompt: str) -> str:
    if "You plan a search" in prompt:
        return "plan"
    if "Rewrite the last question" in prompt:
        return "rewrite"
    if "numbered passages from the user's documents" in prompt:
        return "map"
    if "Which facts are relevant" in prompt:
        return "filter"
    if "More sources were found" in prompt:
        return "addendum"
    if "Answer the question using ONLY" in prompt:
        return "answer"
    if "Does the answer fully address" in prompt:
        return "verify"
    return "other"


def _question(prompt: str) -> str:
    m = re.search(r"^Question: (.+)$", prompt, re.MULTILINE) or re.search(
        r"^Last question: (.+)$", prompt, re.MULTILINE
    )
    return m.group(1).strip() if m else ""


def _facts_for(prompt: str) -> list[dict[str, Any]]:
    words = {w.lower() for w in _WORD.findall(_question(prompt))}
    facts = []
    for m in re.finditer(r"^\[(\d+)\] [^\n]*\n([^\n]+)", prompt, re.MULTILINE):
        passage = m.group(2)
        if words & {w.lower() for w in _WORD.findall(passage)}:
            sentence = re.split(r"(?<=[.!?])\s", passage)[0]
            if len(sentence) > 200:  # cut at a word, as a model shortens a fact
                sentence = sentence[:200].rsplit(" ", 1)[0]
            facts.append({"node_id": m.group(1), "fact": sentence})
    return facts


def listed_facts(prompt: str) -> list[tuple[int, str, str]]:
    """The numbered sources of an answer prompt: ``[n] (where) fact`` lines as (n, where,
    fact)."""
    return [
        (int(n), where, fact)
        for n, where, fact in re.findall(r"^\[(\d+)\] \((.+?)\) (.+)$", prompt, re.MULTILINE)
    ]


def restate(n: int, fact: str) -> str:
    """A fact as an answer's sentence, cited."""
    return f"{fact.rstrip('.!?')} [{n}]."


def _answer(prompt: str) -> str:
    facts = listed_facts(prompt)
    if not facts:
        return "The sources do not answer this question."
    return " ".join(restate(n, fact) for n, _, fact in facts[:3])


@dataclass
class RagModel:
    """Callable as the fake server's responder: ``fake.responder = RagModel()``."""

    overrides: dict[str, str | Callable[[str], Any]] = field(default_factory=dict)
    seen: list[str] = field(default_factory=list)  # the purposes asked, in order

    def reply(self, prompt: str) -> Any:
        purpose = purpose_of(prompt)
        self.seen.append(purpose)
        override = self.overrides.get(purpose)
        if override is not None:
            return override(prompt) if callable(override) else override
        if purpose == "plan":
            q = _question(prompt) or "question"
            return json.dumps(
                {
                    "strategy": "precise",
                    "queries": [q, f"{q} explained", f"about {q}"],
                    "hard_keywords": [],
                    "hyde_passage": f"A passage that answers: {q}",
                }
            )
        if purpose == "rewrite":
            return _question(prompt) + " (rewritten)"
        if purpose == "map":
            return json.dumps({"facts": _facts_for(prompt)})
        if purpose == "filter":
            count = len(re.findall(r"^\d+\. ", prompt, re.MULTILINE))
            return json.dumps({"relevant": list(range(1, count + 1))})
        if purpose == "addendum":
            new = listed_facts(prompt)
            return _answer(prompt) if new else "Nothing to add."
        if purpose == "answer":
            return _answer(prompt)
        if purpose == "verify":
            return json.dumps({"status": "ok"})
        return "I am a fake model."

    def __call__(self, messages: list[dict[str, Any]], body: dict[str, Any]) -> Any:
        prompt = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
        return self.reply(str(prompt))


_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _words(text: str) -> set[str]:
    return {w.lower()[:6] for w in _WORD.findall(text)}


@dataclass
class QuotingModel(RagModel):
    """A faithful extractive "model": the map step returns, of each passage, the sentence
    sharing the most words with the question, verbatim; the filter keeps the facts at least
    half as close as the closest; the answer quotes the first listed fact at least half as
    close as the closest (the best-ranked of the close ones) and cites its number.

    What an evaluation with it measures is Quire's own bookkeeping: that the number the model
    cites leads to the page the quoted sentence came from. ``answers`` records, per answer
    prompt, the question and the ``{number: fact}`` it cited."""

    answers: list[tuple[str, dict[int, str]]] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)  # every fact the map step gave

    def reply(self, prompt: str) -> Any:
        purpose = purpose_of(prompt)
        question = _words(_question(prompt))
        if purpose == "map":
            self.seen.append(purpose)
            facts = []
            for m in re.finditer(r"^\[(\d+)\] [^\n]*\n([^\n]+)", prompt, re.MULTILINE):
                scored = [(len(question & _words(s)), s) for s in _SENTENCE.split(m.group(2))]
                best = max(scored, key=lambda x: x[0], default=(0, ""))
                if best[0]:
                    facts.append({"node_id": int(m.group(1)), "fact": best[1].strip()})
            self.facts.extend(f["fact"] for f in facts)
            return json.dumps({"facts": facts})
        if purpose == "filter":
            self.seen.append(purpose)
            facts = re.findall(r"^(\d+)\. (.*)$", prompt, re.MULTILINE)
            overlap = {int(n): len(question & _words(text)) for n, text in facts}
            top = max(overlap.values(), default=0)
            return json.dumps({"relevant": [n for n, v in overlap.items() if 2 * v >= top > 0]})
        if purpose == "answer":
            self.seen.append(purpose)
            lines = re.findall(r"^\[(\d+)\] (.*)$", prompt, re.MULTILINE)
            if not lines:
                return "The sources do not answer this question."
            # The first listed (best-ranked) of the closest: at least half as close as any.
            overlap = [len(question & _words(line)) for _, line in lines]
            n, line = next(x for x, v in zip(lines, overlap, strict=True) if 2 * v >= max(overlap))
            # "[n] (where) fact": the fact is one the map step gave (the place may hold ")").
            fact = max((f for f in self.facts if line.endswith(f)), key=len, default=line)
            self.answers.append((_question(prompt), {int(n): fact}))
            return f"{fact} [{n}]"
        return super().reply(prompt)
