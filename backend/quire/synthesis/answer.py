"""The state of one answer while it streams, and the numbered evidence it may cite.

A piece of :class:`Evidence` is a hit with the fact (LLM) or sentence (extractive) it
contributes; numbered, it becomes a :class:`~quire.synthesis.events.Source` on the wire. A
source that may be cited is a page: the best fact per document page is kept.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from quire import urls
from quire.retrieval.hits import Hit
from quire.retrieval.options import RetrievalOptions
from quire.retrieval.planner import Plan
from quire.storage.records import TURN_KINDS, place, section
from quire.synthesis import prompts
from quire.synthesis.budget import Budget
from quire.synthesis.events import AnswerMode, CitationCheck, Source, VerifyEvent
from quire.text.table_rows import SEPARATOR as ROW_SEPARATOR

#: An LLM's fact is its own wording: the text fragment names a paragraph this long instead.
FRAGMENT_MIN_WORDS = 8
#: A list item's bullet as a saved web page's text has it (formats/web.py), not on the page.
_BULLET = re.compile(r"^(?:- |\d{1,4}\. )")


@dataclass(frozen=True)
class ChatRequest:
    """One question and how to answer it."""

    message: str
    conversation_id: int | None = None
    options: RetrievalOptions = field(default_factory=RetrievalOptions)
    use_llm: bool = True
    history: tuple[tuple[str, str], ...] = ()  # given by the caller (OpenAI endpoint) instead
    persist: bool = True  # False: nothing stored (the OpenAI endpoint is stateless)


@dataclass
class Prepared:
    """A validated question, stored (when persisted), ready to be answered."""

    request: ChatRequest
    question: str
    conversation_id: int | None
    user_message_id: int | None
    history: list[tuple[str, str]]


@dataclass
class Evidence:
    """A hit and the fact or sentence it contributes; ``n`` once it is numbered."""

    hit: Hit
    quote: str
    n: int = 0
    fallback: bool = False  # the fact is a raw snippet (the model gave nothing usable)

    @property
    def key(self) -> tuple[int, int]:
        return (self.hit.document_id, self.hit.page)

    def source(self) -> Source:
        """This evidence as the answer's numbered source (its links are the API's to add)."""
        h = self.hit
        return Source(
            n=self.n,
            chunk_id=h.chunk_id,
            document_id=h.document_id,
            title=h.title,
            kind=h.kind,
            filename=h.filename,
            page=h.page,
            page_label=h.page_label,
            heading_path=h.heading_path,
            passage=h.text,
            highlights=h.highlights,
            quote=self.quote,
            score=h.rerank if h.rerank is not None else h.fused,
            origin_url=origin_url(h, self.quote),
            web_sources=h.web_sources,
        )


def origin_url(hit: Hit, quote: str) -> str | None:
    """The original's own web address: a Perplexity or chat thread's; a saved web page's with
    a text fragment that scrolls to the quoted passage on the live page (urls.text_fragment)."""
    url = hit.metadata.get("url")
    if not url:
        return None
    if hit.kind in TURN_KINDS:
        return str(url)
    if hit.kind == "web":
        return urls.text_fragment(str(url), fragment_passage(quote, hit.text))
    return None


def fragment_passage(quote: str, passage: str) -> str:
    """What a text fragment should find on the live page: the quote when it is the stored
    text's own words (an extractive sentence), else the passage's first paragraph of eight
    words or more (an LLM's fact is its own wording, which the page does not hold). What the
    reader added is taken off: a list item's bullet, a table row's headers (its first value)."""
    flat = " ".join(quote.split())
    if not (flat and flat in " ".join(passage.split())):
        paragraphs = [" ".join(p.split()) for p in passage.split("\n\n") if p.strip()]
        long = [p for p in paragraphs if len(p.split()) >= FRAGMENT_MIN_WORDS]
        flat = long[0] if long else max(paragraphs, key=len, default="")
    flat = _BULLET.sub("", flat)
    if ROW_SEPARATOR in flat:  # "Symptom: I'm serving HTTP 500s · Cause: …"
        flat = flat.split(ROW_SEPARATOR, 1)[0].split(": ", 1)[-1]
    return flat


@dataclass
class Run:
    """One answer while it streams (what gets stored at the end)."""

    prepared: Prepared
    mode: AnswerMode
    model: str | None
    standalone: str = ""
    plan: Plan | None = None
    evidence: list[Evidence] = field(default_factory=list)
    answer: str = ""
    verify: VerifyEvent | None = None
    budget: Budget | None = None  # LLM: what the prompts may hold
    citations: CitationCheck | None = None  # the check of the finished answer's citations
    why_extractive: str = "no language model answered."
    notices: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)
    stored: bool = False

    @property
    def options(self) -> RetrievalOptions:
        return self.prepared.request.options

    def sources(self) -> list[Source]:
        return [e.source() for e in self.evidence]

    def notice(self, text: str) -> None:
        """Tell the user once."""
        if text not in self.notices:
            self.notices.append(text)

    def answer_prompt(self, evidence: Sequence[Evidence]) -> str:
        """The answer prompt over the numbered ``evidence``."""
        return prompts.ANSWER_PROMPT.format(sources=listing(evidence), question=self.standalone)

    def addendum_prompt(self, evidence: Sequence[Evidence]) -> str:
        """The prompt of an addendum to the answer so far, over the new ``evidence``."""
        return prompts.ADDENDUM_PROMPT.format(
            question=self.standalone,
            answer=self.answer,
            sources=listing(evidence),
            first=evidence[0].n if evidence else len(self.evidence) + 1,
        )


def dedup(facts: Sequence[Evidence]) -> list[Evidence]:
    """The best (first-ranked) fact per source page."""
    seen: set[tuple[int, int]] = set()
    out = []
    for e in facts:
        if e.key not in seen:
            seen.add(e.key)
            out.append(e)
    return out


def number(evidence: list[Evidence], first: int = 1) -> list[Evidence]:
    """Number the evidence from ``first``, in order."""
    for i, e in enumerate(evidence, start=first):
        e.n = i
    return evidence


def where(h: Hit) -> str:
    """ "Title, p. 3 (Heading > Path)" as a prompt names a passage."""
    at = f"{h.title}, {place(h.kind, h.page, h.page_label, h.heading_path)}"
    shown = section(h.kind, h.heading_path)
    return f"{at} ({shown})" if shown else at


def listing(evidence: Sequence[Evidence]) -> str:
    """The numbered sources as an answer prompt lists them."""
    return "\n".join(f"[{e.n}] ({where(e.hit)}) {e.quote}" for e in evidence)
