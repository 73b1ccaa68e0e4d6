"""Sentences in every script: abbreviations kept, CJK and Arabic sentence ends found."""

from __future__ import annotations

import pytest

from quire.retrieval.sentences import MAX_CHARS, split_sentences


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        (
            "Dr. Smith left at 3.5 p.m. He came back.",
            ["Dr. Smith left at 3.5 p.m.", "He came back."],
        ),
        # A month or a reference abbreviated before its number ends no sentence; at the end
        # of one, it does.
        (
            "Collected from Sep. 21, 2005 - Nov. 27, 2005 (see Eq. 3). It ended in Sep. Rain.",
            [
                "Collected from Sep. 21, 2005 - Nov. 27, 2005 (see Eq. 3).",
                "It ended in Sep.",
                "Rain.",
            ],
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


def test_each_row_of_a_pdf_table_is_one_unit() -> None:
    """A table's rows (formats/pdf/rows.py) are units of their own, whole, even when a cell
    holds sentences; the caption and the prose around stay sentences."""
    text = (
        "The fees are these.\n\n"
        "Fee schedule\n"
        "Name: Gsreset · Value: 2900 · Description: Paid for an SSTORE. It is set to zero.\n"
        "Name: Rsclear · Value: 4800 · Description: Refund given. The amount is 4800.\n\n"
        "Table 1: The fee schedule. See Appendix G."
    )
    units = [u for _, u in split_sentences(text)]
    assert units == [
        "The fees are these.",
        "Fee schedule",
        "Name: Gsreset · Value: 2900 · Description: Paid for an SSTORE. It is set to zero.",
        "Name: Rsclear · Value: 4800 · Description: Refund given. The amount is 4800.",
        "Table 1: The fee schedule.",
        "See Appendix G.",
    ]
    assert all(text[start : start + len(u)] == u for start, u in split_sentences(text))


def test_a_table_of_one_row_is_one_unit() -> None:
    text = "Before it.\n\nC · Facebook: 0.61 · WS model: 0.63 · BA model: 0.037\n\nAfter it. Done."
    assert [u for _, u in split_sentences(text)] == [
        "Before it.",
        "C · Facebook: 0.61 · WS model: 0.63 · BA model: 0.037",
        "After it.",
        "Done.",
    ]


def test_a_row_longer_than_a_unit_is_split_into_the_sentences_of_its_cells() -> None:
    short = "Model: BA graph. Fitted · Clustering: 0.037"
    assert [u for _, u in split_sentences(short)] == [short]  # a row is one unit
    cell = "Marketers segment by: geographic, demographic and behavioural factors. " * 9
    long = f"Principle: Understand the market · Applied: {cell.strip()}"
    units = [u for _, u in split_sentences(long)]
    assert len(units) > 1 and all(len(u) <= MAX_CHARS for u in units)
    assert all(long[o : o + len(u)] == u for o, u in split_sentences(long))


def test_lines_that_each_start_as_a_list_item_are_units() -> None:
    # A calendar's entries set on lines of one paragraph: each holds its own fact.
    calendar = (
        "150 лет: со времени основания фабрики «Красный Октябрь» (1867)\n"
        "125 лет: со времени существования Третьяковской галереи (1892)"
    )
    assert [u for _, u in split_sentences(calendar)] == calendar.split("\n")
    assert len(split_sentences("- first item here\n- second item")) == 2
    # Lines of running text stay one sentence.
    assert len(split_sentences("The value is given\nin the table below.")) == 1


def test_a_short_list_is_read_with_the_sentence_that_introduces_it() -> None:
    # The RISC-V ABI's default ABIs, a labelled list laid out as lines set apart (page 15).
    page = (
        "Default ABIs\n\n"
        "While various different ABIs are technically possible, for software compatibility "
        "reasons it is\n\nstrongly recommended to use the following default ABIs for specific "
        "architectures:\n\non RV32G\n\nILP32D\n\non RV64G\n\nLP64D\n\n\n\n"
        "Although RV64GQ systems can technically use LP64Q, it is strongly recommended."
    )
    units = split_sentences(page)
    assert [u for _, u in units][1:] == [
        "While various different ABIs are technically possible, for software compatibility "
        "reasons it is\n\nstrongly recommended to use the following default ABIs for specific "
        "architectures:\n\non RV32G\n\nILP32D\n\non RV64G\n\nLP64D",
        "Although RV64GQ systems can technically use LP64Q, it is strongly recommended.",
    ]
    assert all(page[o : o + len(u)] == u for o, u in units)
    # Items with bullets stay units of their own (a list question quotes one), and so do the
    # lines after a colon when they are sentences or one line alone.
    assert len(split_sentences("The ABIs are:\n- ILP32\n- LP64")) == 3
    assert len(split_sentences("It says:\n\nThe first rule holds.\n\nThe second too.")) == 3
    assert len(split_sentences("Default:\n\nLP64D\n\nThe rest is text that runs on.")) == 3


def test_a_named_constant_is_read_with_the_sentence_that_defines_it() -> None:
    # The RISC-V ABI's e_flags, a definition list of constants laid out as lines (page 27).
    page = (
        "EF_RISCV_RVE (0x0008)\n\nThis bit is set when the binary targets the E ABI.\n\n"
        "EF_RISCV_TSO (0x0010)\n\n"
        "This bit is set when the binary requires the RVTSO memory consistency model.\n\n"
        "Until such a time that the Reserved bits (0x00ffffe0) are allocated by future "
        "versions of this\n\nspecification, they shall not be set by standard software."
    )
    units = split_sentences(page)
    assert [u for _, u in units][:2] == [
        "EF_RISCV_RVE (0x0008)\n\nThis bit is set when the binary targets the E ABI.",
        "EF_RISCV_TSO (0x0010)\n\n"
        "This bit is set when the binary requires the RVTSO memory consistency model.",
    ]
    assert all(page[o : o + len(u)] == u for o, u in units)
    # A heading is no constant, and a constant before a list's lines is not defined by them.
    assert len(split_sentences("Float ABI\n\nThis field holds the ABI.")) == 2
    assert len(split_sentences("EF_RISCV_RVC (0x0001)\n\nEF_RISCV_RVE (0x0008)")) == 2
    assert len(split_sentences("SHT_RISCV_ATTRIBUTES\n\nthe rest of a sentence.")) == 2


def test_each_field_of_a_definition_list_is_a_unit_of_its_own() -> None:
    # The yellow paper's withdrawal (p. 5): fields named in lower case, one after another, each
    # ending its sentence; they were read two to a unit ("… formally Wv. recipient: …").
    page = (
        "validatorIndex: index of consensus layer’s valida-\n"
        "tor this withdrawal corresponds to; formally Wv.\n"
        "recipient: the 20-byte address that will receives\n"
        "Ether from this withdrawal; formally Wr.\n"
        "amount: a nonzero amount of Ether denominated\n"
        "in Gwei (109 Wei); formally Wa."
    )
    units = split_sentences(page)
    assert [u.split(":")[0] for _, u in units] == ["validatorIndex", "recipient", "amount"]
    assert all(page[o : o + len(u)] == u for o, u in units)
    # A field's name starts a unit only after a sentence ends.
    assert len(split_sentences("The fields are\nnonce: a scalar value.")) == 1
