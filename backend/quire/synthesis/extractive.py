"""Extractive answers: the sentences of the top passages that best answer the question, quoted
verbatim and cited. This is what Quire answers with when no LLM is reachable, and what the map
stage falls back to when a model returns nothing usable for a batch.

A sentence scores by the query terms it contains (weighted by how rare they are among the
candidate sentences), by its cosine to the question when an embedder is at hand, and by the
rank of its passage. Sentences are split with a regular expression that keeps abbreviations,
initials and decimals together (the candidates are a few dozen passages of clean text; a
sentence-splitting library would add a dependency for no measurable gain here).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from quire.embed.base import Embedder
from quire.retrieval import lexical
from quire.retrieval.highlight import highlight_patterns
from quire.retrieval.search import Hit

# A boundary: . ! ? (optionally closing quotes/brackets) then space and an upper-case letter,
# digit or opening quote — but not after common abbreviations or single initials.
_ABBREV = (
    r"(?<!\bMr)(?<!\bMrs)(?<!\bMs)(?<!\bDr)(?<!\bProf)(?<!\bSt)(?<!\bvs)(?<!\betc)(?<!\bal)"
    r"(?<!\bFig)(?<!\bNo)(?<!\bVol)(?<!\bp)(?<!\bpp)(?<!\be\.g)(?<!\bi\.e)(?<!\b[A-Z])"
)
_BOUNDARY = re.compile(_ABBREV + r"[.!?][\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9])|\n\s*\n")
MIN_CHARS, MAX_CHARS = 25, 600
MAX_PASSAGES = 8
MAX_SENTENCES = 160
EMBED_SENTENCES = 40
FRAGMENT_FACTOR = 0.6  # a sentence cut by a chunk boundary reads badly when quoted
_STARTS = re.compile(r"[\"'“‘(\[]?[A-Z0-9]")
_ENDS = re.compile(r"[.!?][\"'”’)\]]*$")
# MiniLM cosines of unrelated sentences sit around 0-0.2, related ones above ~0.4.
MIN_COSINE = 0.35


@dataclass
class Sentence:
    text: str
    start: int  # offset in the passage
    hit_index: int  # rank of its passage among the hits (0 = best)
    score: float = 0.0
    lexical: float = 0.0  # share of the (idf-weighted) query terms it contains
    cosine: float = 0.0  # similarity to the question (0 without an embedder)

    @property
    def relevant(self) -> bool:
        return self.lexical > 0 or self.cosine >= MIN_COSINE

    @property
    def complete(self) -> bool:
        """Not a fragment left by a chunk boundary: starts like a sentence, ends like one."""
        return bool(_STARTS.match(self.text)) and bool(_ENDS.search(self.text))


def split_sentences(passage: str) -> list[tuple[int, str]]:
    """(offset, sentence) pairs; the sentence is an exact substring of the passage."""
    out: list[tuple[int, str]] = []
    pos = 0
    for m in _BOUNDARY.finditer(passage):
        end = m.start() + len(m.group(0).rstrip())
        _add(out, passage, pos, end)
        pos = m.end()
    _add(out, passage, pos, len(passage))
    return out


def _add(out: list[tuple[int, str]], passage: str, start: int, end: int) -> None:
    raw = passage[start:end]
    lead = len(raw) - len(raw.lstrip())
    sentence = raw.strip()
    if sentence:
        out.append((start + lead, sentence))


def _usable(sentence: str) -> bool:
    if not MIN_CHARS <= len(sentence) <= MAX_CHARS or len(sentence.split()) < 4:
        return False
    letters = sum(ch.isalpha() for ch in sentence)
    return letters >= 0.5 * len(sentence)


def _term_patterns(question: str) -> list[re.Pattern[str]]:
    """One pattern per query term, matching like the search highlighter does."""
    return [p for t in lexical.terms(question) for p in highlight_patterns([t], [])]


def score_sentences(
    question: str,
    hits: Sequence[Hit],
    embedder: Embedder | None = None,
    *,
    max_passages: int = MAX_PASSAGES,
) -> list[Sentence]:
    """Candidate sentences of the top passages, best first."""
    pool: list[Sentence] = []
    for i, hit in enumerate(hits[:max_passages]):
        for start, sentence in split_sentences(hit.text):
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
    cos = np.zeros(len(pool), dtype=np.float32)
    prior = np.array([1.0 / (1.0 + 0.3 * s.hit_index) for s in pool], dtype=np.float32)
    if embedder is not None:
        # Embedding every sentence costs ~6 ms each on one CPU thread: only the likeliest,
        # by query terms and passage rank, are compared in meaning.
        likely = np.argsort(-(lex + 0.5 * prior), kind="stable")[:EMBED_SENTENCES]
        try:
            vecs = embedder.embed([question] + [pool[int(k)].text for k in likely])
            cos[likely] = np.clip(vecs[1:] @ vecs[0], 0.0, 1.0)
        except Exception:  # noqa: BLE001 - lexical scores still give an answer
            cos = np.zeros(len(pool), dtype=np.float32)
    for k, s in enumerate(pool):
        s.lexical, s.cosine = float(lex[k]), float(cos[k])
        s.score = 0.45 * s.lexical + 0.35 * s.cosine + 0.2 * float(prior[k])
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
) -> list[Sentence]:
    """The sentences to quote: best first, at most ``per_passage`` from one passage, no repeats
    (overlapping chunks share sentences). Empty when no sentence contains a query term or is
    close in meaning: then nothing in the passages answers the question."""
    chosen: list[Sentence] = []
    seen: set[str] = set()
    used: dict[int, int] = {}
    for s in score_sentences(question, hits, embedder):
        key = " ".join(s.text.lower().split())
        if not s.relevant or key in seen or used.get(s.hit_index, 0) >= per_passage:
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
