"""A page-QA set's questions: read from JSONL, and where each one's answer is.

The layout is ``shared/data/qa/README.md``'s (evaluation/pageqa.py runs a set). An Office
question's right pages are found in the ingested file from its ``locator`` (:func:`office_gold`);
an image question's page is its locator's ``page``, the frame of the file.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from quire.errors import InputError
from quire.text.table_rows import row_values

OFFICE_SETS = ("docx", "odt", "pptx", "odp", "xlsx", "ods")
#: Kinds a question set may hold that Quire does not read yet.
UNREAD_KINDS: tuple[str, ...] = ()
_CELL_ROW = re.compile(r"\d+")


class Question(BaseModel):
    """One line of a page-QA set."""

    model_config = ConfigDict(extra="ignore")

    id: str
    file: str
    question: str = Field(min_length=1)
    answer_any: list[str] = Field(min_length=1)
    kind: Literal[
        "pdf", "epub", "perplexity", "docx", "odt", "pptx", "odp", "xlsx", "ods", "html", "image"
    ]
    qtype: str = "paraphrase"
    pages: list[int] = Field(default_factory=list)
    page_label: str | list[str] | None = None
    section: str | None = None
    spine_file: str | None = None
    turn: int | None = None
    #: Where an Office file's answer is: page or heading path, slide, sheet and cells.
    locator: dict[str, Any] | None = None
    tags: list[str] = Field(default_factory=list)
    line: int = 0
    #: An Office question's right pages, found in the library (:func:`office_gold`).
    gold: list[int] = Field(default_factory=list)


def normalise(text: str) -> str:
    """As the set's verifier compares text: NFKC, no soft hyphens, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).replace("\u00ad", "")
    return re.sub(r"\s+", " ", text).strip()


def read_questions(path: Path) -> tuple[list[Question], list[str]]:
    """The questions of a JSONL file, and a problem (with its line number) per bad line."""
    questions: list[Question] = []
    problems: list[str] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the question set ({exc})") from exc
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            q = Question.model_validate({**data, "line": n})
        except (ValueError, ValidationError) as exc:
            problems.append(f"line {n}: {_why(exc)}")
            continue
        if q.kind in UNREAD_KINDS:
            problems.append(f"line {n} ({q.id}): {q.kind} files are not read yet; not asked")
            continue
        if q.kind == "image" and not q.pages and (q.locator or {}).get("page"):
            # An image file's page is one of its frames, scored as a PDF page is.
            q = q.model_copy(update={"pages": [int((q.locator or {})["page"])]})
        where = {"pdf": q.pages, "image": q.pages, "epub": q.section, "perplexity": q.turn}.get(
            q.kind, q.locator
        )
        if not where:
            problems.append(f"line {n} ({q.id}): a {q.kind} question needs its location")
            continue
        questions.append(q)
    return questions, problems


def _why(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        return f"{where}: {first['msg']}" if where else str(first["msg"])
    return f"not JSON ({exc})" if isinstance(exc, json.JSONDecodeError) else str(exc)


#: Typographic quotes read as straight ones: a set's answer is copied from poppler's text
#: ("'CCDCDCD'"), which reads a typewriter font's quote as ' where pdfminer reads ’.
_QUOTES = str.maketrans({"‘": "'", "’": "'", "‛": "'", "′": "'", "“": '"', "”": '"', "„": '"'})


def _quotes(text: str) -> str:
    return text.translate(_QUOTES)


def contains_answer(q: Question, text: str) -> tuple[bool, bool]:
    """(exactly, ignoring case): whether ``text`` holds one of the answer strings, as written
    or with its table rows read across without their headers: a set's answer is the row's
    values as the page shows them ("32 TPREL_ADD"), the answer quotes the row with its headers
    (``Enum: 32 · ELF Reloc Type: TPREL_ADD``). Curly and straight quotes count as one."""
    bodies = [_quotes(normalise(t)) for t in (text, row_values(text))]
    answers = [_quotes(normalise(a)) for a in q.answer_any]
    exact = any(a in body for a in answers for body in bodies)
    return exact, exact or any(a.lower() in body.lower() for a in answers for body in bodies)


def web_gold(q: Question, heading_path: str) -> bool:
    """Whether a saved web page's passage under ``heading_path`` is where ``q``'s locator says
    the answer is: its nearest heading (the path's last) is the locator's ``heading``; a null
    heading means before every heading (an empty path)."""
    wanted = (q.locator or {}).get("heading")
    nearest = heading_path.rsplit(" > ", 1)[-1] if heading_path else ""
    return normalise(nearest) == normalise(wanted or "")


def office_gold(q: Question, document: dict[str, Any], pages: list[dict[str, Any]]) -> list[int]:
    """The pages of an Office file that are where ``q``'s locator says the answer is.

    A slide by its number; a sheet's row ranges holding the cell's row; a Word or
    OpenDocument page by its number when the file was read by its rendered pages; otherwise
    the sections under the locator's last heading (styled, or a bold line) that hold the
    answer, or, with no heading given, those that hold the answer. ``pages`` carry
    ``page``, ``heading_path``, ``metadata`` and ``text``."""
    loc = q.locator or {}
    if q.kind in ("pptx", "odp"):
        return [int(loc["slide"])] if loc.get("slide") else []
    if q.kind in ("xlsx", "ods"):
        m = _CELL_ROW.search(str(loc.get("cells", "")))
        row = int(m.group(0)) if m else 0
        return [
            p["page"]
            for p in pages
            if p["metadata"].get("sheet") == loc.get("sheet")
            and p["metadata"].get("rows", [0, 0])[0] <= row <= p["metadata"].get("rows", [0, 0])[1]
        ]
    if loc.get("page") and document["metadata"].get("pagination") == "rendered":
        return [int(loc["page"])]
    headings = [
        h for h in (loc.get("heading_path") or [])[-1:] + [loc.get("nearest_bold_heading")] if h
    ]
    holding = [p for p in pages if contains_answer(q, p["text"])[1]]
    under = [
        p for p in holding if any(normalise(h) in normalise(p["heading_path"]) for h in headings)
    ]
    return [p["page"] for p in (under if headings else holding)]
