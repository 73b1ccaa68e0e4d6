"""What a question asks for, and whether a sentence gives it beyond the question's own words.

    asks = Asks.of("How many users are in the SNAP Facebook dataset?")
    asks.kind                                   # "number"
    asks.gives("It has 4039 users and 88,234 friend relationships.")   # 1.0
    asks.novelty("The SNAP Facebook dataset has users.")               # 0.0: only its words

The extractive answer (synthesis/extractive.py) leads with a sentence that gives what was asked:
a number (with its unit), a date, a name of a person, organisation or place, a definition, a
list, or, for a yes/no question, a sentence that says more than the question. A sentence made
only of the question's words (the heading that restates it, the sentence that announces "the
section below") gives nothing, however well it matches. All of this is regular expressions
over the words: deterministic, local, and fast enough to run on every candidate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from quire.retrieval import lexical
from quire.retrieval.highlight import highlight_patterns
from quire.text.numbers import counts_in, figures
from quire.text.segment import has_unspaced
from quire.text.stopwords import is_stopword

Kind = Literal["number", "date", "name", "definition", "list", "yesno", "other"]

# A limit: "the largest … is allowed to be", "the most … may hold", "up to what size".
_LIMIT = re.compile(
    r"\b(largest|smallest|biggest|maximum|minimum|most|least|fewest)\b[^?]*"
    r"\b(allowed|permitted|may|can|must)\b|\bup to what\b|\bwhat (\w+ )?limit\b",
    re.I,
)
# How a text states a limit: "no more than 500 square feet", "shall not exceed", "at most".
_STATES_LIMIT = re.compile(
    r"\b(no|not) (more|less|larger|smaller|greater|bigger|fewer) than\b|\bnot (to )?exceed"
    r"|\b(at most|at least|up to|maximum|minimum|limited to|cap(ped)? (at|of))\b"
    r"|[<>≤≥⩽⩾]\s*\d",  # a formula's bound: "‖o‖ > 24576"
    re.I,
)
# A number asked as a time: "how quickly does it start", "how long does a sync take".
_DURATION = re.compile(
    r"\bhow (quickly|soon)\b|\bwithin how\b|\bhow long (does|did|do|will|would|can|should|"
    r"after|before|until)\b|\bhow long\b[^?]*\b(take|last|wait|run)s?\b",
    re.I,
)
# How a text states a time: a number with its unit ("within five seconds", "2 ms", "90 days").
_STATES_DURATION = re.compile(
    r"(\d\s*-?\s*|\b(a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|"
    r"twenty|thirty|sixty|ninety|hundred|few|several)(\s+|\s*-\s*))(ns|µs|us|ms|milliseconds?|"
    r"seconds?|secs?|s|minutes?|mins?|hours?|hrs?|h|days?|weeks?|months?|years?)\b",
    re.I,
)
#: What a number question may ask the measure of ("what similarity threshold", "what slope").
_MEASURES = (
    "percentage|share|size|length|rate|threshold|amount|total|fraction|limit|ratio|proportion|"
    "price|cost|fee|slope|weight|speed|capacity|count|age"
)
#: "How ..." asking a size, a time or a number in general, naming no measure of its own.
_HOW_IN_GENERAL = (
    "many much long large big fast far old often high wide deep strictly tall heavy quickly "
    "soon frequently"
).split()
_ASKS_NUMBER = re.compile(
    rf"\b(how ({'|'.join(_HOW_IN_GENERAL)}|clustered|steep|long after|soon after)|"
    r"what (value|number|percentage|share|size|length|rate|threshold|amount|total|"
    r"fraction|limit|default|ratio|proportion|price|cost|fee|byte|opcode|code|slope|"
    r"block number|weight|speed|capacity|count|age)|"
    r"(which|what) ([\w-]+ )?(value|number|byte|opcode|code|block number)s?|at what|"
    # "what similarity threshold", "what average shortest path length": a measure with up to
    # three words before it, none a verb or an article ("in what unit is the amount")
    r"what ((?!(is|are|was|were|does|do|did|has|have|the|an?|of|in|on|for|to)\b)[\w-]+ ){1,3}"
    rf"({_MEASURES})|"
    r"up to what|by how|"
    # "How are control and status registers numbered in DWARF?": by numbers
    r"how (is|are|was|were) [^?]{1,80} numbered|"
    r"to what (value|level))\b"
    r"|"
    + _LIMIT.pattern
    + r"|いくつ|いくら|何(人|個|本|回|歳|度|倍|枚|冊|件|通|キロ|メートル|パーセント|"
    r"校|社|台|匹|頭|羽|杯|軒|階|名|部|点|号|番|歩|隻|か所|箇所|ヶ所|円|ドル|分|秒|週|"
    r"ヶ月|か月|カ月|時間|日間|年間|種類|行|ページ|語|字|店|局|棟|戸|世帯|カ国|か国|ヵ国|割)|"
    r"多少|幾(個|人|多|次|歲)|几(个|人|次|岁)"
    # French, Spanish, Portuguese, Italian, German, Dutch, Russian
    r"|\b(combien|cu[aá]nt[oa]s?|quant[oaie]s?|wie (viele?|lange?|gro[sß]|hoch|weit|alt|oft|"
    r"schnell|schwer|teuer)|hoeveel|hoe (lang|groot|hoog|ver|oud|vaak|snel|zwaar|duur)|"
    r"сколько)\b",
    re.IGNORECASE,
)
_ASKS_DATE = re.compile(
    # "When did …?" and "If …, when is …?", not the clause of "When the simulation starts, what …?"
    r"(^\W*|[,;]\s+)(since |until )?when (is|was|were|are|did|does|do|will|would|can|could|"
    r"has|have|had|should|must|may|might)\b"
    r"|\b(what year|which year|what date|in which year|what day)\b|"
    r"何月|何日|何年|いつ|哪年|哪一年|何時|幾時|几时|哪天|哪幾年|哪几年"
    r"|^\W*(¿\s*)?(quand|cu[aá]ndo|quando|wann|wanneer|когда)\b"
    r"|\b(en quelle année|quelle date|jusqu'à quand|en qu[eé] año|qu[eé] fecha|hasta cu[aá]ndo|"
    r"em que ano|in che anno|in welchem jahr|bis wann|in welk jaar|welke datum|"
    r"в каком году|какого числа|какая дата|с какого года)\b",
    re.I,
)
# "Who …?", "Where …?" (not the relative "a partner who cooperates"), "which register",
# "what is the name": the answer names a person, place, organisation or thing.
_ASKS_NAME = re.compile(
    r"^\W*(in |from |by |to |for |with |at )?(who|whom|whose|where)\b|"
    r"\b(which|what) (\w+ )?(author|person|title|book|paper|city|country|town|place|company|"
    r"organi[sz]ation|ship|vessel|schooner|name|register|function|file|tag|image|tool|"
    r"command|model|algorithm|hash|language|denomination|opcode|instruction|abi|format|"
    r"library|label|version|term|word)s?\b|what (is|was|are|were)\b[^?]*\b(called|named)\W*$"
    r"|誰|だれ|名前|谁|誰人|何人|どこ|哪裡|哪里"
    r"|^\W*(¿\s*)?((à|de|par|pour|a|por|para|con|von|mit|у|с|к) )?"
    r"(qui|où|qui[eé]n(es)?|d[oó]nde|quem|onde|chi|dove|wer|wem|wo|кто|кого|где)\b"
    r"|\b(quel(le)?s? (nom|auteur|ville|pays|norme|loi|entreprise|organisation)|"
    r"qu[eé] (nombre|norma|ley|autor|ciudad|pa[ií]s|empresa|organizaci[oó]n)|"
    r"как(ой|ая|ое|ие) (город|страна|закон|автор|организаци)|как называ)",
    re.I,
)
_ASKS_LIST = re.compile(
    r"\b(which|what) (two|three|four|five|six|several)\b|\bwhat are the\b|\blist\b"
    r"|\b(which|what) (kinds|types|sorts) of\b",
    re.I,
)
_ASKS_DEFINITION = re.compile(
    r"^\s*(what|who) (is|are) (an? |the )?\S+(\s+\S+){0,3}\s*\?*\s*$"
    r"|\bwhat does \S+( \S+){0,3} mean\b|\bdefin(e|ition)\b",
    re.I,
)
# "How is a block's gas target derived from its gas limit?": asks for the rule, a definition.
_ASKS_DERIVATION = re.compile(
    r"^\W*how (is|are|was|were|do|does|did) ([\w'’-]+ ){1,8}?(derived|computed|calculated|"
    r"determined|obtained|defined|worked out|estimated)\b",
    re.I,
)
# How a text states a rule: "is defined as the gas limit divided by ρ", "T = a / b".
_STATES_DERIVATION = re.compile(
    r"\b(defined as|given by|(computed|calculated|derived|obtained|determined|estimated) "
    r"(as|from|by)|equals?|equal to|divided by|multiplied by|the (sum|product|ratio|difference|"
    r"quotient|mean|average) of)\b|\s=\s",
    re.I,
)
_ASKS_YESNO = re.compile(
    r"^\s*(is|are|was|were|does|do|did|can|could|should|will|would|has|have|had|must)\b", re.I
)
#: The first that matches says what a question asks for.
_KINDS: list[tuple[Kind, re.Pattern[str]]] = [
    ("definition", _ASKS_DERIVATION),
    ("number", _ASKS_NUMBER),
    ("date", _ASKS_DATE),
    ("list", _ASKS_LIST),
    ("name", _ASKS_NAME),
    ("definition", _ASKS_DEFINITION),
    ("yesno", _ASKS_YESNO),
]
_KANA = re.compile(r"[\u3040-\u309f]")
_KATAKANA = re.compile(r"[\u30a1-\u30fa][\u30a1-\u30ff・]+")
#: Chinese and Japanese numerals (figures, full-width included, are ``\d``).
_NUMERALS = "一二三四五六七八九十百千万〇零两兩"
_DIGIT = re.compile(rf"\d|[{_NUMERALS}]")
_YEAR = re.compile(
    r"\b(1[5-9]\d\d|20\d\d)\b|\b\d{1,2}(st|nd|rd|th)? (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|"
    r"Nov|Dec)|\b(January|February|March|April|May|June|July|August|September|October|"
    r"November|December)\b|[年月日]"
    # the months of French, Spanish, Portuguese, Italian, German, Dutch and Russian dates
    r"|(?i:\b\d{1,2}(er|º|\.)? (de )?(janvier|février|mars|avril|mai|juin|juillet|août|septembre|"
    r"octobre|novembre|décembre|enero|febrero|marzo|abril|mayo|junio|julio|agosto|"
    r"sept?iembre|octubre|noviembre|diciembre|janeiro|fevereiro|março|maio|junho|julho|"
    r"setembro|outubro|novembro|dezembro|gennaio|febbraio|aprile|maggio|giugno|luglio|"
    r"settembre|ottobre|dicembre|januar|februar|märz|juni|juli|oktober|dezember|januari|"
    r"februari|maart|mei|augustus|januar|января|февраля|марта|апреля|мая|июня|июля|"
    r"августа|сентября|октября|ноября|декабря)\b)"
)
# A reference's year: "(Charniak, 2000)", "(Cohn et al., 2007; Lee 2010)", "Buterin [2016]",
# "Sekine (2005)": a date, no answer to a number question.
_CITED_YEAR = re.compile(
    r"[(\[][A-Z][^()\[\]\d]{0,60}\b(1[5-9]|20)\d\d[a-z]?\b[^()\[\]]{0,80}[)\]]"
    r"|\b[A-Z][\w’'-]+( et al\.?)? [(\[](1[5-9]|20)\d\d[a-z]?[)\]]"
)
# A year that dates what a sentence tells ("In 1999 Barabási and Albert published …", "since
# 2005"): a date, no answer to "how many" or "how clustered".
_DATED_YEAR = re.compile(
    r"\b(in|since|by|until|till|from|after|before|during)\s+(1[5-9]|20)\d\d\b", re.I
)
# The measure a number question names, to find beside its number: "how clustered" (the
# clustering coefficient), "how many nests", "what slope".
_FOCUS = re.compile(
    r"\bhow (?:many|much) ([a-z][\w-]+)|\bhow ([a-z]+)\b"
    rf"|\bwhat (?:[a-z-]+ ){{0,2}}?({_MEASURES}|exponent|coefficient|probability)\b",
    re.I,
)
# ... not when it names a size or a time in general, or a number as such.
_NO_FOCUS = frozenset(_HOW_IN_GENERAL + "value values number numbers amount total count".split())
# A number asked as a measure (a threshold, a rate, a share): written in figures, so a count
# in words ("two articles") is not one.
_MEASURE = re.compile(
    r"\b(threshold|rate|percentage|percent|ratio|fraction|share|proportion|probability|"
    r"slope|coefficient|exponent|temperature|speed|price|cost|fee)s?\b",
    re.I,
)
# The number of a figure, table, section, equation … ("Figure 4.3 shows …", "Table 4.1: …",
# "§ 512"): a label, no answer to a number question.
_LABEL = re.compile(
    r"\b(fig(ure)?s?\.?|tables?|sections?|chapters?|eq(uation)?s?\.?|exercises?|listings?|"
    r"examples?|appendix|theorems?|lemmas?|algorithms?|steps?)\s*\(?\d+(\.\d+)*\)?"
    r"|§\s*\d+(\.\d+)*",
    re.I,
)
_FULL_DATE = re.compile(r"\b\d{4}-\d\d-\d\d\b|\b\d{1,2}[./]\d{1,2}[./](\d\d){1,2}\b")
# A capitalised word not at the start of the text or of a sentence, or a code-like token
# (x8, s0, 0x5f, SHA2-256, traefik:v2.11).
_NAME = re.compile(
    r"(?<![.!?]\s)(?<!^)\b[A-Z][\w’'-]*[a-z][\w’'-]*"
    r"|\b(?=[\w:.-]*\d)(?=[\w:.-]*[A-Za-z])[A-Za-z0-9][\w:.-]*[A-Za-z0-9]\b"
)
_DEFINES = re.compile(
    r"\b(is|are|was|were|means?|meant|refers? to|denotes?|called|defined as|stands for)\b", re.I
)
_LISTS = re.compile(r",|;|\band\b|\bor\b|·")
# Words and whole numbers (3.5, 88,234, 0x5f).
_TOKEN = re.compile(r"\d[\d,.]*\d|\w+", re.UNICODE)
# A section number (2.4., 3.1.2, 4.10): says where, not what. A decimal is no section
# number: "89.00", "0.037" (a part after the first starts with a zero, or the first is 0).
_SECTION = re.compile(r"^[1-9]\d*(\.[1-9]\d?)+\.?$|^\d+(\.\d+){2,}\.?$")
_ALTERNATIVES = re.compile(r"\b(\w+)\s+or\s+(\w+)\b", re.I)
#: What a number gives a question asking for a bound or a time when its sentence states none.
UNSTATED = 0.5
#: New content words for a sentence to count as fully new (novelty 1).
NEW_WORDS = 2
#: Words sharing this long a prefix are the same word ("refunded", "refundable").
SAME_PREFIX = 5


def content_words(text: str) -> list[str]:
    """The words of ``text`` that carry content: lower case, no stopwords, no single letters,
    no section numbers."""
    return [
        w
        for w in _TOKEN.findall(text.lower())
        if (len(w) > 1 or w.isdigit()) and not is_stopword(w) and not _SECTION.match(w)
    ]


def _numbers(text: str) -> set[str]:
    """The numbers of ``text``, said in figures or in words ("fourteen" is 14)."""
    return figures(text) | counts_in(text)


# A Chinese or Japanese question names the unit it asks for after 何, 幾, 几 or 多少: 何時 (what
# hour), 何校 (how many schools), 幾聲 (how many shots), 何月何日.
_COUNTER = re.compile(r"(?:何|幾|几|多少)([\u4e00-\u9fff\u30a0-\u30ff])")


def _stated(question: str, kind: Kind) -> re.Pattern[str] | None:
    """How what a question asks for must be said: a definition asked as "how is X derived"
    as a rule; a number as a bound, as a time, or any way; a Chinese or Japanese number or
    date with the unit the question names (午前三時 for 何時); anything else any way."""
    if kind == "definition":
        return _STATES_DERIVATION if _ASKS_DERIVATION.search(question) else None
    counters = {c for c in _COUNTER.findall(question) if c not in "故処"}
    if kind in ("number", "date") and counters:
        return re.compile(rf"(?:{_DIGIT.pattern})\s*[{''.join(sorted(counters))}]")
    if kind != "number":
        return None
    if _LIMIT.search(question):
        return _STATES_LIMIT
    if _DURATION.search(question):
        return _STATES_DURATION
    return None


def _focus(question: str) -> re.Pattern[str] | None:
    """The measure a number question names, matched in a text as the answer's query terms are
    (by its stem: "how clustered": "clustering coefficient"; "how many nests": "nest"), or
    None."""
    for m in _FOCUS.finditer(question):
        word = next((g for g in m.groups() if g), "").lower()
        if len(word) > 3 and word not in _NO_FOCUS and not is_stopword(word):
            return next(iter(highlight_patterns([word], [], inner=True)), None)
    return None


def _prefix(word: str) -> str:
    return word if word[:1].isdigit() else word[:SAME_PREFIX]


@dataclass
class Asks:
    """A question's kind, and its own words (stems, numbers, names) to see past."""

    question: str
    kind: Kind
    prefixes: set[str] = field(default_factory=set)
    numbers: set[str] = field(default_factory=set)
    said: set[str] = field(default_factory=set)  # its numbers, in figures or in words
    names: set[str] = field(default_factory=set)
    alternatives: list[tuple[str, str]] = field(default_factory=list)
    unspaced: bool = False
    #: How a text states the number asked when it must be said a certain way: as a bound
    #: ("the largest … is allowed to be": "no more than 500 square feet") or as a time ("how
    #: quickly": "within five seconds"); another number is likelier a count, a date or a
    #: section of a code.
    stated: re.Pattern[str] | None = None
    #: Asked for a measure (a threshold, a rate): only figures give it.
    measure: bool = False
    #: The measure a number question names ("how clustered": "clust"), as a text names it.
    focus: re.Pattern[str] | None = None

    @classmethod
    def of(cls, question: str) -> Asks:
        other: Kind = "other"
        kind = next((k for k, asks in _KINDS if asks.search(question)), other)
        words = content_words(question) + lexical.terms(question)
        names = {m.group(0).lower() for m in _NAME.finditer(question)}
        names.update(question.split()[:1])  # the first word is capitalised anyway
        return cls(
            question=question,
            kind=kind,
            prefixes={_prefix(w) for w in words},
            numbers=figures(question),
            said=_numbers(question),
            names={n.lower() for n in names},
            alternatives=[
                (a.lower(), b.lower())
                for a, b in _ALTERNATIVES.findall(question)
                if not is_stopword(a.lower()) and not is_stopword(b.lower())
            ],
            unspaced=has_unspaced(question),
            stated=_stated(question, kind),
            measure=kind == "number" and bool(_MEASURE.search(question)),
            focus=_focus(question) if kind == "number" else None,
        )

    def new_words(self, text: str) -> list[str]:
        """The content words of ``text`` that are not the question's."""
        return [w for w in content_words(text) if _prefix(w) not in self.prefixes]

    def chooses(self, text: str) -> bool:
        """For "is it A or B?": ``text`` names one of the two and not the other."""
        words = {_prefix(w) for w in content_words(text)}
        return any((_prefix(a) in words) != (_prefix(b) in words) for a, b in self.alternatives)

    def novelty(self, text: str) -> float:
        """How much ``text`` says beyond the question's words: 0 (nothing) to 1. Choosing one
        of the question's alternatives ("char is unsigned.") says something."""
        if self.unspaced or has_unspaced(text):
            return 1.0  # no words to compare: CJK sentences are judged by the other features
        if self.alternatives and self.chooses(text):
            return 1.0
        new = self.new_words(text)
        # A new number says as much as a sentence's worth of words.
        return min(1.0, sum(NEW_WORDS if w[:1].isdigit() else 1 for w in new) / NEW_WORDS)

    def _as_stated(self, text: str) -> float:
        """For ``text`` holding a number: 1 when it is said as the question wants it (a bound,
        a time, 午前三時 for 何時) or any way will do, else ``UNSTATED``."""
        return 1.0 if not self.stated or self.stated.search(text) else UNSTATED

    def gives(self, text: str) -> float:
        """1 when ``text`` holds what the question asks for, beyond the question's own
        numbers and names; 0 when it does not; 0.5 when the question asks for nothing in
        particular."""
        if self.kind == "number":
            if self.unspaced or has_unspaced(text):
                return self._as_stated(text) if _DIGIT.search(text) else 0.0
            # A date's figures are no answer to "how many" or "what total", nor is the year
            # of a reference or the number of a figure; a measure is written in figures.
            plain = _FULL_DATE.sub(" ", text)
            plain = _LABEL.sub(" ", _CITED_YEAR.sub(" ", _DATED_YEAR.sub(" ", plain)))
            found = figures(plain) if self.measure else _numbers(plain)
            if not found - self.said:
                return 0.0
            return self._as_stated(text)
        if self.kind == "date":
            # The question's own year ("the calendar for 2017") is not the date it asks for;
            # a whole date in that year is ("2021-05-03" for "invoice FV 1/2021").
            if _FULL_DATE.search(text):
                return 1.0
            if self.stated and (self.unspaced or has_unspaced(text)):
                return self._as_stated(text) if _DIGIT.search(text) else 0.0
            return 1.0 if any(m.group(0) not in self.said for m in _YEAR.finditer(text)) else 0.0
        if self.kind == "name":
            if self.unspaced or has_unspaced(text):
                # Japanese writes foreign names of people and places in katakana.
                asked = set(_KATAKANA.findall(self.question))
                if _KANA.search(self.question) and set(_KATAKANA.findall(text)) - asked:
                    return 1.0
                return 0.5
            found = {m.group(0).lower() for m in _NAME.finditer(text)}
            # A code-like token is new unless the question has it whole ("traefik:v2.11" is
            # the answer to "which Traefik image tag"); a word, unless it has its stem.
            new = {
                n
                for n in found
                if n not in self.names and (_DIGIT.search(n) or _prefix(n) not in self.prefixes)
            }
            return 1.0 if new else 0.0
        if self.kind == "definition":
            if self.stated:  # asked how a thing is derived: the sentence giving the rule
                return 1.0 if self.stated.search(text) else 0.0
            return 1.0 if _DEFINES.search(text) else 0.0
        if self.kind == "list":
            return 1.0 if _LISTS.search(text) else 0.0
        if self.alternatives:
            return 1.0 if self.chooses(text) else 0.0
        return 0.5
