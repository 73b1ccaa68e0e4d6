"""The window stage: candidates ranked by their best few consecutive sentences."""

from __future__ import annotations

from quire.retrieval.windows import best_windows, passage_span, window_ranking

TERMS = ["frame", "pointer", "register"]
IDF = {"frame": 2.0, "pointer": 1.0, "register": 1.0}


def test_terms_close_together_beat_terms_scattered_over_a_passage() -> None:
    texts = {
        1: "A frame is a box. "
        + "Filler sentence here. " * 6
        + "A pointer points. "
        + "More filler words. " * 6
        + "The register holds bits.",
        2: "Intro text here. If a frame pointer exists, it must reside in register x8. Done.",
        3: "Nothing of the sort is said here at all.",
    }
    ranking = window_ranking(TERMS, IDF, texts, [1, 2, 3], size=2)
    assert [cid for cid, _ in ranking] == [2, 1]  # 3 has no query term: left out
    assert ranking[0][1] == 1.0 and 0 < ranking[1][1] < 1.0


def test_stems_match_word_forms_and_ties_keep_the_given_order() -> None:
    texts = {7: "Registers and pointers.", 5: "Registers and pointers."}
    ranking = window_ranking(
        ["pointer", "registering"], {"pointer": 1, "registering": 1}, texts, [7, 5]
    )
    assert [cid for cid, _ in ranking] == [7, 5] and ranking[0][1] == 1.0
    assert window_ranking([], {}, texts, [7, 5]) == []


def test_a_short_latin_term_is_a_word_of_its_own_and_an_unspaced_one_is_found_anywhere() -> None:
    terms, idf = ["1201", "g", "5"], {"1201": 2.0, "g": 1.0, "5": 1.0}
    texts = {
        1: "A violation of section 1201 brings penalties of up to $500,000 for a first offense.",
        2: "New section 1201(g)(5) requires a report to the Congress.",
    }
    ranking = window_ranking(terms, idf, texts, [1, 2])
    assert [cid for cid, _ in ranking] == [2, 1] and ranking[0][1] == 1.0
    assert ranking[1][1] == 0.5  # "offense" and "500,000" hold no "g" and no "5"
    cjk = window_ranking(["兎", "時計"], {"兎": 1, "時計": 1}, {3: "白い兎が懐中時計を見た。"}, [3])
    assert cjk == [(3, 1.0)]


def test_best_window_says_where_its_sentences_are() -> None:
    text = "Intro text here. If a frame pointer exists, it is in register x8. Done here."
    (window,) = best_windows(TERMS, IDF, {1: text}, [1], size=1).values()
    assert text[window.start : window.end] == "frame pointer exists, it is in register"
    # Of three-sentence windows with every term, the tightest: not the one opening on "Intro".
    (window,) = best_windows(TERMS, IDF, {1: text}, [1], size=3).values()
    assert text[window.start : window.end] == "frame pointer exists, it is in register"
    start, end = passage_span(text, (window.start, window.end), 55)
    assert text[start:end] == "If a frame pointer exists, it is in register x8."


def test_a_sentence_too_long_to_read_whole_is_read_around_its_matches() -> None:
    text = "Words that say nothing in particular, " * 30 + "the frame pointer lives in x8 " * 2
    text += "and then more of the same nothing " * 20 + "."
    found = best_windows(TERMS, IDF, {1: text}, [1])
    start, end = passage_span(text, (found[1].start, found[1].end), 300)
    assert end - start <= 300 and "frame pointer lives in x8" in text[start:end]
    assert text[start - 1] == " " and text[end] == " "  # whole words


SENTENCES = [f"Sentence number {n} says something of no interest at all." for n in range(10)]


def _span(text: str, start: int, end: int) -> list[int]:
    """Which of SENTENCES text[start:end] holds, whole."""
    return [n for n, s in enumerate(SENTENCES) if s in text[start:end]]


def test_passage_span_widens_the_window_by_whole_neighbours_after_then_before() -> None:
    text = " ".join(SENTENCES)
    at = text.index(SENTENCES[5])
    window = (at + 9, at + 15)  # a word in it
    size = len(SENTENCES[0]) + 1
    assert _span(text, *passage_span(text, window, size * 3)) == [4, 5, 6]
    assert _span(text, *passage_span(text, window, size * 2)) == [5, 6]
    start, end = passage_span(text, window, size * 2)
    assert text[start:end] == f"{SENTENCES[5]} {SENTENCES[6]}"  # no partial sentence
    # At the end of the chunk it can only grow backwards.
    last = text.index(SENTENCES[9])
    tail = passage_span(text, (last, last + 8), size * 3)
    assert _span(text, *tail) == [7, 8, 9]
    # No window (no query term in the chunk): its opening sentences.
    assert _span(text, *passage_span(text, None, size * 2)) == [0, 1]
    # A window longer than the limit is cut to it; a short chunk is read whole.
    wide = passage_span(text, (0, len(text)), 100)
    assert wide[1] - wide[0] <= 100 and text[wide[0] - 1] == text[wide[1]] == " "
    assert passage_span("Short.", None, 600) == (0, 6)
    assert passage_span(text, window, 0) == (0, len(text))
