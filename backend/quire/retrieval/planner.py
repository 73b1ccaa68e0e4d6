"""The query plan: strategy, query variations, hard keywords and an optional HyDE passage.

With an LLM the plan comes from it as JSON, validated; junk falls back to the heuristic plan,
which needs no model: quoted phrases, identifiers, numbers and code-like tokens become hard
keywords for the exact leg, and wording that asks for breadth selects the exhaustive strategy.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, Field, ValidationError, field_validator

from quire.retrieval.lexical import STOPWORDS

log = logging.getLogger(__name__)

Strategy = Literal["precise", "exhaustive"]

_QUOTED = re.compile(r"[\"“”«»]([^\"“”«»]{2,120})[\"“”«»]")
_CODEISH = re.compile(
    r"""(?x)
    [A-Za-z_][\w]*\(\)?\)            # call()
    | [A-Za-z_]\w*(?:\.\w+)+         # dotted.name
    | [A-Za-z_]*_[\w]+               # snake_case
    | [a-z]+[A-Z]\w*                 # camelCase
    | \b[A-Z]{2,}[-_]?\d+\w*\b       # ERR-4042, CVE2021
    | \b\w*\d\w*[-/.:]\w+\b          # 1.2.3, 10.1038/xyz, 12:30
    | \b[A-Z]{2,}\b                  # ACRONYM
    | \b\d{2,}\b                     # numbers
    """
)
_FTS_WORDS = frozenset({"AND", "OR", "NOT", "NEAR"})
_BROAD = re.compile(
    r"\b(all|every|each|list|compare|comparison|summari[sz]e|overview|differences?|"
    r"timeline|everything|across)\b",
    re.IGNORECASE,
)


class Plan(BaseModel):
    """What to search for, and how widely."""

    strategy: Strategy = "precise"
    queries: list[str] = Field(default_factory=list, max_length=5)
    hard_keywords: list[str] = Field(default_factory=list, max_length=12)
    hyde_passage: str | None = None
    source: Literal["heuristic", "llm"] = "heuristic"

    @field_validator("queries", "hard_keywords", mode="before")
    @classmethod
    def _strings(cls, v: object) -> list[str]:
        if v is None:
            return []
        if isinstance(v, str):
            v = [v]
        if not isinstance(v, list):
            raise ValueError("expected a list of strings")
        return [str(x).strip()[:500] for x in v if str(x).strip()]


def heuristic_plan(query: str) -> Plan:
    """A plan without a model."""
    keywords = [m.group(1).strip() for m in _QUOTED.finditer(query)]
    keywords += [m.group(0) for m in _CODEISH.finditer(query)]
    keywords = [
        k
        for k in dict.fromkeys(keywords)
        if len(k) >= 2 and k not in _FTS_WORDS and k.lower() not in STOPWORDS
    ][:12]
    strategy: Strategy = "exhaustive" if _BROAD.search(query) else "precise"
    return Plan(strategy=strategy, queries=[query], hard_keywords=keywords)


def plan_from_json(raw: str, query: str) -> Plan | None:
    """Validate an LLM's plan; None when it is not usable JSON of the right shape."""
    match = re.search(r"\{.*\}", raw, re.DOTALL)
    if not match:
        return None
    try:
        data = json.loads(match.group(0))
        plan = Plan.model_validate({**data, "source": "llm"})
    except (json.JSONDecodeError, ValidationError, TypeError) as exc:
        log.info("planner: unusable LLM plan (%s); using the heuristic plan", exc)
        return None
    # The user's own words are always searched, whatever the model proposed.
    plan.queries = list(dict.fromkeys([query, *plan.queries]))[:4]
    heuristic = heuristic_plan(query)
    plan.hard_keywords = list(dict.fromkeys([*heuristic.hard_keywords, *plan.hard_keywords]))[:12]
    return plan


def make_plan(query: str, llm: Callable[[str], str] | None = None) -> Plan:
    """The LLM's plan when a model is configured and answers sensibly, else the heuristic one."""
    if llm is not None:
        from quire.synthesis.prompts import PLAN_PROMPT

        try:
            plan = plan_from_json(llm(PLAN_PROMPT.format(query=query)), query)
        except Exception:  # noqa: BLE001 - a failing model must never fail the search
            log.warning("planner: the LLM failed; using the heuristic plan", exc_info=True)
            plan = None
        if plan is not None:
            return plan
    return heuristic_plan(query)
