"""The words a BM25 query leaves out: English function words, and Chinese or Japanese terms
that hold a question word."""

from __future__ import annotations

import re

#: Frequent English function words, left out of BM25 queries (retrieval/lexical.py) and of the
#: stored postings (term_postings.py): they cost FTS5 the most (long posting lists) and say
#: least.
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves""".split()
)
#: The characters of question words in Chinese and Japanese: 哪 which, 誰/谁 who, 什麼/甚麼
#: what, 怎 how, 幾/几 how many, 何 what, 嗎/吗/呢 question particles.
_QUESTION = re.compile("[何哪誰谁什甚怎幾几嗎吗呢]")


def is_stopword(term: str) -> bool:
    """Whether a query term is left out: an English function word, or a Chinese or Japanese
    term holding a question word (the passage that answers "清朝哪位皇帝" names the emperor,
    and a chunk that happens to say "哪位" is no better for it: as for "which" or "who")."""
    return term in STOPWORDS or _QUESTION.search(term) is not None
