"""Extractive answers: the sentences of the top passages that best answer the question, quoted
verbatim and cited. This is what Quire answers with when no LLM is reachable, and what the map
stage falls back to when a model returns nothing usable for a batch.

The units quoted are sentences, and the rows of tables and code (a line of a table holds one
fact; as part of a long "sentence" it would never be quoted). A unit scores by:
- the query terms it contains, weighted by how rare they are among the candidates;
- the question's identifiers (``DT_RISCV_VARIANT_CC``, ``EIP-3529``, ``PUSH0``) it contains
  whole;
- whether it holds what the question asks for: a number for "how many / what value", a year
  or date for "when", a name for "who";
- its cosine to the question, for the likeliest units (MiniLM compares sentences well);
- the rank of its passage, and whether it reads as a whole sentence.
The answer leads with the best unit and adds only units that score nearly as well, from at
most two passages, so that it cites what supports it and little else. Units come from
retrieval/sentences.py.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from quire.embed.base import Embedder
from quire.retrieval import lexical
from quire.retrieval.highlight import highlight_patterns
from quire.retrieval.hits import Hit
from quire.retrieval.planner import identifiers
from quire.retrieval.sentences import MAX_CHARS, ROWISH, split_sentences
from quire.text.segment import has_unspaced

MIN_CHARS = 8
MAX_PASSAGES = 8
MAX_SENTENCES = 200
EMBED_SENTENCES = 40
FRAGMENT_FACTOR = 0.85  # a sentence cut by the layout (a column, a box) reads less well
#: A unit joins the answer when it scores this share of the best one.
KEEP_RATIO = 0.8
MAX_SOURCES = 2
#: How much each feature counts in a unit's score.
WEIGHTS = {"lexical": 0.40, "cosine": 0.35, "identifier": 0.25, "kind": 0.15, "prior": 0.15}
# A complete sentence: starts as one (after opening quotes or brackets, a capital, a digit,
# or a letter of a script without case) and ends as one (. ! ? and the CJK 。！？, Arabic ؟,
# closing quotes and brackets after).
_OPENING = "\"'“‘([「『（"
_ENDS = re.compile(r"[.!?。！？؟][\"'”’)\]」』）]*$")
# MiniLM cosines of unrelated sentences sit around 0-0.2, related ones above ~0.4.
MIN_COSINE = 0.35
_DIGIT = re.compile(r"\d|[一二三四五六七八九十百千万〇零两兩]")
# What a question asks for, and what a unit must hold to give it.
_ASKS_NUMBER = re.compile(
    r"\b(how (many|much|long|large|big|fast|far|old|often|high|wide|deep|strictly|tall)|"
    r"what (value|number|percentage|share|size|length|rate|threshold|amount|total|"
    r"fraction|limit|default|ratio|proportion|price|cost|fee|byte|opcode|code)|"
    r"which (value|number|byte|opcode|code)|at what|up to what|by how|to what (value|level))\b"
    r"|いくつ|いくら|何(人|個|本|回|歳|度|倍|枚|冊|件|通|キロ|メートル|パーセント)|"
    r"多少|幾(個|人|多|次|歲)|几(个|人|次|岁)",
    re.IGNORECASE,
)
_ASKS_DATE = re.compile(
    r"\b(when|what year|which year|what date|in which year)\b|何月|何日|何年|いつ|哪年|哪一年|"
    r"何時|幾時|几时|哪天|哪幾年|哪几年",
    re.I,
)
_ASKS_NAME = re.compile(
    r"\b(who|whom|whose|which (author|person|title|book|paper))\b|誰|だれ|名前|谁|誰人|何人",
    re.I,
)
_YEAR = re.compile(
    r"\b(1[5-9]\d\d|20\d\d)\b|\b\d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
)
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*")


@dataclass
class Sentence:
    text: str
    start: int  # offset in the passage
    hit_index: int  # rank of its passage among the hits (0 = best)
    score: float = 0.0
    lexical: float = 0.0  # share of the (idf-weighted) query terms it contains
    cosine: float = 0.0  # similarity to the question (0 without an embedder)
    identifier: float = 0.0  # share of the question's identifiers it contains whole

    @property
    def relevant(self) -> bool:
        return self.lexical > 0 or self.identifier > 0 or self.cosine >= MIN_COSINE

    @property
    def complete(self) -> bool:
        """Not a fragment left by a chunk boundary: starts like a sentence, ends like one, or
        is a whole row of a table."""
        if "\n" not in self.text and ROWISH.search(self.text):
            return True
        first = self.text.lstrip(_OPENING)[:1]
        starts = first.isdigit() or (first.isalpha() and not first.islower())
        return starts and bool(_ENDS.search(self.text))


def units(hit: Hit, page_text: str | None = None) -> list[tuple[int, str]]:
    """The units of a hit's passage: its page's units that overlap the passage when the page
    is known (so that a sentence cut by the chunk's edge is whole), else the passage's own.
    Offsets are into the passage (negative: the unit starts before it, on the page)."""
    at = page_text.find(hit.text) if page_text else -1
    if page_text is None or at < 0:
        return split_sentences(hit.text)
    end = at + len(hit.text)
    return [
        (start - at, unit)
        for start, unit in split_sentences(page_text)
        if start < end and start + len(unit) > at
    ]


def _usable(sentence: str) -> bool:
    if not MIN_CHARS <= len(sentence) <= MAX_CHARS:
        return False
    if len(sentence.split()) < 2 and not has_unspaced(sentence):  # a lone word; CJK has no spaces
        return False
    alnum = sum(ch.isalnum() for ch in sentence)
    return alnum >= 0.5 * len(sentence) and any(ch.isalpha() for ch in sentence)


def _term_patterns(question: str) -> list[re.Pattern[str]]:
    """One pattern per query term, matching like the search highlighter does."""
    return [p for t in lexical.terms(question) for p in highlight_patterns([t], [])]


def wants(question: str, text: str) -> float:
    """1 when ``text`` holds the kind of thing the question asks for (a number, a date, a
    name), 0 when it does not, 0.5 when the question asks for nothing in particular."""
    if _ASKS_NUMBER.search(question):
        return 1.0 if _DIGIT.search(text) else 0.0
    if _ASKS_DATE.search(question):
        return 1.0 if _YEAR.search(text) else 0.0
    if _ASKS_NAME.search(question):
        return 1.0 if _NAME.search(text) else 0.0
    return 0.5


def score_sentences(
    question: str,
    hits: Sequence[Hit],
    embedder: Embedder | None = None,
    *,
    max_passages: int = MAX_PASSAGES,
    pages: Mapping[tuple[int, int], str] | None = None,
) -> list[Sentence]:
    """Candidate units of the top passages, best first. With ``pages`` (the text of each
    (document, page)), a sentence a chunk boundary cut is quoted whole from its page."""
    pool: list[Sentence] = []
    for i, hit in enumerate(hits[:max_passages]):
        for start, sentence in units(hit, (pages or {}).get((hit.document_id, hit.page))):
            if _usable(sentence):
                pool.append(Sentence(sentence, start, i))
    pool = pool[:MAX_SENTENCES]
    if not pool:
        return []
    patterns = _term_patterns(question)
    matches = np.array(
        [[bool(p.search(s.text)) for p in patterns] for s in pool], dtype=np.float32
    ).reshape(len(pool), len(patterns))
    if patterns:
        df = matches.sum(axis=0)
        idf = np.log1p(len(pool) / (1.0 + df))
        lex = matches @ idf / max(float(idf.sum()), 1e-9)
    else:
        lex = np.zeros(len(pool), dtype=np.float32)
    idents = [i.lower() for i in identifiers(question)]
    ident = np.array(
        [sum(i in s.text.lower() for i in idents) / len(idents) if idents else 0.0 for s in pool],
        dtype=np.float32,
    )
    kind = np.array([wants(question, s.text) for s in pool], dtype=np.float32)
    cos = np.zeros(len(pool), dtype=np.float32)
    prior = np.array([1.0 / (1.0 + 0.3 * s.hit_index) for s in pool], dtype=np.float32)
    if embedder is not None:
        # Embedding every sentence costs ~6 ms each on one CPU thread: only the likeliest,
        # by query terms and passage rank, are compared in meaning.
        likely = np.argsort(-(lex + ident + 0.5 * prior), kind="stable")[:EMBED_SENTENCES]
        try:
            vecs = embedder.embed([question] + [pool[int(k)].text for k in likely])
            cos[likely] = np.clip(vecs[1:] @ vecs[0], 0.0, 1.0)
        except Exception:  # noqa: BLE001 - lexical scores still give an answer
            cos = np.zeros(len(pool), dtype=np.float32)
    for k, s in enumerate(pool):
        s.lexical, s.cosine, s.identifier = float(lex[k]), float(cos[k]), float(ident[k])
        s.score = (
            WEIGHTS["lexical"] * s.lexical
            + WEIGHTS["cosine"] * s.cosine
            + WEIGHTS["identifier"] * s.identifier
            + WEIGHTS["kind"] * float(kind[k])
            + WEIGHTS["prior"] * float(prior[k])
        )
        if not s.complete:
            s.score *= FRAGMENT_FACTOR
    pool.sort(key=lambda s: -s.score)
    return pool


def best_sentence(question: str, hit: Hit) -> str:
    """The sentence of one passage that best matches the question (the passage start if none)."""
    ranked = score_sentences(question, [hit], None, max_passages=1)
    if ranked:
        return ranked[0].text
    return clip(hit.text, 300)


def select(
    question: str,
    hits: Sequence[Hit],
    embedder: Embedder | None = None,
    *,
    count: int = 5,
    per_passage: int = 2,
    keep_ratio: float = KEEP_RATIO,
    max_sources: int = MAX_SOURCES,
    pages: Mapping[tuple[int, int], str] | None = None,
) -> list[Sentence]:
    """The units to quote: the best first, then those that score at least ``keep_ratio`` of
    it, at most ``per_passage`` from one passage and ``max_sources`` passages in all, no
    repeats (overlapping chunks share sentences). Empty when no unit contains a query term or
    is close in meaning: then nothing in the passages answers the question."""
    chosen: list[Sentence] = []
    seen: set[str] = set()
    used: dict[int, int] = {}
    for s in score_sentences(question, hits, embedder, pages=pages):
        key = " ".join(s.text.lower().split())
        if not s.relevant or key in seen or used.get(s.hit_index, 0) >= per_passage:
            continue
        if chosen and (
            s.score < keep_ratio * chosen[0].score
            or (s.hit_index not in used and len(used) >= max_sources)
        ):
            continue
        chosen.append(s)
        seen.add(key)
        used[s.hit_index] = used.get(s.hit_index, 0) + 1
        if len(chosen) >= count:
            break
    return chosen


def clip(text: str, n: int) -> str:
    """``text`` on one line, cut at a word boundary to at most ``n`` characters (+ …)."""
    text = " ".join(text.split())
    if len(text) <= n:
        return text
    cut = text[:n].rsplit(" ", 1)[0]
    return cut + "…"
