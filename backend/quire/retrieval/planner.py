"""The query plan: strategy, query variations, hard keywords and an optional HyDE passage.

The heuristic plan needs no model: quoted phrases, identifiers, numbers and code-like tokens
become hard keywords for the exact leg, and wording that asks for breadth selects the
exhaustive strategy. An answer with an LLM asks the model for a plan instead
(synthesis/parse.py ``parse_plan`` validates it, falling back to this one).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from quire.retrieval.lexical import STOPWORDS
from quire.retrieval.options import Strategy

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

    # Fields with defaults are still always sent: generated clients see them as required.
    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

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
