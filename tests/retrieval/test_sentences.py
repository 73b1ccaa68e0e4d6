"""Sentences in every script: abbreviations kept, CJK and Arabic sentence ends found."""

from __future__ import annotations

import pytest

from quire.retrieval.sentences import split_sentences


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        (
            "Dr. Smith left at 3.5 p.m. He came back.",
            ["Dr. Smith left at 3.5 p.m.", "He came back."],
        ),
        # A question inside a quotation followed by a quoting particle is not a sentence end.
        (
            "彼は言った。「本当か？」と聞いた。次だ！",
            ["彼は言った。", "「本当か？」と聞いた。", "次だ！"],
        ),
        (
            "話說這件大案。發生在雍正年間！誰知道？",
            ["話說這件大案。", "發生在雍正年間！", "誰知道？"],
        ),
        ("「行こう。」彼女は立った。", ["「行こう。」", "彼女は立った。"]),
        ("هذا نص عربي. وهذه جملة ثانية؟ نعم.", ["هذا نص عربي.", "وهذه جملة ثانية؟", "نعم."]),
    ],
)
def test_sentences_end_where_the_script_ends_them(text: str, sentences: list[str]) -> None:
    units = split_sentences(text)
    assert [u for _, u in units] == sentences
    assert all(text[start : start + len(u)] == u for start, u in units)  # exact substrings
