"""Extractive answers: the sentence of the top passages that answers the question, quoted
verbatim and cited, then at most two that support it. This is what Quire answers with when no
LLM is reachable, and what the map stage falls back to when a model returns nothing usable for
a batch.

The units quoted are sentences, and the rows of tables (``Model: BA graph · Clustering:
0.037``), ``KEY: value`` lines and code (a line of a table holds one fact; as part of a long
"sentence" it would never be quoted). A unit scores by:
- the query terms it contains, weighted by how rare they are among the candidates, or, for
  the sentence after (or before) one that matches the question, a share of its neighbour's:
  the answer is often the next sentence ("Who did it?" → "…the event. Smith did it.");
- the question's identifiers (``DT_RISCV_VARIANT_CC``, ``EIP-3529``, ``PUSH0``) it contains
  whole;
- whether it gives what the question asks for beyond the question's own words: a number for
  "how many / what value", a date for "when", a name for "who / which city", a definition,
  a list (synthesis/asks.py); for a number, whether it names the measure asked too ("how
  clustered": "the clustering coefficient, C, is 0.037");
- how much it says beyond the question's words: a sentence made only of them (a heading, a
  restatement) never leads the answer;
- its cosine to the question, for the likeliest units (MiniLM compares sentences well);
- the rank of its passage, and whether it reads as a whole sentence.
The answer leads with the best unit and adds at most two that score nearly as well, from its
own page first, so that it cites what supports it and little else. Units come from
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
from quire.retrieval.sentences import BULLETS, MAX_CHARS, ROWISH, TABLE_ROW, split_sentences
from quire.synthesis.asks import Asks
from quire.text.days import day_pattern, days_named
from quire.text.segment import has_unspaced
from quire.text.spelling import namespace_tails

MIN_CHARS = 8
MAX_PASSAGES = 8
MAX_SENTENCES = 240
EMBED_SENTENCES = 40
FRAGMENT_FACTOR = 0.85  # a sentence cut by the layout (a column, a box) reads less well
#: Kinds of answer a lead must hold (a question asking "how many" is not answered by a
#: sentence without a number, however close).
EXACT = ("number", "date")
#: What a question looks up in a table's row.
LOOKED_UP = ("number", "date", "name")
#: A row's key, when not its first cell, is at most this many words (a name, a mnemonic).
KEY_WORDS = 3
#: A unit supports the lead when it scores this share of it.
KEEP_RATIO = 0.7
#: ... and, from another page than the lead's, this share.
OTHER_PAGE_RATIO = 0.95
#: The lead and at most this many supporting units.
SUPPORTING = 2
MAX_SOURCES = 2
#: How much each feature counts in a unit's score.
WEIGHTS = {
    "lexical": 0.40,
    "cosine": 0.35,
    "identifier": 0.25,
    "gives": 0.20,
    "novelty": 0.10,
    "prior": 0.20,
    "lookup": 0.10,
    "focus": 0.15,
}
#: The share of a neighbour's match a unit inherits: the sentence after the one that matches
#: the question often answers it; the one before, less often.
AFTER_MATCH = 0.7
BEFORE_MATCH = 0.35
#: Runs of this many consecutive query terms are looked for as acronyms (CSR, TFT, BGP).
ACRONYM_WORDS = (3, 4)
#: A unit that says nothing beyond the question's words keeps this share of its score.
RESTATES = 0.3
#: A query term (or identifier) in the passage's heading path counts this share for its units.
HEADING_SHARE = 0.5
#: A unit that reads like a heading (a few capitalised words, no sentence) keeps this share.
HEADING_LIKE = 0.6
_HEADING_LIKE = re.compile(
    r"^(\d+(\.\d+)*\.?\s+)?([A-Z][\w’'-]*[\s,:]+){0,7}[A-Z][\w’'-]*(\s+\d+(\.\d+)*)?\.?$"
)
#: A unit that points elsewhere for its content ("the section below lists …") keeps this share;
#: a table row does not, whatever its description cell says: its cells are its content.
POINTS_ELSEWHERE = 0.8
_POINTS_ELSEWHERE = re.compile(
    r"\b(below|as follows|the following|listed in|shown in|described in|given in|"
    r"see (section|table|figure|chapter))\b",
    re.I,
)
_BRINGS_ITS_LIST = re.compile(r":\s*\n\s*\S")  # ... unless the list it points to is in it
#: A unit of a bibliography ("EIP-3529: Reduction in refunds, April 2021.") names what a
#: question names without answering it: it keeps this share, unless the question asks about
#: references or reading.
REFERENCE_LIST = 0.6
_REFERENCE_LIST = re.compile(
    r"(^|>)\s*([\dA-Z]+\.?\s+)?(references|bibliography|works cited|literature cited|"
    r"further reading|citations)\s*$",
    re.I,
)
_ASKS_REFERENCES = re.compile(
    r"\b(cite[sd]?|citations?|references?|bibliograph\w*|reading|published|publications?)\b",
    re.I,
)
# A complete sentence: starts as one (after opening quotes or brackets, a capital, a digit,
# or a letter of a script without case) and ends as one (. ! ? and the CJK 。！？, Arabic ؟,
# closing quotes and brackets after).
_OPENING = "\"'“‘([「『（"
_BULLET = re.compile(rf"^{BULLETS}\s+")
_ENDS = re.compile(r"[.!?。！？؟][\"'”’)\]」』）]*$")
# A sentence read with the list it introduces (retrieval/sentences.py) ends as the list does.
_INTRODUCES = re.compile(r":\s*\n")
# A ``KEY: value`` line or a table row written with its headers (``Model: BA · Nodes: 4039``).
_LABELLED = re.compile(r"^[^:.!?]{1,60}:\s*\S")
# MiniLM cosines of unrelated sentences sit around 0-0.2, related ones above ~0.4.
MIN_COSINE = 0.35


@dataclass
class Sentence:
    text: str
    start: int  # offset in the passage (negative: it starts before the passage, on the page)
    hit_index: int  # rank of its passage among the hits (0 = best)
    order: int = 0  # its place among the units of its passage's page (or passage)
    score: float = 0.0
    lexical: float = 0.0  # share of the (idf-weighted) query terms it contains
    support: float = 0.0  # its lexical match, or a share of its neighbours'
    cosine: float = 0.0  # similarity to the question (0 without an embedder)
    identifier: float = 0.0  # share of the question's identifiers it contains whole
    named: float = 0.0  # share of them that name something (not the question's bare numbers)
    gives: float = 0.0  # holds what the question asks for (asks.py)
    novelty: float = 0.0  # says something beyond the question's words (0-1)

    @property
    def relevant(self) -> bool:
        return self.support > 0 or self.identifier > 0 or self.cosine >= MIN_COSINE

    @property
    def complete(self) -> bool:
        """Not a fragment left by a chunk boundary: starts like a sentence, ends like one, or
        is a whole row of a table or a labelled line."""
        if "\n" not in self.text and (ROWISH.search(self.text) or _LABELLED.search(self.text)):
            return True
        first = _BULLET.sub("", self.text).lstrip(_OPENING)[:1]
        starts = first.isdigit() or (first.isalpha() and not first.islower())
        return starts and bool(_ENDS.search(self.text) or _INTRODUCES.search(self.text))


def units(hit: Hit, page_text: str | None = None) -> list[tuple[int, str]]:
    """The units of a hit's passage: its page's units that overlap the passage when the page
    is known (so that a sentence cut by the chunk's edge is whole), with the unit just before
    and just after it (the answer is often the next sentence), else the passage's own.
    Offsets are into the passage (negative: the unit starts before it, on the page)."""
    at = page_text.find(hit.text) if page_text else -1
    if page_text is None or at < 0:
        return split_sentences(hit.text)
    end = at + len(hit.text)
    page = split_sentences(page_text)
    inside = [i for i, (start, unit) in enumerate(page) if start < end and start + len(unit) > at]
    if not inside:
        return []
    lo, hi = max(inside[0] - 1, 0), min(inside[-1] + 2, len(page))
    return [(start - at, unit) for start, unit in page[lo:hi]]


def _usable(sentence: str) -> bool:
    if not MIN_CHARS <= len(sentence) <= MAX_CHARS:
        return False
    if len(sentence.split()) < 2 and not has_unspaced(sentence):  # a lone word; CJK has no spaces
        return False
    alnum = sum(ch.isalnum() for ch in sentence)
    return alnum >= 0.5 * len(sentence) and any(ch.isalpha() for ch in sentence)


def _term_patterns(
    question: str,
) -> tuple[list[re.Pattern[str]], list[tuple[re.Pattern[str], int, int]]]:
    """One pattern per query term, matching like the search highlighter does; and the
    acronyms of each run of ``ACRONYM_WORDS`` consecutive terms ("control and status
    registers" → CSR) with the terms they stand for: a unit holding the acronym matches them."""
    terms, patterns = [], []
    for t in lexical.terms(question):
        for p in highlight_patterns([t], [], inner=True):
            terms.append(t)
            patterns.append(p)
    acronyms = []
    for n in ACRONYM_WORDS:
        for i in range(len(terms) - n + 1):
            letters = "".join(t[0] for t in terms[i : i + n]).upper()
            if letters.isascii() and letters.isalpha():
                pattern = re.compile(rf"(?<![\w-]){letters}s?(?![\w-])")
                acronyms.append((pattern, i, i + n))
    return patterns, acronyms


def _candidates(
    hits: Sequence[Hit], max_passages: int, pages: Mapping[tuple[int, int], str] | None
) -> list[Sentence]:
    pool: list[Sentence] = []
    for i, hit in enumerate(hits[:max_passages]):
        page = (pages or {}).get((hit.document_id, hit.page))
        for order, (start, sentence) in enumerate(units(hit, page)):
            if _usable(sentence):
                pool.append(Sentence(sentence, start, i, order))
    return pool[:MAX_SENTENCES]


def _neighbour_support(pool: list[Sentence], lex: np.ndarray) -> np.ndarray:
    """Each unit's match, or the share it inherits from the unit before or after it."""
    support = lex.copy()
    for k in range(1, len(pool)):
        a, b = pool[k - 1], pool[k]
        if a.hit_index != b.hit_index or b.order != a.order + 1:
            continue
        support[k] = max(support[k], AFTER_MATCH * lex[k - 1])
        support[k - 1] = max(support[k - 1], BEFORE_MATCH * lex[k])
    return support


def score_sentences(
    question: str,
    hits: Sequence[Hit],
    embedder: Embedder | None = None,
    *,
    max_passages: int = MAX_PASSAGES,
    pages: Mapping[tuple[int, int], str] | None = None,
) -> list[Sentence]:
    """Candidate units of the top passages, best first. With ``pages`` (the text of each
    (document, page)), a sentence a chunk boundary cut is quoted whole from its page, and the
    sentences next to the passage are candidates too."""
    pool = _candidates(hits, max_passages, pages)
    if not pool:
        return []
    asks = Asks.of(question)
    patterns, acronyms = _term_patterns(question)
    headings = [hits[s.hit_index].heading_path or "" for s in pool]
    matches = np.array(
        [[bool(p.search(s.text)) for p in patterns] for s in pool], dtype=np.float32
    ).reshape(len(pool), len(patterns))
    for k, s in enumerate(pool):
        for acronym, first, end in acronyms:
            if acronym.search(s.text):
                matches[k, first:end] = 1.0
    if patterns:
        df = matches.sum(axis=0)
        idf = np.log1p(len(pool) / (1.0 + df))
        # A term in the passage's heading path counts for each of its units, less.
        in_heading = np.array(
            [[bool(p.search(h)) for p in patterns] for h in headings], dtype=np.float32
        ).reshape(len(pool), len(patterns))
        lex = np.maximum(matches, HEADING_SHARE * in_heading) @ idf / max(float(idf.sum()), 1e-9)
    else:
        lex = np.zeros(len(pool), dtype=np.float32)
    support = _neighbour_support(pool, lex)
    names = [i.lower() for i in identifiers(question)]
    # A number of the question counts on its own unless it is part of an identifier: the
    # 2021 of invoice "FV 1/2021" is not a year to look for.
    # A day of a month is looked for as that date in any of its forms ("1 May" is "1st May",
    # "May 1"), not as its number alone ("1 October" is another day).
    days = days_named(question)
    day_numbers = {day for day, _ in days}
    named = [_whole(w) for w in names] + [day_pattern(day, month) for day, month in days]
    wanted = named + [
        _whole(n)
        for n in sorted(asks.numbers)
        if not any(_holds_number(i, n) for i in names) and n not in day_numbers
    ]
    # Each pattern matched once per unit: the share of all of them, and of the named ones.
    credits = [_credits(wanted, s.text, h) for s, h in zip(pool, headings, strict=True)]
    ident = np.array([_share(c) for c in credits], dtype=np.float32)
    for s, c in zip(pool, credits, strict=True):
        s.named = _share(c[: len(named)])
    gives = np.array([asks.gives(s.text) for s in pool], dtype=np.float32)
    # A row's cell answers a question that asks for a number, a date or a name.
    lookup = np.array(
        [_looks_up(patterns, s.text) if asks.kind in LOOKED_UP else 0.0 for s in pool],
        dtype=np.float32,
    )
    novelty = np.array([asks.novelty(s.text) for s in pool], dtype=np.float32)
    # A unit that gives the number asked and names the measure asked for ("the clustering
    # coefficient, C, is 0.037" for "how clustered …?"): its number is likelier that measure.
    # A table row names its measures in its headers, and is looked up by its key instead.
    focus = np.array([gives[k] > 0 and _names_focus(asks, s.text) for k, s in enumerate(pool)])
    about_references = bool(_ASKS_REFERENCES.search(question))
    in_references = [not about_references and bool(_REFERENCE_LIST.search(h)) for h in headings]
    cos = np.zeros(len(pool), dtype=np.float32)
    prior = np.array([1.0 / (1.0 + 0.3 * s.hit_index) for s in pool], dtype=np.float32)
    if embedder is not None:
        # Embedding every sentence costs ~6 ms each on one CPU thread: only the likeliest,
        # by query terms and passage rank, are compared in meaning.
        likely = np.argsort(-(support + ident + 0.5 * prior), kind="stable")[:EMBED_SENTENCES]
        try:
            vecs = embedder.embed([question] + [pool[int(k)].text for k in likely])
            cos[likely] = np.clip(vecs[1:] @ vecs[0], 0.0, 1.0)
        except Exception:  # noqa: BLE001 - lexical scores still give an answer
            cos = np.zeros(len(pool), dtype=np.float32)
    for k, s in enumerate(pool):
        s.lexical, s.support, s.cosine = float(lex[k]), float(support[k]), float(cos[k])
        s.identifier, s.gives, s.novelty = float(ident[k]), float(gives[k]), float(novelty[k])
        s.score = (
            WEIGHTS["lexical"] * s.support
            + WEIGHTS["cosine"] * s.cosine
            + WEIGHTS["identifier"] * s.identifier
            + WEIGHTS["gives"] * s.gives
            + WEIGHTS["novelty"] * s.novelty
            + WEIGHTS["prior"] * float(prior[k])
            + WEIGHTS["lookup"] * float(lookup[k])
            + WEIGHTS["focus"] * float(focus[k])
        )
        if not s.complete:
            s.score *= FRAGMENT_FACTOR
        if s.novelty == 0.0:
            s.score *= RESTATES
        elif _HEADING_LIKE.match(s.text):
            s.score *= HEADING_LIKE
        if (
            _POINTS_ELSEWHERE.search(s.text)
            and not _BRINGS_ITS_LIST.search(s.text)
            and not TABLE_ROW.fullmatch(s.text)
        ):
            s.score *= POINTS_ELSEWHERE
        if in_references[k]:
            s.score *= REFERENCE_LIST
    pool.sort(key=lambda s: -s.score)
    return pool


def _looks_up(patterns: Sequence[re.Pattern[str]], text: str) -> float:
    """1 for a table row (``Header: value · Header: value``) that the question looks up: it
    names the row by the value of one cell, its key, and another cell by its header ("the block
    number of Shanghai": ``Name: FShanghai · First Block Number: 17034870``; "the opcode value
    of PREVRANDAO": ``Value: 0x44 · Mnemonic: PREVRANDAO · …``, whose key is not first); 0
    otherwise. A key other than the first cell is short (``KEY_WORDS``): a description that
    happens to use the question's words does not name its row."""
    if "\u00b7" not in text or not TABLE_ROW.fullmatch(text):
        return 0.0
    cells = [cell.partition(": ") for cell in text.split(" \u00b7 ")]
    if len(cells) < 2 or not all(colon for _, colon, _ in cells):
        return 0.0
    keys = [
        {k for k, p in enumerate(patterns) if p.search(value)}
        if i == 0 or len(value.split()) <= KEY_WORDS
        else set()
        for i, (_, _, value) in enumerate(cells)
    ]
    asked = [{k for k, p in enumerate(patterns) if p.search(header)} for header, _, _ in cells]
    return float(
        any(
            key and asked[j] - key
            for i, key in enumerate(keys)
            for j in range(len(cells))
            if j != i
        )
    )


def _names_focus(asks: Asks, text: str) -> bool:
    """Whether ``text``, not a table row, names the measure a number question asks for."""
    return (
        asks.focus is not None and not TABLE_ROW.fullmatch(text) and bool(asks.focus.search(text))
    )


def _holds_number(identifier: str, number: str) -> bool:
    return re.search(rf"(?<![\d.]){re.escape(number)}(?![\d]|\.\d)", identifier) is not None


def _whole(word: str) -> re.Pattern[str]:
    """``word`` (lower case) standing whole: not inside another word or a longer number; a
    constant's name also without its namespace ("call_plt" of "r_riscv_call_plt")."""
    either = "|".join(re.escape(w) for w in [word, *namespace_tails(word)])
    return re.compile(rf"(?<![\w.])(?:{either})(?![\w]|\.\d)")


def _credits(wanted: Sequence[re.Pattern[str]], text: str, heading: str) -> list[float]:
    """For each of the question's identifiers, numbers and days (``wanted``): 1 when the unit
    holds it whole, ``HEADING_SHARE`` when only its passage's heading path does (the section
    says what its sentences are about), else 0."""
    low, head = text.lower(), heading.lower()
    return [
        1.0 if pattern.search(low) else HEADING_SHARE if pattern.search(head) else 0.0
        for pattern in wanted
    ]


def _share(credits: Sequence[float]) -> float:
    return sum(credits) / len(credits) if credits else 0.0


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
    supporting: int = SUPPORTING,
    keep_ratio: float = KEEP_RATIO,
    max_sources: int = MAX_SOURCES,
    pages: Mapping[tuple[int, int], str] | None = None,
) -> list[Sentence]:
    """The units to quote: the one that answers first, then at most ``supporting`` units that
    score at least ``keep_ratio`` of it (``OTHER_PAGE_RATIO`` from another page), from at
    most ``max_sources`` passages, no repeats (overlapping chunks share sentences). Empty when
    no unit that says more than the question contains a query term or is close in meaning,
    or when the best one lacks the number or date asked for: then nothing in the passages
    answers the question."""
    ranked = [s for s in score_sentences(question, hits, embedder, pages=pages) if s.relevant]
    exact = Asks.of(question).kind in EXACT
    # For a number or a date, the best unit that holds one: the answer is a figure, and a
    # sentence around it without one is not the answer.
    lead = next((s for s in ranked if s.novelty > 0 and (s.gives or not exact)), None)
    if lead is None:
        return []  # nothing says it, or nothing holds the number or date asked for
    chosen = [lead]
    seen = {_key(lead.text)}
    used = {lead.hit_index}
    page_of = {i: (h.document_id, h.page) for i, h in enumerate(hits)}
    for s in ranked:
        if len(chosen) > supporting:
            break
        key = _key(s.text)
        if key in seen or s.novelty == 0:
            continue
        same_page = page_of[s.hit_index] == page_of[lead.hit_index]
        if s.score < (keep_ratio if same_page else OTHER_PAGE_RATIO) * lead.score:
            continue
        if s.hit_index not in used and len(used) >= max_sources:
            continue
        chosen.append(s)
        seen.add(key)
        used.add(s.hit_index)
    return chosen


def _key(text: str) -> str:
    return " ".join(text.lower().split())


def clip(text: str, n: int) -> str:
    """``text`` on one line, cut at a word boundary to at most ``n`` characters (+ …)."""
    text = " ".join(text.split())
    if len(text) <= n:
        return text
    cut = text[:n].rsplit(" ", 1)[0]
    return cut + "…"
