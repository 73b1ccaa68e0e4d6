"""Generated PDFs of awkward tables (fpdf2): a page of 5,000 boxed cells, a table with merged
and empty cells, a page of one sentence. Used by tests/ingest/test_pdf_tables.py (the page
text) and tests/api/test_table_answers.py (search and answers over them)."""

from __future__ import annotations

from pathlib import Path

from fpdf import FPDF

SENTENCE = "The heron waited by the weir until the tide turned at dawn."


def _written(pdf: FPDF, path: Path) -> Path:
    pdf.output(str(path))
    return path


def cells_pdf(path: Path, rows: int = 200, columns: int = 25) -> Path:
    """One page, a grid of ``rows`` × ``columns`` boxed cells: headers H0… then "r.c"."""
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=3)
    pdf.set_margins(4, 4)
    pdf.set_auto_page_break(False)
    with pdf.table(col_widths=(1,) * columns, line_height=1.3, padding=0.1) as table:
        for r in range(rows):
            row = table.row()
            for c in range(columns):
                row.cell(f"{r}.{c}" if r else f"H{c}")
    return _written(pdf, path)


def merged_pdf(path: Path) -> Path:
    """Opening hours: an empty cell, a cell merged over two columns, an empty row."""
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=10)
    pdf.multi_cell(w=0, text="Opening hours of the three branches.")
    pdf.ln(4)
    with pdf.table(col_widths=(30, 30, 30, 30)) as table:
        for cells in (
            ("Branch", "Monday", "Tuesday", "Wednesday"),
            ("North", "9-17", "", "9-12"),
            ("South", "closed for works", None, "10-16"),
            ("", "", "", ""),
        ):
            row = table.row()
            for cell in cells:
                if cell is not None:
                    row.cell(cell, colspan=2 if cell == "closed for works" else 1)
    pdf.ln(4)
    pdf.multi_cell(w=0, text="Table 1: Opening hours.")
    return _written(pdf, path)


def one_sentence_pdf(path: Path) -> Path:
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=11)
    pdf.multi_cell(w=0, text=SENTENCE)
    return _written(pdf, path)
