"""Table rows in page text, as the embedder reads them.

A PDF table's row is one line, ``Header: value · Header: value`` (formats/pdf/rows.py), so
that a quoted row says what each value is. A passage of many rows repeats the same headers on
every line, and the embedder, which reads a passage as one bag of meaning, then sees mostly
headers: on the RISC-V relocation tables the passage holding the answer fell from 6th to 22nd
in the dense ranking. So the embedder is given each run of rows under the same headers with
the headers said once, on its first row, and the values alone on the rows after it; what is
stored, searched by words, shown and quoted stays the full row. Measured: the question's
cosine with that passage went from 0.527 back to 0.546 (0.563 before rows), with the type-size
table's from 0.405 to 0.452 (0.487), but its dense rank only from 22nd to 21st; on the page-QA
sets two table questions rose a place (second set: 7th to 6th, 4th to 2nd), none fell.

    embedding_text("Enum: 44 · Type: Static\\nEnum: 45 · Type: Static")
    # "Enum: 44 · Type: Static\\n45 · Static"

``row_values`` reads a row's values across without their headers, as the page-QA check of
whether an answer holds the fact does (evaluation/questions.py).
"""

from __future__ import annotations

import re

SEPARATOR = " \u00b7 "
_LABEL = re.compile(r"^([^:\n]{1,60}?):\s+")


def _cells(line: str) -> tuple[list[str | None], list[str]]:
    labels: list[str | None] = []
    values: list[str] = []
    for part in line.split(SEPARATOR):
        m = _LABEL.match(part)
        labels.append(m.group(1) if m else None)
        values.append(part[m.end() :] if m else part)
    return labels, values


def embedding_text(text: str) -> str:
    """The passage with each run of rows under the same headers giving them once."""
    if SEPARATOR not in text:
        return text
    out: list[str] = []
    previous: list[str | None] | None = None
    for line in text.split("\n"):
        if SEPARATOR not in line:
            previous = None
            out.append(line)
            continue
        labels, values = _cells(line)
        if labels == previous and any(labels):
            out.append(SEPARATOR.join(values))
        else:
            out.append(line)
        previous = labels
    return "\n".join(out)


def row_values(text: str) -> str:
    """``text`` with each row's values read across without their headers, as a person reads
    a table's row: ``Enum: 32 · ELF Reloc Type: TPREL_ADD`` → ``32 TPREL_ADD``. Lines that
    are no rows are unchanged."""
    if SEPARATOR not in text:
        return text
    return "\n".join(
        " ".join(_cells(line)[1]) if SEPARATOR in line else line for line in text.split("\n")
    )
