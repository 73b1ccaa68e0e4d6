"""How text without spaces between words is cut for FTS5: overlapping character bigrams.

FTS5's ``unicode61`` tokenizer splits on spaces and punctuation only, so a run of kana and
kanji (or Chinese, Thai, Korean without its spaces) between two punctuation marks is one
token, and no query word ever matches inside it. The index therefore holds such runs as
overlapping bigrams, the classic unit of CJK retrieval (Lucene's CJKAnalyzer): "学習率の設定"
is indexed as "学習 習率 率の の設 設定", and a query is cut the same way, so BM25 ranks by
shared bigrams and a copied phrase matches all of its own. Text in other scripts is left
exactly as it is: an English library's index and rankings do not change.

    segment("Transformer の学習率")  # "Transformer  の学 学習 習率 "
    segment("plain English")          # None: nothing to cut, index the text as it is
"""

from __future__ import annotations

import re

#: Scripts written without spaces between words (or, for Hangul, with long agglutinated
#: words): Thai, Hangul Jamo, CJK radicals and punctuation-free symbols, Hiragana, Katakana,
#: Bopomofo, Hangul compatibility Jamo, CJK Extension A, CJK Unified Ideographs, Hangul
#: syllables, CJK compatibility ideographs, half-width Katakana, and the supplementary
#: ideograph planes.
_RUN = re.compile(
    "[\u0e00-\u0e7f\u1100-\u11ff\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3031-\u3035"
    "\u3041-\u30fa\u30fc-\u30ff\u3105-\u312f\u3131-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]+"
)


def has_unspaced(text: str) -> bool:
    """Whether ``text`` holds a character of a script written without spaces (see _RUN)."""
    return _RUN.search(text) is not None


def unspaced_runs(text: str) -> list[str]:
    """The runs of unspaced scripts in ``text``, in order."""
    return _RUN.findall(text)


def bigrams(run: str) -> list[str]:
    """A run's overlapping character bigrams (a single character stays itself)."""
    if len(run) < 2:
        return [run] if run else []
    return [run[i : i + 2] for i in range(len(run) - 1)]


_KANA = re.compile("[\u3041-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
# The character classes a Japanese run is cut at: kanji, katakana, hiragana (else: other).
_CLASSES = (
    (
        "kanji",
        re.compile("[\u3005-\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]"),
    ),
    ("katakana", re.compile("[\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff\uff66-\uff9f]")),
    ("hiragana", re.compile("[\u3041-\u309f]")),
)


def _class(char: str) -> str:
    return next((name for name, pattern in _CLASSES if pattern.match(char)), "other")


def query_words(run: str, japanese: bool) -> list[str]:
    """The search terms of one unspaced run of a query. Japanese (the query has kana) is cut
    where the script changes: kanji compounds and katakana words are its content words, and
    hiragana mostly its particles and endings, left out; a lone kanji takes the hiragana after
    it ("書き") or the character before, since the index holds nothing shorter than a bigram.
    Other runs (Chinese, Thai) give their bigrams."""
    if not japanese or len(run) < 3:
        return bigrams(run)
    groups: list[str] = []
    for char in run:
        if groups and _class(groups[-1][-1]) == _class(char):
            groups[-1] += char
        else:
            groups.append(char)
    words: list[str] = []
    for i, group in enumerate(groups):
        kind = _class(group[0])
        if kind == "hiragana":
            continue
        if len(group) >= 2:
            words.append(group)
        elif i + 1 < len(groups) and _class(groups[i + 1][0]) == "hiragana":
            words.append(group + groups[i + 1][0])
        elif i > 0:
            words.append(groups[i - 1][-1] + group)
    return words or bigrams(run)


def split_query(query: str) -> tuple[str, list[str]]:
    """A query's text outside unspaced runs (a space where each was), and the runs' search
    terms (query_words; Japanese when the query has any kana)."""
    japanese = _KANA.search(query) is not None
    words = [w for run in unspaced_runs(query) for w in query_words(run, japanese)]
    return _RUN.sub(" ", query), words


def segment(text: str) -> str | None:
    """``text`` with every unspaced run replaced by its bigrams, space-separated; None when
    there is no such run (the text is indexed as it is)."""
    if not has_unspaced(text):
        return None
    return _RUN.sub(lambda m: " " + " ".join(bigrams(m.group(0))) + " ", text)
