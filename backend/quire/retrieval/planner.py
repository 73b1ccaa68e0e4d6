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

from quire.retrieval.options import Strategy
from quire.text.segment import unspaced_runs
from quire.text.spelling import namespace_tails
from quire.text.stopwords import STOPWORDS

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
    | \b\d{1,3}(?:,\d{3})+\b         # 5,000 (a number, not its "000")
    | \b\d{2,}\b                     # numbers
    """
)
#: Identifiers with punctuation, kept whole: a statute section (its number; the "§" is often
#: written "Section"), numbered subsections, a standard and its number, hyphenated part numbers
#: with a digit (not "-induced": words joined to them are not part of them).
_PUNCTUATED = r"""
    §+\s*(\d+[\w.]*(?:\([\w]{1,4}\))*)                 # § 1201(b) -> 1201(b)
    | \b\d+[A-Za-z]?(?:\([\w]{1,4}\))+                  # 1201(a)(2)
    | \b[A-Z]{2,}[ ]\d+(?:[./]\d+)*\b                    # RFC 9110, ISO 8601, FV 1/2021
    | \b(?=[\w-]*\d)[A-Za-z0-9]*[A-Z0-9][A-Za-z0-9]*       # MIL-G-7711, EIP-3529, x86-64:
      (?:-[A-Z0-9][A-Za-z0-9]*)+                          #   parts with a capital or a digit
"""
_PUNCTUATED_RE = re.compile("(?x)" + _PUNCTUATED)
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+")
#: Any identifier: those, and tokens with a digit, an underscore or inner capitals
#: (``DT_RISCV_VARIANT_CC``, ``PUSH0``, ``v2.3.1``).
_IDENTIFIER = re.compile(
    "(?x)"
    + _PUNCTUATED
    # From a word's start only: tried at each letter of a long word, it was quadratic.
    + r"| (?<![A-Za-z0-9])[A-Za-z0-9]*(?:[0-9_][A-Za-z0-9]*|[a-z][A-Z])[A-Za-z0-9_]*"
    + r"(?:[-.:][A-Za-z0-9_]+)*"
)
#: Characters of an unspaced run that make it an exact keyword (a question's runs are shorter:
#: punctuation and particles break them).
LONG_RUN = 12
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


#: A run of this many characters without a space is no identifier or keyword (8,000 x's):
#: the patterns above, tried at each of its characters, take seconds on it.
MAX_TOKEN = 100
_LONG_TOKEN = re.compile(rf"[\x21-\x7e]{{{MAX_TOKEN + 1},}}")  # ASCII: CJK runs are phrases


def _scannable(text: str) -> str:
    """``text`` with its overlong runs blanked out (same length: spans stay right)."""
    return _LONG_TOKEN.sub(lambda m: " " * len(m.group(0)), text)


def identifiers(text: str) -> list[str]:
    """The identifier-like tokens of ``text``, whole, in order, once each."""
    return list(dict.fromkeys(w for w, _ in _spans(_IDENTIFIER, _scannable(text))))


def _spans(pattern: re.Pattern[str], text: str) -> list[tuple[str, tuple[int, int]]]:
    found = []
    for m in pattern.finditer(text):
        word = (m.group(1) or m.group(0)).strip()
        if len(word) >= 3 and not word.isdigit():
            found.append((word, m.span()))
    return found


def heuristic_plan(query: str) -> Plan:
    """A plan without a model."""
    scan = _scannable(query)
    keywords = [m.group(1).strip() for m in _QUOTED.finditer(scan)]
    # Only identifiers with punctuation: every token with a digit (p53, B12) as a hard keyword
    # took SciFact test nDCG@10 from 0.7259 to 0.7232 (these: 0.7247); page-QA the same.
    spans = _spans(_PUNCTUATED_RE, scan)
    keywords += [w for w, _ in spans]
    # Acronyms, numbers and code-like words, unless part of an identifier found whole.
    keywords += [
        m.group(0)
        for m in _CODEISH.finditer(scan)
        if not any(a <= m.start() and m.end() <= b for _, (a, b) in spans)
    ]
    # A number with thousands separators is found as written and without them ("$5,000" in a
    # question, 5000 in a spreadsheet's cell).
    keywords += [k.replace(",", "") for k in keywords if _THOUSANDS.fullmatch(k)]
    # A constant's name is also looked for without its namespace, as a table lists it.
    keywords += [t for k in keywords for t in namespace_tails(k)]
    # A long run of a script without spaces (a phrase copied from a Japanese page) is matched
    # as a substring too: the exact leg finds it where the bigrams are scattered.
    keywords += [run for run in unspaced_runs(query) if len(run) >= LONG_RUN][:3]
    keywords = [
        k
        for k in dict.fromkeys(keywords)
        if len(k) >= 2 and k not in _FTS_WORDS and k.lower() not in STOPWORDS
    ][:12]
    strategy: Strategy = "exhaustive" if _BROAD.search(query) else "precise"
    return Plan(strategy=strategy, queries=[query], hard_keywords=keywords)
