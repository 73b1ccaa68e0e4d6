"""Extractive answers: sentence splitting and choosing what to quote."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pytest

from quire.retrieval.hits import Hit
from quire.retrieval.planner import heuristic_plan
from quire.retrieval.sentences import split_sentences
from quire.synthesis import extractive
from quire.synthesis import order as ordering
from quire.synthesis.asks import Asks


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
    parts = split_sentences(text)
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
    chosen = extractive.select("Who logged the tides at the lighthouse?", hits, None)
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
    chosen = extractive.select("lighthouse keeper tide", hits, None)
    assert chosen[0].text == "Later the lighthouse keeper wrote down each tide in his book."
    assert chosen[0].complete and not any(c.complete for c in chosen[1:])


def test_a_bulleted_item_is_whole() -> None:
    """A list item after its bullet (a book's reading list, a Markdown list) is a whole unit,
    not a fragment; a bullet does not make a lower-case piece whole."""
    for item in ("• Strogatz, Sync.", "- Cancel within 30 days for a refund.", "▪ Levy, Life."):
        assert extractive.Sentence(item, 0, 0).complete, item
    for piece in ("• and the rest of it.", "-5 degrees and falling"):
        assert not extractive.Sentence(piece, 0, 0).complete, piece


def test_table_rows_and_short_lines_are_units_of_their_own() -> None:
    text = (
        "The unit names are listed below.\n"
        "100 Wei\n109 Gwei\nSzabo\n1015 Finney\n1018 Ether\n\n"
        "| Oregon | 4,273,586 | 95,997 sq mi |\n| Idaho | 1,939,033 | 82,643 sq mi |"
    )
    units = [u for _, u in split_sentences(text)]
    assert "1015 Finney" in units and "| Oregon | 4,273,586 | 95,997 sq mi |" in units
    assert all(text[o : o + len(u)] == u for o, u in split_sentences(text))


def test_the_unit_holding_what_is_asked_for_and_the_identifier_comes_first() -> None:
    hits = [
        _hit(
            "The dynamic tags are listed in the table. Each tag has a value. "
            "DT_RISCV_VARIANT_CC has the value 0x70000001 in the table of tags.",
        )
    ]
    chosen = extractive.select("What value does the DT_RISCV_VARIANT_CC tag have?", hits, None)
    assert chosen[0].text.startswith("DT_RISCV_VARIANT_CC has the value 0x70000001")
    assert chosen[0].identifier == 1.0
    assert Asks.of("How many users are there?").gives("It has 4039 users.") == 1.0
    assert Asks.of("How many users are there?").gives("It has many users.") == 0.0
    assert Asks.of("When did it start?").gives("It started in 1998.") == 1.0
    assert Asks.of("Why is the sky blue?").gives("Scattering.") == 0.5


def test_only_units_that_score_nearly_as_well_join_and_from_two_passages_at_most() -> None:
    s = "The lighthouse keeper logged every tide in a leather book."
    hits = [
        _hit(f"{s} Nothing else here at all today.", 1, page=1),
        _hit("The lighthouse keeper logged the tide every day of the year.", 2, page=2),
        _hit("Each tide the lighthouse keeper logged was written down.", 3, page=3),
        _hit("A keeper kept the lighthouse.", 4, page=4),
    ]
    chosen = extractive.select("lighthouse keeper logged tide", hits, None, keep_ratio=0.5)
    assert chosen[0].text == s
    assert len({c.hit_index for c in chosen}) <= extractive.MAX_SOURCES
    best = chosen[0].score
    assert all(c.score >= 0.5 * best for c in chosen)


def test_a_unit_of_the_leads_page_supports_it_at_seven_tenths_of_its_score() -> None:
    """The lead's page gives its context (0.78 of the lead here joins); another page must
    score nearly as well (this one's 0.72 does not), and a unit far below does not join."""
    page = (
        "The lighthouse keeper logged every tide in a leather book. Gulls nested on the rocks "
        "below. In winter the keeper logged the hour of each high water too."
    )
    hits = [
        _hit(page, 1, page=1),
        _hit("A keeper on the next island logged the weather each morning.", 2, page=2),
    ]
    chosen = extractive.select("What did the lighthouse keeper log?", hits, None)
    assert [c.text for c in chosen] == [
        "The lighthouse keeper logged every tide in a leather book.",
        "In winter the keeper logged the hour of each high water too.",
    ]
    assert 0.7 <= chosen[1].score / chosen[0].score < 0.8


def test_a_sentence_cut_by_the_chunk_is_quoted_whole_from_its_page() -> None:
    page = "Intro words here. The keeper logged every tide in a leather book. The end came."
    hit = _hit("logged every tide in a leather book. The end came.")
    chosen = extractive.select("keeper logged tide", [hit], None, pages={(1, 1): page})
    assert chosen[0].text == "The keeper logged every tide in a leather book."
    assert chosen[0].complete


def test_japanese_and_chinese_passages_are_quoted_by_the_sentence_that_answers() -> None:
    ja = _hit(
        "ウエストは新聞を読んでいた。一九一四年の七月二十四日、ウエストはカールトン・ホテルへ"
        "朝食をとりに出かけた。「本当か？」と給仕が聞いた。"
    )
    chosen = extractive.select(
        "ウエストが朝食をとりにホテルへ出かけたのは何月何日でしたか？", [ja], None
    )
    assert chosen and chosen[0].text.startswith("一九一四年の七月二十四日")
    assert chosen[0].text.endswith("出かけた。") and chosen[0].complete
    assert ja.text[chosen[0].start :].startswith(chosen[0].text)  # quoted as written
    zh = _hit("話說這件大案。這件案發生在雍正六、七年間，地方在廣東。眾人都說不知。")
    chosen = extractive.select("這件大案發生在哪幾年？", [zh], None)
    assert chosen and "雍正六、七年" in chosen[0].text and "眾人" not in chosen[0].text
    assert Asks.of("何人いましたか？").gives("三人いた。") == 1.0  # CJK numerals count


def test_a_japanese_question_asking_what_hour_is_led_by_the_hour() -> None:
    """何時 asks for an hour: the sentence with 午前三時 answers, not the one with 日 (a day)
    that any date question took for a date; 何月何日 still takes a whole date."""
    ja = _hit(
        "次の日の朝、手紙が到着し、震える指がその封をちぎった。親愛なるお嬢さま。"
        "私は午前三時にこの手紙を書いています。ロンドンは墓場のように静かです。"
    )
    chosen = extractive.select(
        "二通目の手紙によると、書き手はそれを夜中の何時に書いていましたか？", [ja], None
    )
    assert chosen and chosen[0].text == "私は午前三時にこの手紙を書いています。"
    hour = Asks.of("何時に書いていましたか？")
    assert hour.gives("午前三時に書いた。") == 1.0 and hour.gives("次の日の朝。") == 0.0
    assert hour.gives("一通目の手紙。") == 0.5  # a number, not the hour asked for
    day = Asks.of("ウエストが出かけたのは何月何日でしたか？")
    assert day.gives("七月二十四日に出かけた。") == 1.0
    schools = Asks.of("冊子「リーダーシップ」は何校に発送する想定になっていますか？")
    assert schools.kind == "number"  # 校 (schools) counts as 人 (people) does
    assert schools.gives("発送学校数は365校を想定している。") == 1.0
    assert schools.gives("配布を年間4回で想定している。") == 0.5


def test_a_japanese_where_or_who_question_is_given_a_name_in_katakana() -> None:
    """Japanese writes foreign people and places in katakana: a sentence with one the question
    does not have gives the name asked for; the question's own (the countess) does not."""
    asks = Asks.of("ソフィー・ド・グラフ伯爵夫人の現住所はどこですか？")
    assert asks.kind == "name"
    assert asks.gives("バターシー・パーク街に住んでいる。") == 1.0
    assert asks.gives("ソフィー・ド・グラフ伯爵夫人が来た。") == 0.5
    assert asks.gives("彼女は東京に住んでいる。") == 0.5  # kanji: no sign either way
    assert Asks.of("这个人住在哪里？").gives("住在カナダ。") == 0.5  # Chinese: no such rule


def test_a_sentence_made_only_of_the_questions_words_never_leads() -> None:
    hits = [
        _hit(
            "Who logged the tides at the lighthouse? The tides at the lighthouse were logged. "
            "Margaret Hale logged them every morning in a leather book."
        )
    ]
    chosen = extractive.select("Who logged the tides at the lighthouse?", hits, None)
    assert chosen[0].text.startswith("Margaret Hale")
    assert all(c.novelty > 0 for c in chosen)


def test_the_sentence_after_the_one_that_matches_the_question_can_answer_it() -> None:
    page = (
        "The harbour was rebuilt twice. In 1887 the old pier at Whitby collapsed in a storm. "
        "A schooner named Demeter had rammed it the night before. The town slept on."
    )
    hit = _hit(page)
    chosen = extractive.select(
        "What was the ship called that caused the old pier at Whitby to collapse?", [hit], None
    )
    assert "Demeter" in " ".join(c.text for c in chosen)
    assert len(chosen) <= 1 + extractive.SUPPORTING


def test_a_labelled_value_or_a_row_with_its_header_is_quoted_whole() -> None:
    text = (
        "The invoice lists the goods sold.\n\n"
        "Model: BA graph · Clustering: 0.037 · Path length: 2.51\n"
        "Model: WS graph · Clustering: 0.63 · Path length: 3.2\n\n"
        "Termin płatności: 2021-05-03"
    )
    units = [u for _, u in split_sentences(text)]
    assert "Model: BA graph · Clustering: 0.037 · Path length: 2.51" in units
    chosen = extractive.select("How clustered is the BA graph model?", [_hit(text)], None)
    assert chosen[0].text == "Model: BA graph · Clustering: 0.037 · Path length: 2.51"
    assert chosen[0].complete


def test_a_paragraph_set_one_line_apart_reads_as_sentences() -> None:
    text = (
        "Tag_RISCV_stack_align records the N-byte stack alignment for this object. The default "
        "value is 16 for\n\nRV32I or RV64I, and 4 for RV32E.\n\nMerge Policy\n\nThe linker checks."
    )
    units = [u for _, u in split_sentences(text)]
    assert "The default value is 16 for\n\nRV32I or RV64I, and 4 for RV32E." in units
    assert "Merge Policy" in units and "The linker checks." in units
    # A long heading in sentence case ends in a lower-case word too; the capitalised word
    # after it starts a sentence. A line that stops at "by" or a comma still runs on.
    heading = (
        "Retour sur les revues de rang « 1 » où les chercheurs français placent quelques articles"
        "\n\nDe notre étude, il ressort que 6 revues sur 57 accueillent un Français."
    )
    assert len([u for _, u in split_sentences(heading)]) == 2
    for runs_on in (
        "The treaty that ended the long war between the two kingdoms was finally signed by"
        "\n\nAlan Turing and his colleagues.",
        "The treaty that ended the long war between the two kingdoms was finally signed,"
        "\n\nAs the chronicle says, in spring.",
    ):
        assert len(split_sentences(runs_on)) == 1, runs_on


def test_what_a_question_asks_for() -> None:
    assert Asks.of("Which e_machine value identifies an ELF file?").kind == "number"
    assert Asks.of("Which opcode byte is assigned to PUSH0?").gives("0x5f PUSH0") == 1.0
    # The 0 of PUSH0 is part of a name, not a number the question gave.
    assert Asks.of("Which opcode byte is assigned to PUSH0?").gives("PUSH0 pushes zero") == 0.0
    partner = Asks.of("What do the players get when one betrays a partner who cooperates?")
    assert partner.kind == "other"  # a relative "who" and "when" ask for nothing
    choice = Asks.of("Is a plain char signed or unsigned in the C ABI?")
    assert choice.novelty("char is unsigned.") == 1.0 and choice.gives("char is signed.") == 1.0
    assert choice.gives("char is signed or unsigned by platform.") == 0.0
    assert Asks.of("How many users are there?").novelty("There are many users there.") == 0.0
    assert (
        Asks.of("If a function uses a frame pointer, which register holds it?").gives(
            "it must reside in x8 (s0)"
        )
        == 1.0
    )


def test_a_number_question_is_answered_by_the_sentence_that_holds_a_number() -> None:
    asks = Asks.of("How many nests of the slave-making ant did Darwin open himself?")
    assert asks.gives("I opened fourteen nests of F. sanguinea.") == 1.0  # a number in words
    assert asks.gives("Darwin opened the nests himself.") == 0.0
    # A number the question itself says ("the two players") is not an answer, nor a name.
    two = Asks.of("How much do the two players get when one betrays the other?")
    assert two.gives("Both players get two points.") == 0.0 and "two" not in two.numbers
    assert asks.gives("At least half of the nests were opened.") == 0.0  # "half" is no answer
    # "When did …" asks for a date; "When the run starts, what …" does not.
    assert Asks.of("When did Darwin open the nests?").kind == "date"
    assert Asks.of("When the run starts from defectors, what score does it reach?").kind != "date"
    # ... and so does a question after its condition: "If …, when is it released?"
    late = Asks.of("If office playtesting goes well, when is Factorio 0.17 meant to be released?")
    assert late.kind == "date" and late.gives("We will aim to release the week of 25th February.")
    assert not late.gives("We will push new things into the 0.17 releases.")
    hit = _hit(
        "Darwin opened the nests of the slave-making ant himself, with great care. "
        "He found slaves in all of the nests he opened, fourteen in number. The rest is lost."
    )
    chosen = extractive.select("How many nests of the slave-making ant did Darwin open?", [hit])
    assert "fourteen" in chosen[0].text
    nothing = [_hit("Darwin opened nests.")]
    assert extractive.select("How many nests did Darwin open?", nothing) == []


def test_search_order_puts_the_passage_whose_sentence_answers_first() -> None:
    """Without a cross-encoder, a search's first hits go by their best sentence: the passage
    that says how much the transaction costs outranks two that only repeat the question's
    words; hits after the first ``top`` keep their place."""
    restates = _hit("How much gas is Gtransaction? Gtransaction gas.", 1, page=4)
    echo = _hit("Much of the gas is Gtransaction gas, as much gas is.", 2, page=5)
    answers = _hit(
        "Name: Gtransaction · Value: 21000 · Description: Paid for every transaction.", 3, 28
    )
    tail = _hit("Appendix.", 4, page=40)
    ordered = ordering.by_best_sentence(
        "How much gas is Gtransaction?", [restates, echo, answers, tail], None, top=3
    )
    assert [h.chunk_id for h in ordered] == [3, 1, 2, 4]
    assert ordering.by_best_sentence("gas", [], None) == []


def test_search_order_for_a_number_puts_first_the_passage_the_answer_leads_with() -> None:
    """A number question's answer is led by the best unit that holds a number; search's order
    puts that unit's passage first too, over a passage that repeats more of the question's
    words without one (RISC-V's "What relocation number is R_RISCV_CALL_PLT?": the table row
    with 19 led the answer from the fifth hit)."""
    question = "What relocation number does the linker use for a procedure call through the PLT?"
    words = _hit(
        "The linker uses a relocation for a procedure call through the PLT, as the linker does.",
        1,
        page=35,
    )
    row = _hit("Enum: 19 · Reloc Type: CALL_PLT · Description: procedure call via PLT.", 2, 30)
    chosen = extractive.select(question, [words, row])
    assert "19" in chosen[0].text
    ordered = ordering.by_best_sentence(question, [words, row], None)
    assert [h.chunk_id for h in ordered] == [2, 1]


class _TopicEmbedder:
    """Vectors by one word: a text with "methodology" (and the question) points one way,
    every other text the other, so a test knows each sentence's cosine to the question."""

    name = "test:topic"
    dim = 2

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.array(
            [
                [1.0, 0.0] if i == 0 or "methodology" in t.lower() else [0.0, 1.0]
                for i, t in enumerate(texts)
            ],
            dtype=np.float32,
        )

    def close(self) -> None:
        pass


def test_a_page_cut_in_two_passages_is_judged_as_one() -> None:
    """The page's heading matches the question in meaning; the sentence that answers is in
    the page's second passage. That passage is judged by its own best sentence and the page's
    best cosine, so it leads; the heading's passage comes after the other page (the first
    places go to different pages)."""
    other = _hit("Journals by publisher: the count was 57 titles in all.", 1, page=6)
    heading = _hit("Methodology of our study of the authors of the journals.", 2, page=5)
    answer = _hit("For example, the fifteen Elsevier journals ranked 1 are close.", 3, page=5)
    ordered = ordering.by_best_sentence(
        "How many Elsevier journals ranked 1 do the authors cite?",
        [other, heading, answer],
        _TopicEmbedder(),  # type: ignore[arg-type]
    )
    assert [h.chunk_id for h in ordered] == [3, 1, 2]


def test_the_first_five_hits_are_five_pages() -> None:
    """Two passages of page 1 both say what the transaction costs; the other pages only
    mention gas. Page 1 leads with its better passage, the next four places go to four other
    pages, then its second passage, then the sixth page; hits after ``top`` keep their place."""
    hits = [
        _hit("Gtransaction costs 21000 gas, paid for every transaction.", 1, page=1),
        _hit("Each transaction pays Gtransaction, which is 21000 gas.", 2, page=1),
        *(_hit(f"Gas is counted in step {n}.", n + 1, page=n) for n in range(2, 7)),
        _hit("Gas.", 8, page=9),
    ]
    ordered = ordering.by_best_sentence("How much gas does Gtransaction cost?", hits, None, top=7)
    assert ordering.DISTINCT == 5
    assert [h.chunk_id for h in ordered][:1] + [h.page for h in ordered][1:5] == [1, 2, 3, 4, 5]
    assert [h.chunk_id for h in ordered][5:] == [2, 7, 8]


def test_a_page_close_in_meaning_that_gives_nothing_asked_yields_to_one_that_does() -> None:
    """Both sentences are as close to the question in meaning; the first passage shares all
    its words but says no time, the second says one ("within five seconds"). Asked how
    quickly, the page that gives a time leads; the first page's closeness counts half."""
    intro = _hit(
        "The methodology starts most scheduled tasks quickly, safely and fairly across regions.",
        1,
        page=2,
    )
    answer = _hit("Under this methodology, 95% of jobs begin within five seconds.", 2, page=5)
    ordered = ordering.by_best_sentence(
        "How quickly does the methodology start most scheduled tasks?",
        [intro, answer],
        _TopicEmbedder(),  # type: ignore[arg-type]
    )
    assert [h.chunk_id for h in ordered] == [2, 1]
    # A question that asks for nothing in particular keeps the closer match of words first.
    ordered = ordering.by_best_sentence(
        "Describe the methodology for scheduled tasks.",
        [intro, answer],
        _TopicEmbedder(),  # type: ignore[arg-type]
    )
    assert [h.chunk_id for h in ordered] == [1, 2]


def test_a_table_row_the_question_looks_up_leads() -> None:
    """The question names a header of the row ("block number") and one of its values
    ("Shanghai", glued to the subscript F the PDF set before it): that row leads, over a
    footnote that shares more of the question's words and gives another fork's number."""
    footnote = _hit(
        "Note that while the Paris, Shanghai, and every upcoming forks activated at a given "
        "block number (e.g. 15,537,394 for Paris), the trigger was not the block number.",
        1,
        page=3,
    )
    rows = _hit(
        "Name: FParis · First Block Number: 15537394\n"
        "Name: FShanghai · First Block Number: 17034870",
        2,
        page=3,
    )
    question = "At what block number did the Shanghai upgrade activate on Ethereum mainnet?"
    chosen = extractive.select(question, [footnote, rows], None)
    assert chosen[0].text == "Name: FShanghai · First Block Number: 17034870"


def test_a_row_is_looked_up_by_whichever_cell_names_its_key() -> None:
    """An opcode table sets the value first and the mnemonic second: "the opcode value of
    PREVRANDAO" names the row by its second cell and asks for its first. That row leads, over
    an earlier page's sentence on the same subject that gives another number."""
    prose = _hit(
        "Since the Paris fork the opcode returns the beacon chain's randomness, a value of 32 "
        "bytes.",
        1,
        page=6,
    )
    rows = _hit(
        "Value: 0x43 · Mnemonic: NUMBER · δ: 0 · α: 1 · Description: Get the current block’s "
        "number.\n"
        "Value: 0x44 · Mnemonic: PREVRANDAO · δ: 0 · α: 1 · Description: Get the latest RANDAO "
        "mix.",
        2,
        page=34,
    )
    chosen = extractive.select("What opcode value is assigned to PREVRANDAO?", [prose, rows])
    assert chosen[0].text.startswith("Value: 0x44 · Mnemonic: PREVRANDAO")


def test_a_description_naming_the_question_words_does_not_make_its_row_looked_up() -> None:
    """The program header row's long "Meaning" uses the question's words (RISC-V, ELF) and
    its "Value" header is what the question asks for; it is still not the row the question
    names, and the file header's sentence answers."""
    header = _hit(
        "e_machine Identifies the machine this ELF file targets. Always contains EM_RISCV "
        "(243) for RISC-V ELF files.",
        1,
        page=26,
    )
    row = _hit(
        "Name: PT_RISCV_ATTRIBUTES · Value: 0x70000003 · Meaning: RISC-V ELF attribute section.",
        2,
        page=41,
    )
    chosen = extractive.select(
        "Which e_machine value identifies an ELF file as RISC-V?", [header, row]
    )
    assert chosen[0].text == "Always contains EM_RISCV (243) for RISC-V ELF files."
    assert all(not s.text.startswith("Name: PT_RISCV") for s in chosen)


def test_a_bibliography_entry_does_not_answer_what_it_names() -> None:
    entry = dataclasses.replace(
        _hit("EIP-3529: Reduction in refunds, April 2021.", 1, page=18), heading_path="References"
    )
    body = _hit(
        "The max refundable proportion of gas was reduced from one half to one fifth by "
        "EIP-3529 in the London release.",
        2,
        page=10,
    )
    question = "What did EIP-3529 change about the share of gas that can be refunded?"
    assert extractive.select(question, [entry, body], None)[0].text.startswith("The max")
    # Unless the question asks about the references themselves.
    asked = "Which reference is cited for EIP-3529's reduction in refunds?"
    assert extractive.select(asked, [entry, body], None)[0].text.startswith("EIP-3529: Red")


def test_a_code_like_name_is_new_unless_the_question_has_it_whole() -> None:
    asks = Asks.of("Which Traefik image tag does the SURF Langflow compose file pin?")
    assert asks.kind == "name"
    assert asks.gives("image: traefik:v2.11") == 1.0  # the tag, though "traefik" is asked
    assert asks.gives("Defines stack: Traefik, Langflow.") == 0.0  # only the question's names
    assert Asks.of("What does EIP-3529 change?").gives("EIP-3529 is a change.") == 0.5


def test_an_acronym_matches_the_words_it_stands_for() -> None:
    hits = [
        _hit("The DWARF format follows the standard DWARF specification for registers.", 1),
        _hit("Each CSR is assigned a DWARF register number: its CSR number plus 4096.", 2, 2),
    ]
    question = "How are control and status registers numbered in DWARF?"
    chosen = extractive.select(question, hits, None)
    assert chosen[0].text.startswith("Each CSR"), chosen
    by_hit = {u.hit_index: u.lexical for u in extractive.score_sentences(question, hits)[::-1]}
    assert by_hit[1] == 1.0 > by_hit[0]  # "control" and "status" are matched by CSR


def test_the_numbers_of_an_identifier_are_not_looked_for_on_their_own() -> None:
    """The 2021 of invoice "FV 1/2021" is no year to look for: a date of 2021 does not hold
    the question's identifier."""
    date = _hit("Payment due: 2021-05-03", 1)
    total = _hit("Invoice FV 1/2021 total: 148,83 PLN", 2, page=2)
    ranked = extractive.score_sentences("What total is due on invoice FV 1/2021?", [date, total])
    by_hit = {u.hit_index: u.identifier for u in ranked}
    assert by_hit == {0: 0.0, 1: 1.0}


def test_a_measure_with_a_word_before_it_asks_for_a_number() -> None:
    assert Asks.of("What similarity threshold did they use to group articles?").kind == "number"
    assert Asks.of("What monthly fee applies to a second child?").kind == "number"
    # Up to three words before it: "what average shortest path length does … give".
    assert Asks.of("What average shortest path length does the model give?").kind == "number"
    assert Asks.of("What kind of model is it?").kind == "other"
    # ... and not the verb and article of another question: "in what unit is the amount …".
    assert Asks.of("In what unit is the amount of a withdrawal expressed?").kind == "other"
    assert Asks.of("How are control and status registers numbered in DWARF?").kind == "number"


def test_a_limit_asks_for_a_number_and_a_superlative_alone_does_not() -> None:
    assert Asks.of("What is the largest a junior unit is allowed to be?").kind == "number"
    assert Asks.of("What is the most a landlord may charge?").kind == "number"
    assert Asks.of("Which is the largest planet?").kind == "other"


def test_how_a_thing_is_derived_asks_for_the_sentence_that_gives_the_rule() -> None:
    asks = Asks.of("How is a block's gas target derived from its gas limit?")
    assert asks.kind == "definition"
    rule = "The gas target, τ, is defined as the gas limit Hl divided by the elasticity multiplier."
    assert asks.gives(rule) == 1.0
    assert asks.gives("The base fee is adjusted so that blocks consume the gas target.") == 0.0
    assert Asks.of("How is the score computed?").gives("The score = hits / questions.") == 1.0
    assert Asks.of("How does the model work?").kind == "other"
    # A question that asks what a thing is keeps any defining sentence.
    assert Asks.of("What is a gas target?").gives("A gas target is a number of gas.") == 1.0


def test_a_measure_is_given_in_figures_and_a_reference_year_gives_no_number() -> None:
    threshold = Asks.of("What similarity threshold did they use to group articles?")
    assert threshold.measure
    assert threshold.gives("A threshold (0.65 in this experiment) was used.") == 1.0
    # "two articles" counts, it is no threshold; "(Charniak, 2000)" is a reference.
    assert threshold.gives("We compare two articles by their similarity.") == 0.0
    assert threshold.gives("The parser (Charniak, 2000) groups the articles.") == 0.0
    count = Asks.of("How many nests did Darwin open?")
    assert not count.measure
    assert count.gives("He opened fourteen nests.") == 1.0
    assert count.gives("As Darwin (1859) wrote of the nests.") == 0.0
    # The number of a figure, table or section is a label, not a count.
    assert count.gives("Figure 4.3 shows the nests Darwin opened.") == 0.0
    assert count.gives("Table 4.1: Nests opened by Darwin.") == 0.0
    assert count.gives("The nests are described in § 512 and Section 2.4.") == 0.0
    assert count.gives("Figure 4.3 shows the 14 nests Darwin opened.") == 1.0


def test_a_day_of_a_month_is_matched_as_that_day_in_any_form() -> None:
    """ "1 May" in the question is "1st May" in the diary, and not "1 October" (whose 1 the
    question's number alone would match)."""
    other = _hit("1 October.—It is strange to be kept in the dark as I am to-day.", 1, page=24)
    answer = _hit("Bistritz.—Left Munich at 8:35 P. M., on 1st May, arriving at Vienna.", 2, page=6)
    question = "From which city did Jonathan Harker leave by train on the evening of 1 May?"
    ranked = extractive.score_sentences(question, [other, answer])
    by_hit = {u.hit_index: u.identifier for u in ranked}
    assert by_hit == {0: 0.0, 1: 1.0}


def test_which_kinds_of_asks_for_a_list() -> None:
    assert Asks.of("Along which kinds of factors do marketers divide their market?").kind == "list"
    assert Asks.of("What types of registers are there?").kind == "list"


def test_a_question_in_another_language_asks_for_what_it_asks_in_english() -> None:
    year = Asks.of("В каком году была основана фабрика, отмеченная в календаре на 2017 год?")
    assert year.kind == "date"
    # The question's own year is context, not the answer.
    assert year.gives("Календарь знаменательных и памятных дат на 2017 год.") == 0.0
    assert year.gives("150 лет со времени основания фабрики «Красный Октябрь» (1867)") == 1.0
    deadline = Asks.of("Jusqu'à quelle date peut-on s'inscrire pour l'année 2018-2019 ?")
    assert deadline.kind == "date" and deadline.gives("La date limite du 16 septembre 2018") == 1.0
    assert deadline.gives("Inscriptions pour l'année 2018-2019") == 0.0
    assert Asks.of("Combien de magistrats siégeront dans la commission ?").kind == "number"
    assert Asks.of("Hoeveel liter water gaat er in de soep?").kind == "number"
    assert Asks.of("Wie viele Einwohner hat Berlin?").kind == "number"
    assert Asks.of("¿Quién escribió el informe?").kind == "name"
    assert Asks.of("Кто написал книгу?").kind == "name"
    # A relative "qui" inside the question asks for nothing; an English "may" is no month.
    assert Asks.of("Que fait la commission qui contrôle les écoutes ?").kind == "other"
    assert Asks.of("When did he leave?").gives("He may leave later.") == 0.0
    # A whole date in the question's year is a date.
    # A date's figures are no total: "what total is due" is not answered by the due date.
    total = Asks.of("What total is due on invoice FV 1/2021?")
    assert total.kind == "number" and total.gives("Termin płatności: 2021-05-03") == 0.0
    assert total.gives("Wartość brutto: 148,83") == 1.0
    due = Asks.of("By what date does invoice FV 1/2021 have to be paid?")
    assert due.gives("Termin płatności: 2021-05-03") == 1.0
    assert due.gives("Faktura nr FV 1/2021") == 0.0


def test_a_limit_is_answered_by_a_sentence_that_states_one() -> None:
    asks = Asks.of("What is the largest a junior accessory dwelling unit is allowed to be?")
    assert asks.gives("A junior unit is no more than 500 square feet in size.") == 1.0
    # A number that states no limit gives half; a section's number is a label, none.
    assert asks.gives("A typical junior unit covers 400 square feet.") == 0.5
    assert asks.gives("It complies with Government Code section 65852.22.") == 0.0
    assert asks.gives("It complies with the code.") == 0.0
    assert asks.gives("the creation fails if ‖o‖ > 24576") == 1.0
    # Counts in words in those languages are numbers too ("les quinze revues").
    assert Asks.of("Combien de revues les auteurs citent-ils ?").gives("les quinze revues") == 1.0
    assert Asks.of("How many are due?").gives("It is due per cent of the time.") == 0.0


def test_a_power_is_the_number_its_text_layer_flattens() -> None:
    """A PDF sets 10^15's exponent as a superscript, which extraction flattens into "1015":
    the question's power is that number (and its base and exponent are none of their own)."""
    from quire.text.numbers import figures

    assert figures("equal to 10^15 wei") == {"1015"}
    assert figures("10¹⁸ wei, 2**8 values and 3 more") == {"1018", "28", "3"}
    asks = Asks.of("What is the Ether denomination equal to 10^15 wei called?")
    assert asks.kind == "name" and asks.numbers == {"1015"}
    row = _hit("One Ether is 1018 Wei.\nMultiplier: 1015 · Name: Finney", 1, page=3)
    chosen = extractive.select(asks.question, [row], None)
    assert any("Finney" in c.text for c in chosen)
    assert Asks.of("What is the ship called by the crew in the story?").kind == "other"


def test_a_time_is_answered_by_a_sentence_that_states_one() -> None:
    asks = Asks.of("How quickly does the framework start most tasks after their scheduled time?")
    assert asks.kind == "number"
    assert asks.gives("95% of tasks begin execution within five seconds.") == 1.0
    assert asks.gives("It handles 10,000 async tasks.") == 0.5
    assert asks.gives("It starts tasks on time.") == 0.0
    # A number word and its unit are two words: "as" is not "a s(econd)", nor "ones" "one s".
    assert asks.gives("It handles 10,000 tasks as the scheduler says.") == 0.5
    assert asks.gives("It handles 10,000 tasks, the ones queued.") == 0.5
    assert asks.gives("It handles 10,000 tasks within a day.") == 1.0
    assert Asks.of("How long does a full sync take?").gives("It took 2 ms.") == 1.0
    # "How long" of a thing is a length, not a time.
    assert Asks.of("How long is the bridge?").gives("It is 1,280 metres long.") == 1.0


def test_a_sentence_read_with_its_list_is_whole_and_quoted() -> None:
    # The RISC-V ABI's default ABIs (page 15): the list ends the sentence that introduces it.
    page = (
        "It is strongly recommended to use the following default ABIs for specific "
        "architectures:\n\non RV32G\n\nILP32D\n\non RV64G\n\nLP64D\n\n\n\n"
        "Other ABIs are technically possible for specific architectures."
    )
    chosen = extractive.select("Which default ABIs are recommended?", [_hit(page)], None)
    assert chosen[0].text.endswith("on RV64G\n\nLP64D") and chosen[0].complete


def test_a_decimal_is_news_and_a_section_number_is_not() -> None:
    # The Grumman bulletin's arm: the value is what the line says beyond the question's word.
    arm = Asks.of("What arm is given for the weight and balance change?")
    assert arm.novelty("ARM: 89.00 In.") == 1.0
    assert Asks.of("What is the clustering?").novelty("Clustering: 0.037") == 1.0
    # A heading's section number says where, not what.
    assert Asks.of("What are the default ABIs?").novelty("2.5. Default ABIs") == 0.0
    assert Asks.of("What are the default ABIs?").novelty("4.10 Default ABIs") == 0.0


def test_a_constant_is_found_in_a_table_that_lists_it_without_its_namespace() -> None:
    """The RISC-V ABI's relocation table lists ``CALL_PLT``, not ``R_RISCV_CALL_PLT``: the row
    holds the question's identifier; ``PLT`` alone, or ``XCALL_PLT``, does not."""
    row = _hit("Enum: 19 · ELF Reloc Type: CALL_PLT · Type: Static", 1)
    other = _hit("Enum: 20 · ELF Reloc Type: GOT_HI20 · The PLT holds XCALL_PLT stubs.", 2)
    ranked = extractive.score_sentences("What relocation number is R_RISCV_CALL_PLT?", [row, other])
    by_hit = {u.hit_index: u.identifier for u in ranked}
    assert by_hit == {0: 1.0, 1: 0.0}
    assert heuristic_plan("What relocation number is R_RISCV_CALL_PLT?").hard_keywords == [
        "R_RISCV_CALL_PLT",
        "RISCV_CALL_PLT",
        "CALL_PLT",
    ]


@pytest.mark.parametrize(
    ("kept", "discounted", "question"),
    [
        # "use the following default ABIs:" points elsewhere, unless the unit holds the lines
        # it introduces (read as one unit): then it is the answer ("on RV64G LP64D").
        (
            "For compatibility it is strongly recommended to use the following default ABIs "
            "for specific architectures:\n\non RV32G\n\nILP32D\n\non RV64G\n\nLP64D",
            "The recommended default ABIs for specific architectures are described in Table 3.",
            "Which ABI is recommended by default for 64-bit systems?",
        ),
        # The yellow paper's REVERT row ends its description with "… described in (152).":
        # a row's cells are its content, whatever its description cell says.
        (
            "0xfd · REVERT · 2 · 0 · Halt execution reverting state changes but returning "
            "data and remaining gas. The effect of this operation is described in (152).",
            "Halting and reverting the state is described in (152).",
            "Which opcode halts execution reverting state changes?",
        ),
    ],
)
def test_a_unit_holding_what_it_points_to_is_not_pointing_elsewhere(
    monkeypatch: pytest.MonkeyPatch, kept: str, discounted: str, question: str
) -> None:
    monkeypatch.setattr(extractive, "POINTS_ELSEWHERE", 0.0)
    units = extractive.score_sentences(question, [_hit(kept, 1), _hit(discounted, 2, 2)])
    score = {u.text: u.score for u in units}
    assert score[kept] > 0.0 and score[discounted] == 0.0


def test_a_page_naming_the_questions_day_counts_it_again_in_the_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Both pages are as close to the question in meaning and give a time; the first shares
    more of its words, the second names its day ("the 1 May" as "1st May"). What a page names
    of the question's identifiers and days counts again in the order (``NAMED``): the dated
    page leads; without that, the other one."""
    question = "On which day of the study did the methodology of the survey start, the 1 May?"
    words = _hit("The methodology of the survey of the study started on a day in spring.", 1, 2)
    dated = _hit("Under this methodology, work began on 1st May.", 2, page=5)
    embedder = _TopicEmbedder()

    def order() -> list[int]:
        ranked = ordering.by_best_sentence(question, [words, dated], embedder)  # type: ignore[arg-type]
        return [h.chunk_id for h in ranked]

    assert order() == [2, 1]
    monkeypatch.setattr(ordering, "NAMED", 0.0)
    assert order() == [1, 2]


def test_a_number_question_names_its_measure_and_a_year_that_dates_gives_no_number() -> None:
    clustered = Asks.of("How clustered does the Barabási–Albert graph turn out to be?")
    assert clustered.kind == "number" and clustered.focus is not None
    assert clustered.focus.search("the clustering coefficient, C, is 0.037")
    nests = Asks.of("How many nests did he open?").focus
    assert nests is not None and nests.search("He opened the nest of a wasp.")
    slope = Asks.of("What slope does the sand pile's power spectrum have?").focus
    assert slope is not None and slope.search("The gray line has slope −1.58.")
    # A size or a time in general, or a number as such, names no measure to look for.
    for question in ("How long does a sync take?", "What value does it settle around?"):
        assert Asks.of(question).focus is None, question
    assert Asks.of("Who proposed the model?").focus is None
    # Nor does a verb after "how" elsewhere in a number question.
    assert Asks.of("How does the model grow, and what value does it reach?").focus is None
    # A year that dates what the sentence tells is no number given; a count of that size is.
    assert clustered.gives("In 1999 Barabási and Albert published a paper.") == 0.0
    assert clustered.gives("Since 2005 the network has grown.") == 0.0
    assert clustered.gives("The network has 1999 nodes.") == 1.0


def test_a_number_question_is_answered_by_the_number_of_the_measure_it_names() -> None:
    """A number beside the measure asked ("the clustering coefficient … is 0.037" for "how
    clustered") leads, not a number of something else nearer the question's words, nor the
    year the sentence is dated by."""
    page = (
        "In 1999 Barabási and Albert published their graph model of real networks. "
        "The Barabási–Albert graph of the Facebook data turns out to have an average degree "
        "of 43.8. On the other hand, its clustering coefficient, C, is 0.037."
    )
    question = (
        "When the book compares the Facebook network with the models, how clustered does the "
        "Barabási–Albert graph turn out to be?"
    )
    ranked = extractive.score_sentences(question, [_hit(page)], None)
    assert ranked[0].text == "On the other hand, its clustering coefficient, C, is 0.037."
    assert extractive.select(question, [_hit(page)], None)[0].text == ranked[0].text
