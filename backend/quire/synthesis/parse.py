"""Lenient, validated parsing of what a small model replies, and of the answer's citations.

Models wrap JSON in prose or code fences, quote numbers ("3"), write "[3]" or "Source 3",
and sometimes return a bare list. Each entry is validated on its own: a malformed one is
skipped and the rest are kept.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, field_validator

from quire.retrieval.planner import Plan, heuristic_plan

log = logging.getLogger(__name__)

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_NUMBER = re.compile(r"-?\d+")


def loads_lenient(raw: str) -> Any:
    """The first JSON value found in ``raw`` (fenced, bare, or embedded in prose); None if none."""
    if not raw:
        return None
    candidates = [m.group(1) for m in _FENCE.finditer(raw)] + [raw]
    decoder = json.JSONDecoder()
    for text in candidates:
        text = text.strip()
        for i, ch in enumerate(text):
            if ch not in "{[":
                continue
            try:
                value, _ = decoder.raw_decode(text, i)
            except json.JSONDecodeError:
                continue
            return value
    return None


def parse_plan(raw: str, query: str) -> Plan | None:
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


def _coerce_int(v: object) -> int:
    if isinstance(v, bool):
        raise ValueError("not a number")
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str):
        m = _NUMBER.search(v)  # "3", "[3]", "node 3", "Source 3"
        if m:
            return int(m.group(0))
    raise ValueError(f"not a node id: {v!r}")


class Fact(BaseModel):
    """One atomic fact a source supports; ``node_id`` is the 1-based passage number."""

    node_id: int
    fact: str = Field(min_length=3, max_length=1000)

    @field_validator("node_id", mode="before")
    @classmethod
    def _node(cls, v: object) -> int:
        return _coerce_int(v)

    @field_validator("fact", mode="before")
    @classmethod
    def _text(cls, v: object) -> str:
        if not isinstance(v, str):
            raise ValueError("fact must be text")
        return " ".join(v.split())


def parse_facts(raw: str, count: int) -> list[Fact]:
    """Valid facts for passages 1..count, at most one per passage (the first), in order given."""
    data = loads_lenient(raw)
    entries: Iterable[Any]
    if isinstance(data, dict):
        entries = data.get("facts") or data.get("results") or []
        if not isinstance(entries, list):
            entries = [data] if "fact" in data else []
    elif isinstance(data, list):
        entries = data
    else:
        return []
    out: dict[int, Fact] = {}
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        entry = {("node_id" if k in ("id", "node", "source") else k): v for k, v in entry.items()}
        try:
            fact = Fact.model_validate(entry)
        except ValidationError:
            log.debug("map: skipped a malformed fact entry %r", entry)
            continue
        if 1 <= fact.node_id <= count and fact.node_id not in out:
            out[fact.node_id] = fact
    return list(out.values())


def parse_selection(raw: str, count: int, key: str = "relevant") -> list[int] | None:
    """1-based numbers chosen by a filter reply; None when the reply is unusable."""
    data = loads_lenient(raw)
    if isinstance(data, dict):
        data = data.get(key, data.get("keep"))
    if not isinstance(data, list):
        return None
    chosen: list[int] = []
    for v in data:
        try:
            n = _coerce_int(v)
        except ValueError:
            continue
        if 1 <= n <= count and n not in chosen:
            chosen.append(n)
    return chosen


class Verdict(BaseModel):
    status: Literal["ok", "missed-info"]
    suggestion: str | None = Field(default=None, max_length=500)

    @field_validator("status", mode="before")
    @classmethod
    def _status(cls, v: object) -> str:
        s = str(v).strip().lower().replace("_", "-").replace(" ", "-")
        return "missed-info" if s.startswith("miss") else s

    @field_validator("suggestion", mode="before")
    @classmethod
    def _suggestion(cls, v: object) -> str | None:
        if v is None:
            return None
        s = " ".join(str(v).split())
        return s[:500] or None


def parse_verdict(raw: str) -> Verdict | None:
    data = loads_lenient(raw)
    if not isinstance(data, dict):
        return None
    try:
        return Verdict.model_validate(data)
    except ValidationError:
        return None


#: A citation: "[1]", "[1, 2]"; not an escaped "\[0]", which a quote's own brackets become.
_MARK = r"\[(\s*\d+(?:\s*[,;]\s*\d+)*\s*)\]"
CITATION = re.compile(r"(?<!\\)" + _MARK)
_ESCAPED = re.compile(r"\\(?=" + _MARK + ")")


def escape_citations(quoted: str) -> str:
    """Quoted text with its own bracketed numbers (a formula's "µs[0]", a thread's "[2]")
    escaped as Markdown does ("µs\\[0]"), so that no reader takes them for citations."""
    return CITATION.sub(lambda m: "\\" + m.group(0), quoted)


def unescape_citations(text: str) -> str:
    """Answer text for a reader of plain text (a terminal): a quote's "µs\\[0]" as written,
    "µs[0]"."""
    return _ESCAPED.sub("", text)


def cited_numbers(answer: str) -> list[int]:
    """Every number cited as ``[n]``, ``[n, m]`` or ``[n][m]``, in first-seen order."""
    seen: dict[int, None] = {}
    for m in CITATION.finditer(answer):
        for part in re.split(r"[,;]", m.group(1)):
            seen.setdefault(int(part), None)
    return list(seen)


def clean_citations(answer: str, valid: int) -> tuple[str, list[int]]:
    """The answer without citations of sources that do not exist (1..valid), and the cited ones."""

    def fix(m: re.Match[str]) -> str:
        nums = [int(p) for p in re.split(r"[,;]", m.group(2))]
        kept = [n for n in dict.fromkeys(nums) if 1 <= n <= valid]
        # A citation removed whole takes its leading space with it.
        return m.group(1) + "".join(f"[{n}]" for n in kept) if kept else ""

    cleaned = re.sub(r"([ \t]*)" + CITATION.pattern, fix, answer)
    return cleaned, cited_numbers(cleaned)
