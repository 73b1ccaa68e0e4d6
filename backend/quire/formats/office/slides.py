"""Slides (.pptx, .pptm; .odp in formats/office/odf.py): one page per slide.

A slide's page is its title, then its other text in reading order, then its speaker notes
after a ``Speaker notes:`` line, so that a note is searchable and a quote from it says it is
one. Reading order is top to bottom, then left to right: shapes are sorted by their top edge
(in bands of ``BAND`` of the slide's height, so that boxes side by side read left to right)
and their left edge; a group's shapes are read where the group puts them. Tables are rows
with their header (formats/pdf/rows.py). Slide numbers, dates and footers (placeholders
repeated on every slide) are left out. The heading path is the title; the citation is
"slide 14 · Results" (presentation order, hidden slides counted and marked as hidden).
Macros in a .pptm are never run: python-pptx reads the XML parts only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pptx.enum.shapes import MSO_SHAPE_TYPE, PP_PLACEHOLDER
from pptx.exc import PackageNotFoundError
from pptx.package import Package as PptxPackage
from pptx.parts.presentation import PresentationPart
from pptx.shapes.base import BaseShape

from quire.errors import CorruptFile
from quire.formats.office.package import core_properties, open_package
from quire.formats.pdf.rows import table_rows
from quire.formats.types import Extracted
from quire.storage.records import Page
from quire.text.clean import clean_page_text

BAND = 0.05
NOTES = "Speaker notes:"
_REPEATED = {PP_PLACEHOLDER.SLIDE_NUMBER, PP_PLACEHOLDER.DATE, PP_PLACEHOLDER.FOOTER}


@dataclass
class Slide:
    """What a slide holds, whatever the format: its title, its blocks in reading order
    (``(top, left, text)``), its speaker notes."""

    number: int
    title: str = ""
    blocks: list[tuple[float, float, str]] = field(default_factory=list)
    notes: str = ""
    hidden: bool = False

    def page(self, height: float) -> Page:
        """The slide as a page (see the module docstring)."""
        band = max(height * BAND, 1.0)
        ordered = sorted(self.blocks, key=lambda b: (int(b[0] // band), b[1]))
        title = " ".join(clean_page_text(self.title, drop_page_numbers=False).split())
        parts = [title] if title else []
        parts += [clean_page_text(text, drop_page_numbers=False) for _, _, text in ordered]
        notes = clean_page_text(self.notes, drop_page_numbers=False)
        if notes:
            parts.append(f"{NOTES}\n{notes}")
        where = f"slide {self.number}" + (" (hidden)" if self.hidden else "")
        meta: dict[str, Any] = {"slide": self.number, "title": title, "notes": bool(notes)}
        if self.hidden:
            meta["hidden"] = True
        return Page(
            self.number,
            "\n\n".join(p for p in parts if p),
            heading_path=title,
            source="office",
            meta=meta,
            label=f"{where} · {title}" if title else where,
        )


def _text_frame(shape: Any) -> str:
    if not getattr(shape, "has_text_frame", True):  # a picture in a title placeholder
        return ""
    lines = []
    for paragraph in shape.text_frame.paragraphs:
        text = paragraph.text.replace("\x0b", "\n").strip()  # a line break within it: \v
        if text:
            lines.append(text)
    return "\n".join(lines)


def _table(shape: Any) -> str:
    grid: list[list[str | None]] = []
    for row in shape.table.rows:
        cells: list[str | None] = []
        for cell in row.cells:
            # A cell a merge covers repeats the merge's text (rows.py fills merged cells).
            cells.append(_text_frame(cell) if not cell.is_spanned else None)
        grid.append(cells)
    return "\n".join(table_rows(grid))


def _walk(shapes: Any, slide: Slide, skip: BaseShape | None) -> None:
    for shape in shapes:
        if skip is not None and shape.shape_id == skip.shape_id:
            continue
        if shape.is_placeholder and shape.placeholder_format.type in _REPEATED:
            continue
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            _walk(shape.shapes, slide, skip)
            continue
        if getattr(shape, "has_table", False) and shape.has_table:
            text = _table(shape)
        elif shape.has_text_frame:
            text = _text_frame(shape)
        else:
            continue
        if text:
            slide.blocks.append((float(shape.top or 0), float(shape.left or 0), text))


def extract_pptx(path: Path, *, max_unpacked_bytes: int) -> Extracted:
    """Read a PowerPoint deck into one page per slide (see the module docstring)."""
    with open_package(path, "PowerPoint file", max_unpacked_bytes) as pkg:
        title, author = core_properties(pkg)
        macros = any(n.lower().endswith("vbaproject.bin") for n in pkg.names)
    try:
        # Not pptx.Presentation(): it refuses a slide show (.ppsx), which is the same deck.
        part = PptxPackage.open(str(path)).main_document_part
    except (PackageNotFoundError, KeyError, ValueError) as exc:
        raise CorruptFile(f"Damaged PowerPoint file: {exc}") from exc
    if not isinstance(part, PresentationPart):
        raise CorruptFile(f"Damaged PowerPoint file: its main part is {part.content_type}")
    prs = part.presentation
    height = float(prs.slide_height or 6858000)
    pages = []
    for n, sl in enumerate(prs.slides, start=1):
        title_shape = sl.shapes.title
        slide = Slide(n, title=_text_frame(title_shape) if title_shape is not None else "")
        slide.hidden = sl._element.get("show") in ("0", "false")
        _walk(sl.shapes, slide, title_shape)
        if sl.has_notes_slide and (frame := sl.notes_slide.notes_text_frame) is not None:
            slide.notes = frame.text.replace("\x0b", "\n")
        pages.append(slide.page(height))
    metadata = {"slides": len(pages), "macros": "present, never run" if macros else None}
    return Extracted(kind="pptx", title=title, author=author, pages=pages, metadata=metadata)
