"""PDF tables and layout read as a person reads them (formats/pdf/tables.py, rows.py): one
line per row with its headers, on real pages of ../shared/data/docs; no table where there is
none (a chart, a code listing, prose between framed listings); and bad input (5,000 cells,
merged and empty cells, one sentence) read without an error."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from pdfminer.pdfdocument import PDFDocument
from pdfminer.pdfpage import PDFPage
from pdfminer.pdfparser import PDFParser

from quire.formats.pdf.layout import iter_layouts, page_text
from quire.formats.pdf.rows import table_rows
from quire.formats.pdf.text import read_text_layer, unmapped_glyphs
from quire.text.table_rows import embedding_text
from tests.conftest import DOCS
from tests.ingest.table_pdfs import SENTENCE, cells_pdf, merged_pdf, one_sentence_pdf

DOT = " \u00b7 "


def pages(name: str, *numbers: int) -> dict[int, str]:
    """The text of some pages of a shared document, laid out as ingest lays them out."""
    with (DOCS / "pdf" / name).open("rb") as fh:
        doc = PDFDocument(PDFParser(fh))
        all_pages = list(PDFPage.create_pages(doc))
        wanted = [all_pages[n - 1] for n in numbers]
        out = {}
        for (_, layout, _), n in zip(iter_layouts(doc, wanted), numbers, strict=True):
            assert layout is not None
            out[n] = page_text(layout)[0]
        return out


def rows_of(text: str) -> list[str]:
    return [line for line in text.split("\n") if DOT in line]


def block_of(text: str, row: str) -> str:
    """The paragraph (between blank lines) that holds a row."""
    return next(b for b in text.split("\n\n") if row in b.split("\n"))


# -- real tables ------------------------------------------------------------------------------
def test_thinkcomplexity_table_4_1_one_row_per_line_with_headers() -> None:
    text = pages("thinkcomplexity2.pdf", 74)[74]
    assert rows_of(text) == [
        "C · Facebook: 0.61 · WS model: 0.63 · BA model: 0.037",
        "L · Facebook: 3.69 · WS model: 3.23 · BA model: 2.51",
        "mean degree · Facebook: 43.7 · WS model: 44 · BA model: 43.7",
        "std degree · Facebook: 52.4 · WS model: 1.5 · BA model: 40.1",
        "power law? · Facebook: maybe · WS model: no · BA model: yes",
    ]
    # The table is a paragraph of its own; its caption and the prose stay as they were.
    assert block_of(text, rows_of(text)[0]).split("\n") == rows_of(text)
    assert "\n\nTable 4.1: Characteristics of the Facebook network compared to two models.\n\n" in (
        text
    )
    assert "the clustering coeﬃcient, C, is 0.037, not even close" in text


def test_riscv_grid_tables_wrapped_and_empty_cells() -> None:
    text = pages("riscv-abi-spec-v1.0.pdf", 30, 32, 42, 55)
    # A relocation whose row the generator split in two (the calculation under the field, the
    # description wrapped): one line. The header "Enu / m" of a narrow column is one word.
    assert (
        "Enum: 19 · ELF Reloc Type: CALL_PLT · Type: Static · Field / Calculation: U+I-Type "
        "S + A - P · Description: 32-bit PC-relative function call, macros call, tail (PIC)"
    ) in rows_of(text[30])
    assert not any(line.strip() == "S + A - P" for line in text[30].split("\n"))
    # "59-" over "191": one range.
    assert any(r.startswith("Enum: 59-191 · ELF Reloc Type: Reserved") for r in rows_of(text[32]))
    assert "Enum: 45 · ELF Reloc Type: RVC_JUMP" in text[32]
    assert (
        "Name: DT_RISCV_VARIANT_CC · Value: 0x70000001 · d_un: d_val · Executable: Platform "
        "specific · Shared Object: Platform specific"
    ) in rows_of(text[42])
    # An empty cell is left out of its row.
    assert "DWARF Number: 4096 - 8191 · Description: CSRs" in rows_of(text[55])
    assert "DWARF Number: 0 - 31 · Register Name: x0 - x31 · Description: Integer Registers" in (
        rows_of(text[55])
    )


def test_yellow_paper_ruled_tables() -> None:
    text = pages("ethereum-yellowpaper-shanghai.pdf", 2, 28, 36)
    assert "Multiplier: 1015 · Name: Finney" in rows_of(text[2])
    fees = rows_of(text[28])
    assert len(fees) == 36
    assert "Name: Gtransaction · Value: 21000 · Description: Paid for every transaction." in fees
    # A description wrapped onto a second line belongs to its row.
    assert (
        "Name: Rsclear · Value: 4800 · Description: Refund given (added into refund counter) "
        "when the storage value is set to zero from non-zero. The refund amount is deﬁned as "
        "Gsreset + Gaccessliststorage."
    ) in fees
    opcodes = rows_of(text[36])
    assert any(r.startswith("Value: 0x5f · Mnemonic: PUSH0 · δ: 0 · α: 1 · ") for r in opcodes)
    # The group title over the table stands alone; the rows ruled one by one with no header on
    # this page (the table began on the page before) give their values bare.
    assert "\n5f, 60s & 70s: Push Operations\nValue: 0x5f" in text[36]
    assert any(
        r.startswith("0x59 · MSIZE · 0 · 1 · Get the size of active memory") for r in opcodes
    )
    assert not any(r.startswith(("Value: ...", "...")) for r in opcodes)  # ellipses: no rows


def test_a_ruled_table_whose_descriptions_run_on_for_lines_is_read_as_rows() -> None:
    # The opcode tables' descriptions run on under their rows for lines of formulas, so few
    # lines have text in two columns; those lines go on the row above and are not counted
    # against the table. Each opcode was a box of its own ("0xfd REVERT", "2", "0 Halt …").
    text = pages("ethereum-yellowpaper-shanghai.pdf", 35, 39)
    memory = rows_of(text[35])
    assert "Value: 0x50 · Mnemonic: POP · δ: 1 · α: 0 · Description: Remove item from stack." in (
        memory
    )
    assert any(r.startswith("Value: 0x57 · Mnemonic: JUMPI · δ: 2 · α: 0 · ") for r in memory)
    assert any(
        r.startswith(
            "0xfd · REVERT · 2 · 0 · Halt execution reverting state changes but returning "
            "data and remaining gas."
        )
        for r in rows_of(text[39])
    )


def test_naacl_two_column_page_reads_column_by_column_with_its_table() -> None:
    text = pages("naacl06-shinyama.pdf", 6)[6]
    order = [
        "Finally, we can perform metaclustering",  # left column
        "We used twelve newspapers",
        "Source articles: 28,009",  # Table 2, at the foot of the left column
        "Metaclusters (rows ≥ 3): 101",
        "and obtained 302 metaclusters (tables).",  # right column
        "4.1 Evaluation Method",
        "4.2 Results",
    ]
    where = [text.find(s) for s in order]
    assert -1 not in where, dict(zip(order, where, strict=True))
    assert where == sorted(where)


@pytest.mark.parametrize(
    ("name", "number"),
    [
        ("thinkcomplexity2.pdf", 147),  # a chart's axes and labels, and framed code
        ("thinkcomplexity2.pdf", 36),  # prose between two framed code listings
        ("riscv-abi-spec-v1.0.pdf", 23),  # assembly in a frame, in columns
    ],
)
def test_no_table_where_there_is_none(name: str, number: int) -> None:
    assert rows_of(pages(name, number)[number]) == []


# -- rows -------------------------------------------------------------------------------------
def test_rows_merged_empty_and_headerless_cells() -> None:
    # A merged cell (None) repeats; an empty one is left out; a row that only continues
    # wrapped cells joins the one above.
    grid: list[list[str | None]] = [
        ["Group", "Name", "Value"],
        ["Static", "JAL", "20-bit"],
        [None, "BRANCH", ""],
        ["", "", "offset"],
        ["Dynamic", "COPY", "-"],
    ]
    assert table_rows(grid) == [
        "Group: Static · Name: JAL · Value: 20-bit",
        "Group: Static · Name: BRANCH · Value: offset",
        "Group: Dynamic · Name: COPY · Value: -",
    ]
    # No header row: two columns are key and value, more are joined bare.
    assert table_rows([["Source articles", "28,009"], ["Metaclusters", "302"]]) == [
        "Source articles: 28,009",
        "Metaclusters: 302",
    ]
    assert table_rows([["0x59", "MSIZE", "0"], ["0x5a", "GAS", "0"]]) == [
        "0x59 · MSIZE · 0",
        "0x5a · GAS · 0",
    ]
    # An empty header names no column: its values stand bare.
    assert table_rows([["", "WS model", "BA model"], ["C", "0.63", "0.037"]]) == [
        "C · WS model: 0.63 · BA model: 0.037"
    ]
    # Tall cells of records, one per line.
    assert table_rows(
        [["Article", "Place"], ["2005-09-21\n2005-09-23\n2005-09-25", "A\nB\nC"]]
    ) == [
        "Article: 2005-09-21 · Place: A",
        "Article: 2005-09-23 · Place: B",
        "Article: 2005-09-25 · Place: C",
    ]
    assert table_rows([]) == [] and table_rows([["", ""], [None, ""]]) == []


def test_the_embedder_reads_a_run_of_rows_with_its_headers_once() -> None:
    text = (
        "Table 17.\n\n"
        "Enum: 44 · ELF Reloc Type: RVC_BRANCH · Type: Static\n"
        "Enum: 45 · ELF Reloc Type: RVC_JUMP · Type: Static\n"
        "Tag: Tag_RISCV_arch · Value: 5\n\n"
        "Prose: not a row."
    )
    assert embedding_text(text) == (
        "Table 17.\n\n"
        "Enum: 44 · ELF Reloc Type: RVC_BRANCH · Type: Static\n"
        "45 · RVC_JUMP · Static\n"
        "Tag: Tag_RISCV_arch · Value: 5\n\n"
        "Prose: not a row."
    )
    assert embedding_text("No table here.") == "No table here."


# -- bad input --------------------------------------------------------------------------------
def test_a_page_of_5000_cells_is_read_as_rows_in_bounded_time(tmp_path: Path) -> None:
    t0 = time.process_time()  # CPU time: a busy machine does not slow it
    layer = read_text_layer(cells_pdf(tmp_path / "cells.pdf"), max_pages=10, min_words=10)
    took = time.process_time() - t0
    rows = rows_of(layer.pages[0].text)
    assert len(rows) == 199
    assert rows[0].startswith("H0: 1.0 · H1: 1.1 · H2: 1.2")
    assert rows[-1].endswith("H24: 199.24")
    # pdfplumber's own cell search took 50 s on this page (quadratic); ours takes about 2 s.
    assert took < 30, took


def test_a_table_with_merged_and_empty_cells(tmp_path: Path) -> None:
    path = merged_pdf(tmp_path / "merged.pdf")
    text = read_text_layer(path, max_pages=5, min_words=3).pages[0].text
    # The empty cell is left out, the merged one given to both its columns, the empty row gone.
    assert rows_of(text) == [
        "Branch: North · Monday: 9-17 · Wednesday: 9-12",
        "Branch: South · Monday: closed for works · Tuesday: closed for works · Wednesday: 10-16",
    ]
    assert text.startswith("Opening hours of the three branches.\n\nBranch: North")
    assert text.endswith("\n\nTable 1: Opening hours.")


def test_a_one_sentence_page_is_that_sentence(tmp_path: Path) -> None:
    layer = read_text_layer(one_sentence_pdf(tmp_path / "one.pdf"), max_pages=5, min_words=3)
    assert layer.pages[0].text == SENTENCE


def test_labels_beside_their_values_are_read_as_one_line_each() -> None:
    # The invoice's totals: labels in one column, amounts in the next; pdfminer reads the
    # labels, then the amounts.
    text = pages("polish-invoice-identity-cmap.pdf", 1)[1]
    lines = text.split("\n")
    for line in ("Zapłacono: 0,00 PLN", "Do zapłaty: 148,83 PLN", "Razem: 148,83 PLN"):
        assert line in lines, line
    assert "148,83 PLN" not in lines  # the amounts left their own boxes
    # Cells of wider tables are no pairs: the network table (label and three values) and the
    # RISC-V type table (type, size, alignment) keep their layout.
    for name, page in (("thinkcomplexity2.pdf", 74), ("riscv-abi-spec-v1.0.pdf", 17)):
        assert not any(
            re.fullmatch(r"[\w /*]{1,40}: [\d.]+", line)
            for line in pages(name, page)[page].split("\n")
        ), name


def test_glyphs_without_a_character_are_bullets_or_marked_unknown() -> None:
    # Think Complexity's reading list sets its bullets in a font that maps them to nothing;
    # the yellow paper's primes and ceiling brackets too.
    reading = unmapped_glyphs(pages("thinkcomplexity2.pdf", 245)[245])
    assert "• Strogatz, Sync." in reading.split("\n") and "(cid:" not in reading
    formula = unmapped_glyphs("(σ(cid:48), g(cid:48)) ≡ x\n(cid:136) item")
    assert formula == "(σ\ufffd, g\ufffd) ≡ x\n• item"
