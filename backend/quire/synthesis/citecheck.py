"""Every citation of an LLM's answer checked against the source it cites, after the answer is
written: a ``[n]`` whose source does not say what its sentence claims is removed, and a
sentence left with no citation at all is marked ``[unsupported]``.

    result = check(answer, {1: SourceText(passage, label)}, embedder)
    result.text                     # the answer with the unsupported marks removed
    result.report()                 # CitationCheck(checked=10, kept=7, dropped=3, …)

The claim of a citation is the text of its sentence before it (after the previous citation of
the same sentence, when that part says enough on its own). A source supports the claim when:

1. **every number and name of the claim is in it** (numbers compared as numbers: "1,200" is
   1200, "seven" in the source is 7; names are capitalised words inside the sentence, matched
   whole and case-insensitively; the source's title and heading count, so "p. 12" or the
   book's title are found), and
2. **it is about the claim**: at least ``LEXICAL_SUPPORT`` of the claim's content words
   (stemmed, stopwords out) are in it, or, below that, the claim's cosine to the closest
   sentence of the source reaches ``COSINE_SUPPORT`` with at least ``LEXICAL_FLOOR`` of its
   words there, or reaches ``COSINE_ALONE`` whatever the words.

A sentence citing several sources for one claim ("… [2][5]") may split it between them: each
source must be about the claim at the lower ``LEXICAL_SHARED`` share, hold at least one of its
numbers and names (when it has any), and together they must hold all of them.

Extractive answers quote their sources verbatim, so their citations hold by construction:
:func:`verbatim` counts them without checking.
"""

from __future__ import annotations

import functools
import logging
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from quire.embed.base import Embedder
from quire.retrieval import lexical
from quire.retrieval.hits import Hit
from quire.retrieval.sentences import split_sentences
from quire.synthesis.answer import Run, where
from quire.synthesis.events import CitationCheck, DroppedCitation
from quire.synthesis.parse import CITATION, cited_numbers
from quire.text.language import detect
from quire.text.numbers import COUNT_WORDS, figures, spelled
from quire.text.segment import segment
from quire.text.stopwords import STOPWORDS
from quire.text.tokenize import Tokenizer

log = logging.getLogger(__name__)

#: The weighted share of the claim's content words a source must hold to support it on words
#: alone, and, below it, what the share and the claim's cosine to the source's closest sentence
#: must add up to (a paraphrase). Set on the examples of tests/synthesis/test_citecheck.py.
LEXICAL_SUPPORT = 0.3
COMBINED_SUPPORT = 0.95
#: Each source of a claim cited to several at once holds part of it: half the share.
LEXICAL_SHARED = 0.15
#: A claim part shorter than this many content words is read with its whole sentence.
MIN_CLAIM_TERMS = 3
#: Sentences of one source compared in meaning (the first ones of a long passage).
MAX_SOURCE_SENTENCES = 40
#: What marks a sentence whose every citation was removed.
UNSUPPORTED = "[unsupported]"
#: Languages that capitalise every noun: capitals are no names there.
_NOUN_CAPITALS = frozenset({"de", "lb"})

# One citation group: consecutive marks, "[1]", "[1][2]", "[1, 2]" (with spaces before).
_GROUP = re.compile(r"[ \t]*(?:" + CITATION.pattern + ")+")
_CITED_END = re.compile(r"\]\s*[.!?][\"'”’)]*\s+")
_WORD = re.compile(r"[^\W_]+")
_NAME = re.compile(r"(?<![^\W_])[^\W\d_][^\W_]*")
# What opens a sentence or a quotation: the word after it is capitalised for that reason.
_OPENERS = "\"'“‘«([{:—–-*_#>•"
_LIST_MARKER = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)]|#{1,6})\s+")


@dataclass(frozen=True)
class SourceText:
    """What a citation is checked against: the passage, and where it is (title, page,
    heading), which may hold names and numbers an answer repeats."""

    text: str
    label: str = ""


@dataclass
class Verdict:
    """One citation of the answer, and whether its source supports its claim."""

    n: int
    claim: str
    supported: bool
    reason: str
    lexical: float = 0.0
    cosine: float | None = None


@dataclass
class Checked:
    """The answer with its unsupported citations removed, and every verdict."""

    text: str
    verdicts: list[Verdict] = field(default_factory=list)

    def report(self) -> CitationCheck:
        dropped = [v for v in self.verdicts if not v.supported]
        return CitationCheck(
            checked=len(self.verdicts),
            kept=len(self.verdicts) - len(dropped),
            dropped=len(dropped),
            method="checked",
            dropped_citations=[
                DroppedCitation(n=v.n, claim=v.claim, reason=v.reason) for v in dropped
            ],
        )


def check_run(run: Run, hits: Sequence[Hit], embedder: Embedder | None) -> CitationCheck:
    """Check the finished answer of ``run`` against its evidence (LLM), rewriting it and
    telling the user what went, or count its quotes (extractive); ``hits``: the search's
    candidates, the background of the word weights."""
    if run.mode != "llm":
        return verbatim(run.answer)
    sources = {e.n: SourceText(e.hit.text, where(e.hit)) for e in run.evidence}
    result = check(run.answer, sources, embedder, background=[h.text for h in hits])
    run.answer = result.text
    report = result.report()
    if (text := notice(report)) is not None:
        run.notice(text)
    return report


def verbatim(answer: str) -> CitationCheck:
    """The counts of an extractive answer: each citation follows the sentence it quotes from
    its source word for word, so all of them are kept."""
    count = sum(len(cited_numbers(m.group(0))) for m in _GROUP.finditer(answer))
    return CitationCheck(checked=count, kept=count, dropped=0, method="verbatim")


def notice(report: CitationCheck) -> str | None:
    """What the user is told when citations were removed."""
    if not report.dropped:
        return None
    return (
        f"{report.dropped} of {report.checked} citations were removed: the cited source does "
        f"not say what the sentence claims (sentences left without one are marked {UNSUPPORTED})."
    )


# -- the check --------------------------------------------------------------------------------
@dataclass
class _Group:
    """One citation group of the answer and the claim it cites for."""

    start: int
    end: int
    numbers: list[int]
    claim: str
    unit: int  # the sentence it belongs to


@dataclass
class _Source:
    stems: set[str]
    words: set[str]
    numbers: set[str]
    sentences: list[str]


def check(
    answer: str,
    sources: Mapping[int, SourceText],
    embedder: Embedder | None = None,
    *,
    background: Sequence[str] = (),
) -> Checked:
    """Check every ``[n]`` of ``answer`` against ``sources[n]``; see the module docstring.
    A number without a source (``[9]`` of eight) is unsupported too. ``background``: more
    passages of the same search (the candidates), which tell the common words apart."""
    groups = _groups(answer)
    if not groups:
        return Checked(answer)
    names_apply = detect([answer]) not in _NOUN_CAPITALS
    prepared = {n: _prepare(s) for n, s in sources.items()}
    own = {s.text for s in sources.values()}
    others = [_stems(t) for t in dict.fromkeys(background) if t not in own]
    weights = _Weights([s.stems for s in prepared.values()] + others)
    claims = [_Claim.of(g.claim, names_apply) for g in groups]
    cosines = _Cosines(embedder, prepared)
    verdicts: list[list[Verdict]] = []
    for group, claim in zip(groups, claims, strict=True):
        verdicts.append(_judge(group, claim, prepared, weights, cosines))
    return Checked(_rewrite(answer, groups, verdicts), [v for vs in verdicts for v in vs])


def _sentences(answer: str) -> list[tuple[int, int]]:
    """The (start, end) of the answer's sentences; a citation followed by a full stop ends one
    whatever comes next ("… [2]. then, lower-case …")."""
    out = []
    for start, text in split_sentences(answer):
        end = start + len(text)
        for m in _CITED_END.finditer(answer, start, end):
            out.append((start, m.end()))
            start = m.end()
        out.append((start, end))
    return out


def _groups(answer: str) -> list[_Group]:
    units = _sentences(answer)
    groups: list[_Group] = []
    for m in _GROUP.finditer(answer):
        numbers = cited_numbers(m.group(0))
        at = m.start() + (len(m.group(0)) - len(m.group(0).lstrip()))
        u = next((i for i, (s, e) in enumerate(units) if s <= at < e), len(units) - 1)
        if u > 0 and not _WORD.search(answer[units[u][0] : at]):
            u -= 1  # "The watch. [1] Then …": the marks lead a sentence, and cite the last one
        start, end = units[u] if units else (0, len(answer))
        before = [g for g in groups if g.unit == u]
        part_from = before[-1].end if before else start
        part = _plain(answer[part_from:at])
        if len(lexical.terms(part)) < MIN_CLAIM_TERMS or not _WORD.search(part):
            part = _plain(answer[start:end])
        groups.append(_Group(m.start(), m.end(), numbers, part, u))
    return groups


def _plain(text: str) -> str:
    """A claim without its citation marks, list marker and markdown emphasis."""
    text = CITATION.sub(" ", text)
    text = _LIST_MARKER.sub("", text)
    text = re.sub(r"[*_`]+", "", text)
    return " ".join(text.split()).strip(" ,;")


@dataclass
class _Claim:
    text: str
    stems: set[str]
    numbers: set[str]
    names: set[str]

    @classmethod
    def of(cls, text: str, names_apply: bool) -> _Claim:
        words = {w.lower() for w in _WORD.findall(text)}
        return cls(
            text,
            _stems(" ".join(lexical.terms(text))),
            figures(text) | spelled(words & COUNT_WORDS),
            _names(text) if names_apply else set(),
        )

    @property
    def anchors(self) -> set[str]:
        return self.numbers | self.names


def _prepare(source: SourceText) -> _Source:
    both = f"{source.label}\n{source.text}"
    sentences = [s for _, s in split_sentences(source.text)][:MAX_SOURCE_SENTENCES]
    words = {w.lower() for w in _WORD.findall(both)}
    return _Source(_stems(both), words, figures(both) | spelled(words), sentences)


def _judge(
    group: _Group,
    claim: _Claim,
    sources: Mapping[int, _Source],
    weights: _Weights,
    cosines: _Cosines,
) -> list[Verdict]:
    shared = len(group.numbers) > 1
    verdicts = []
    found: set[str] = set()
    for n in group.numbers:
        source = sources.get(n)
        if source is None:
            verdicts.append(Verdict(n, claim.text, False, f"there is no source [{n}]"))
            continue
        has = (claim.numbers & source.numbers) | (claim.names & source.words)
        missing = claim.anchors - has
        lex = weights.share(claim.stems, source.stems)
        verdict = Verdict(n, claim.text, True, "supported", round(lex, 3))
        if missing and not shared:
            verdict.supported, verdict.reason = False, _missing(missing)
        elif shared and claim.anchors and not has:
            verdict.supported, verdict.reason = False, _missing(missing)
        elif lex < (LEXICAL_SHARED if shared else LEXICAL_SUPPORT):
            cos = cosines.best(claim.text, n)
            verdict.cosine = None if cos is None else round(cos, 3)
            if cos is None or lex + cos < COMBINED_SUPPORT:
                verdict.supported = False
                verdict.reason = f"the source is about something else (words {lex:.0%}" + (
                    f", meaning {cos:.2f})" if cos is not None else ")"
                )
        if verdict.supported:
            found |= has
        verdicts.append(verdict)
    lost = claim.anchors - found
    if shared and lost:  # together, the sources must hold every number and name
        for v in verdicts:
            if v.supported:
                v.supported, v.reason = False, _missing(lost)
    return verdicts


def _missing(anchors: set[str]) -> str:
    shown = ", ".join(sorted(anchors)[:3])
    return f"the source does not contain {shown}"


def _rewrite(answer: str, groups: Sequence[_Group], verdicts: Sequence[list[Verdict]]) -> str:
    """The answer with each group's unsupported marks removed; the last emptied group of a
    sentence left without any citation becomes the UNSUPPORTED mark."""
    kept = [[v.n for v in vs if v.supported] for vs in verdicts]
    cited_units = {g.unit for g, k in zip(groups, kept, strict=True) if k}
    last_empty = {g.unit: i for i, (g, k) in enumerate(zip(groups, kept, strict=True)) if not k}
    out, pos = [], 0
    for i, (g, k) in enumerate(zip(groups, kept, strict=True)):
        out.append(answer[pos : g.start])
        original = answer[g.start : g.end]
        lead = original[: len(original) - len(original.lstrip())]
        if k == g.numbers:
            out.append(original)
        elif k:
            out.append(lead + "".join(f"[{n}]" for n in k))
        elif g.unit not in cited_units and last_empty.get(g.unit) == i:
            out.append(" " + UNSUPPORTED)
        pos = g.end
    out.append(answer[pos:])
    return "".join(out)


# -- features ---------------------------------------------------------------------------------
@functools.cache
def _tokenizer() -> Tokenizer:
    return Tokenizer()


def _stems(text: str) -> set[str]:
    """Porter stems of the words of ``text`` (as the index makes them), stopwords out; a
    run of an unspaced script gives its bigrams."""
    words = [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]
    joined = " ".join(words)
    return {s for s in _tokenizer().stems(segment(joined) or joined) if s not in STOPWORDS}


def _names(text: str) -> set[str]:
    """Capitalised words that are not capitalised for starting a sentence or a quotation."""
    names = set()
    for m in _NAME.finditer(text):
        word = m.group(0)
        if not word[0].isupper() or len(word) < 2 or word.lower() in STOPWORDS:
            continue
        before = text[: m.start()].rstrip()
        if not before or before[-1] in _OPENERS or before.endswith((".", "!", "?")):
            continue
        names.add(word.lower())
    return names


class _Weights:
    """How much each word of a claim counts: BM25's idf among the answer's sources, so that
    the words every source holds (the book's hero, the law's name) count for little. A word
    no source holds counts as one a single source holds."""

    def __init__(self, passages: Sequence[set[str]]) -> None:
        stems = passages
        self.count = len(stems)
        self.df: dict[str, int] = {}
        for terms in stems:
            for t in terms:
                self.df[t] = self.df.get(t, 0) + 1

    def weight(self, term: str) -> float:
        df = max(self.df.get(term, 0), 1)
        return math.log(1 + (self.count - df + 0.5) / (df + 0.5))

    def share(self, claim: set[str], source: set[str]) -> float:
        """The weighted share of ``claim``'s words that ``source`` holds (1 for no words)."""
        total = sum(self.weight(t) for t in claim)
        if total <= 0:
            return 1.0
        return sum(self.weight(t) for t in claim & source) / total


class _Cosines:
    """The claim's cosine to the closest sentence of a source, embedded on demand (only the
    citations words alone do not settle); None without an embedder."""

    def __init__(self, embedder: Embedder | None, sources: Mapping[int, _Source]) -> None:
        self.embedder = embedder
        self.sources = sources
        self._vectors: dict[str, np.ndarray] = {}

    def best(self, claim: str, n: int) -> float | None:
        source = self.sources.get(n)
        if self.embedder is None or source is None or not source.sentences:
            return None
        texts = [t for t in (claim, *source.sentences) if t not in self._vectors]
        try:
            if texts:
                for t, v in zip(texts, self.embedder.embed(texts), strict=True):
                    self._vectors[t] = v
        except Exception as exc:  # noqa: BLE001 - the words still decide
            log.warning("citation check: embedding failed (%s); words only", exc)
            self.embedder = None
            return None
        rows = np.stack([self._vectors[s] for s in source.sentences])
        return float(np.max(rows @ self._vectors[claim]))
