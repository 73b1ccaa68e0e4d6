"""Extractive answers: sentence splitting and choosing what to quote."""

from __future__ import annotations

from quire.retrieval.search import Hit
from quire.synthesis import extractive


def _hit(text: str, chunk_id: int = 1, page: int = 1) -> Hit:
    return Hit(
        chunk_id=chunk_id,
        document_id=1,
        title="T",
        kind="pdf",
        filename="t.pdf",
        page=page,
        heading_path="",
        text=text,
        highlights=[],
        ranks={},
        scores={},
        fused=0.0,
    )


def test_sentences_are_exact_substrings_and_keep_abbreviations() -> None:
    text = (
        "Dr. Smith went to Washington. He arrived at 3.5 p.m. on Monday! "
        'Then "What?" he said.\n\nJ. R. R. Tolkien wrote it. e.g. this stays. The end'
    )
    parts = extractive.split_sentences(text)
    assert [s for _, s in parts] == [
        "Dr. Smith went to Washington.",
        "He arrived at 3.5 p.m. on Monday!",
        'Then "What?" he said.',
        "J. R. R. Tolkien wrote it. e.g. this stays.",
        "The end",
    ]
    assert all(text[o : o + len(s)] == s for o, s in parts)


def test_select_prefers_sentences_with_the_rare_query_terms() -> None:
    hits = [
        _hit(
            "The harbour was busy that year. Ships came and went every day of the week. "
            "The lighthouse keeper logged every tide in a leather book.",
            1,
        ),
        _hit(
            "Nothing about the coast here, only accounts of the harvest and the weather "
            "in the valley. The harvest was poor.",
            2,
            page=5,
        ),
    ]
    chosen = extractive.select("Who logged the tides at the lighthouse?", hits, None, count=3)
    assert chosen[0].text == "The lighthouse keeper logged every tide in a leather book."
    assert all(c.relevant for c in chosen)
    # No sentence of the second passage shares a term with the question.
    assert all(c.hit_index == 0 for c in chosen)


def test_select_returns_nothing_when_nothing_matches() -> None:
    hits = [_hit("Completely unrelated words about gardening and roses in spring time.")]
    assert extractive.select("quantum chromodynamics lattice", hits, None) == []


def test_repeated_sentences_from_overlapping_chunks_are_quoted_once() -> None:
    s = "The lighthouse keeper logged every tide in a leather book."
    hits = [_hit(f"Intro words here today. {s}", 1), _hit(f"{s} More words follow after.", 2)]
    chosen = extractive.select("lighthouse keeper tide", hits, None)
    assert [c.text for c in chosen].count(s) == 1


def test_fragments_cut_by_chunk_boundaries_rank_below_whole_sentences() -> None:
    hits = [
        _hit(
            "keeper logged the tide every day. Later the lighthouse keeper wrote down each tide "
            "in his book. The lighthouse keeper had to log the tide and",
        )
    ]
    chosen = extractive.select("lighthouse keeper tide", hits, None, count=3)
    assert chosen[0].text == "Later the lighthouse keeper wrote down each tide in his book."
    assert chosen[0].complete and not any(c.complete for c in chosen[1:])
