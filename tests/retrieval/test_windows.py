"""The window stage: candidates ranked by their best few consecutive sentences."""

from __future__ import annotations

from quire.retrieval.windows import window_ranking

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
