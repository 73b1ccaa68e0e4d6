"""The citation check: realistic sentences against real passages (the thresholds), and how an
answer is rewritten when citations do not hold."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from quire.config import Settings
from quire.embed import make_embedder
from quire.embed.base import Embedder
from quire.synthesis.citecheck import UNSUPPORTED, SourceText, check, notice, verbatim
from tests.fakes.embedder import CountingEmbedder
from tests.synthesis.citecheck_cases import (
    CASES,
    CHESHIRE_CAT,
    DMCA_HULLS,
    DMCA_INTRO,
    LIBRARY,
    LITTLE_BILL,
    MUSHROOM,
    RABBIT_HOLE,
    TRIAL,
)

ALICE = LIBRARY["Alice's Adventures in Wonderland"]


@pytest.fixture(scope="module")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Embedder]:
    emb = make_embedder(Settings(data_dir=tmp_path_factory.mktemp("embed") / "data"))
    yield emb
    emb.close()


def _background(source: SourceText) -> list[str]:
    return [p.text for passages in LIBRARY.values() if source in passages for p in passages]


def test_the_examples_are_judged_as_written(embedder: Embedder) -> None:
    kept_wrongly, dropped_wrongly = [], []
    for sentence, source, supported in CASES:
        result = check(f"{sentence} [1]", {1: source}, embedder, background=_background(source))
        (verdict,) = result.verdicts
        if verdict.supported and not supported:
            kept_wrongly.append((sentence, verdict))
        elif supported and not verdict.supported:
            dropped_wrongly.append((sentence, verdict))
    assert len(CASES) >= 80 and sum(s for *_, s in CASES) >= 45
    # No wrong citation is kept. Two paraphrases that share few words with their passage
    # ("insane" for "mad", "intermediaries … pass data along" for "a data conduit") are lost:
    # their words and meaning come no closer than wrong citations' do.
    assert kept_wrongly == []
    assert sorted(s for s, _ in dropped_wrongly) == [
        "Everyone in that place is insane, the Cat claimed.",
        "Online intermediaries get protection from liability when they only pass data along.",
    ]


def test_wrong_citations_are_removed_and_a_sentence_left_without_one_is_marked(
    embedder: Embedder,
) -> None:
    sources = {1: RABBIT_HOLE, 2: LITTLE_BILL, 3: MUSHROOM}
    answer = (
        "The White Rabbit took a watch out of its waistcoat-pocket [1][3]. "
        "It mistook Alice for its housemaid, Mary Ann [2]. "
        "The Caterpillar was exactly four inches high [3]."
    )
    result = check(answer, sources, embedder, background=[p.text for p in ALICE])
    assert result.text == (
        "The White Rabbit took a watch out of its waistcoat-pocket [1]. "
        "It mistook Alice for its housemaid, Mary Ann [2]. "
        f"The Caterpillar was exactly four inches high {UNSUPPORTED}."
    )
    report = result.report()
    assert (report.checked, report.kept, report.dropped, report.method) == (4, 2, 2, "checked")
    assert [(d.n, d.reason) for d in report.dropped_citations] == [
        (3, "the source does not contain rabbit, white"),
        (3, "the source does not contain 4"),
    ]
    assert report.dropped_citations[1].claim == "The Caterpillar was exactly four inches high"
    assert notice(report) == (
        "2 of 4 citations were removed: the cited source does not say what the sentence "
        f"claims (sentences left without one are marked {UNSUPPORTED})."
    )


def test_each_part_of_a_sentence_is_checked_against_its_own_citation() -> None:
    sources = {1: RABBIT_HOLE, 2: TRIAL}
    answer = (
        "The Rabbit took a watch out of its waistcoat-pocket [1], and at the trial it blew "
        "five blasts on the trumpet [2]."
    )
    result = check(answer, sources, None, background=[p.text for p in ALICE])
    assert [(v.n, v.supported) for v in result.verdicts] == [(1, True), (2, False)]
    assert result.verdicts[1].claim == "and at the trial it blew five blasts on the trumpet"
    # The sentence keeps a citation, so it is not marked.
    assert result.text == (
        "The Rabbit took a watch out of its waistcoat-pocket [1], and at the trial it blew "
        "five blasts on the trumpet."
    )


def test_sources_cited_together_may_share_a_claim_but_must_hold_its_numbers() -> None:
    sources = {1: DMCA_INTRO, 2: DMCA_HULLS, 3: CHESHIRE_CAT}
    background = [p.text for p in LIBRARY["The Digital Millennium Copyright Act of 1998"]]
    shared = "The DMCA, signed in 1998, protects vessel hulls for ten years [1][2]."
    result = check(shared, sources, None, background=background)
    assert [v.supported for v in result.verdicts] == [True, True]
    assert result.text == shared
    # A third source that holds none of it goes; so do all when a number is in none of them.
    wrong = check(shared.replace("[1][2]", "[1][2][3]"), sources, None, background=background)
    assert [v.supported for v in wrong.verdicts] == [True, True, False]
    assert wrong.text == shared
    twelve = check(shared.replace("ten", "12"), sources, None, background=background)
    assert [v.supported for v in twelve.verdicts] == [False, False]
    assert twelve.text.endswith(f"for 12 years {UNSUPPORTED}.")


def test_numbers_are_compared_as_numbers_and_names_whole() -> None:
    source = SourceText(
        "The fee rose to 1,200 dollars in seven years, said Mr. Holloway.", "A Report"
    )
    ok = "The fee was 1200 dollars after 7 years, according to Holloway [1]."
    assert check(ok, {1: source}).verdicts[0].supported
    name = check("The fee was 1200 dollars, according to Halloway [1].", {1: source})
    assert name.verdicts[0].reason == "the source does not contain halloway"
    # The source's place counts: an answer may name the report or its page.
    titled = check("The Report says the fee rose to 1200 dollars [1].", {1: source})
    assert titled.verdicts[0].supported
    # A list's numbering and a sentence's first word are neither numbers nor names.
    listed = check("3. Fees rose to 1,200 dollars [1].", {1: source})
    assert listed.verdicts[0].supported


def test_marks_that_open_the_next_sentence_cite_the_one_before() -> None:
    answer = "The Caterpillar was exactly three inches high. [1] It smoked a hookah."
    result = check(answer, {1: MUSHROOM}, None, background=[p.text for p in ALICE])
    assert result.verdicts[0].claim == "The Caterpillar was exactly three inches high."
    assert result.verdicts[0].supported and result.text == answer


def test_a_citation_and_a_full_stop_end_a_sentence_whatever_follows() -> None:
    # A model quoting from mid-sentence starts the next one in lower case: the sentence
    # splitter alone would see one sentence, and the wrong one would not be marked.
    answer = (
        "The Caterpillar was exactly four inches high [1]. the Caterpillar told her one side "
        "of the mushroom would make her grow taller [1]."
    )
    result = check(answer, {1: MUSHROOM}, None, background=[p.text for p in ALICE])
    assert [v.supported for v in result.verdicts] == [False, True]
    assert result.text.startswith(f"The Caterpillar was exactly four inches high {UNSUPPORTED}.")


def test_an_invented_source_number_is_unsupported() -> None:
    result = check("The watch came out of its pocket [1]. See also [9].", {1: RABBIT_HOLE})
    assert [(v.n, v.supported, v.reason) for v in result.verdicts] == [
        (1, True, "supported"),
        (9, False, "there is no source [9]"),
    ]


def test_in_german_capitalised_nouns_are_not_names() -> None:
    source = SourceText("Das Kaninchen zog eine Uhr aus der Westentasche und lief davon.")
    claim = "Das weiße Kaninchen zog eine Taschenuhr aus seiner Westentasche [1]."
    assert check(claim, {1: source}).verdicts[0].supported
    english = check("The Rabbit took out a Taschenuhr from its pocket [1].", {1: source})
    assert english.verdicts[0].reason == "the source does not contain rabbit, taschenuhr"


def test_the_embedder_is_asked_only_when_words_do_not_settle_it() -> None:
    embedder = CountingEmbedder()
    background = [p.text for p in ALICE]
    check("The Caterpillar was exactly three inches high [1].", {1: MUSHROOM}, embedder)
    assert embedder.texts == []  # its words are all in the source
    result = check(
        "Alice worried that she kept changing size [1].",
        {1: TRIAL},
        embedder,
        background=background,
    )
    assert embedder.texts and embedder.texts[0] == "Alice worried that she kept changing size"
    assert "about something else" in result.verdicts[0].reason


def test_an_answer_without_citations_is_left_alone() -> None:
    result = check("The sources do not answer this question.", {1: RABBIT_HOLE})
    assert result.text == "The sources do not answer this question." and result.verdicts == []
    assert result.report().checked == 0 and notice(result.report()) is None


def test_extractive_quotes_hold_by_construction() -> None:
    answer = "*Extractive answer.*\n\n- “One.” [1]\n- “Two.” [1]\n- “Three.” [2][3]\n"
    report = verbatim(answer)
    assert (report.checked, report.kept, report.dropped, report.method) == (4, 4, 0, "verbatim")


def test_numbers_are_compared_as_written_in_figures_or_words() -> None:
    """One reading of numbers for the citation check and the extractive answers
    (text/numbers.py): separators, leading zeros, times and hexadecimal, never the digits of
    an identifier."""
    from quire.text.numbers import counts_in, figures

    assert figures("1,200 and 1200, 3,5 or 007 at 8:35; 0x5f") == {
        "1200",
        "3.5",
        "7",
        "8:35",
        "0x5f",
    }
    assert figures("ILP32E and PUSH0 and x8") == set()
    assert counts_in("I opened fourteen nests, one by one") == {"14"}
