"""The blocks of a text document (Word, OpenDocument text) in reading order, cut into the
units a citation names.

A reader calls :meth:`Flow.heading`, :meth:`Flow.paragraph`, :meth:`Flow.rows`,
:meth:`Flow.note` and :meth:`Flow.page_break` as it walks the document; :meth:`Flow.pages`
then makes the pages, in one of two ways:

- by page, as the word processor last laid the document out (the page breaks it recorded),
  when the reader trusts those breaks: each page holds the blocks between two breaks, its
  notes at its end, and ``meta["headings"]`` says where sections start on it (as for a PDF
  page, ingest/chunking.py), so that every chunk has its own heading path;
- otherwise by section, as for an EPUB: a unit per heading path, cut before it passes
  ``MAX_SECTION_CHARS``, labelled with its last heading and its paragraphs, "Background,
  ¶ 12–30" (every non-empty block, a heading or a table too, is a numbered paragraph).

Headings nest as in EPUB (a stack of open headings): a styled heading of level n closes the
open ones of level n and below; a heading made by direct formatting (a short paragraph all in
bold) sits below every styled one (``BOLD_LEVEL``) and closes only another such heading.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from quire.storage.records import Page, PageSource
from quire.text.clean import clean_page_text

PATH_SEPARATOR = " > "
BOLD_LEVEL = 10  # below Word's nine outline levels
MAX_SECTION_CHARS = 6000


@dataclass
class _Block:
    page: int
    path: str
    paragraph: int
    text: str
    note: bool = False
    heading: bool = False


@dataclass
class Flow:
    """Blocks gathered in reading order, with the page each starts on."""

    page: int = 1
    blocks: list[_Block] = field(default_factory=list)
    stack: list[tuple[float, str]] = field(default_factory=list)
    paragraphs: int = 0

    @property
    def path(self) -> str:
        return PATH_SEPARATOR.join(title for _, title in self.stack)

    def page_break(self) -> None:
        self.page += 1

    def heading(self, level: float, text: str) -> None:
        """A heading: opens a section and is itself the section's first block."""
        title = " ".join(clean_page_text(text, drop_page_numbers=False).split())
        if not title:
            return
        last = self.blocks[-1] if self.blocks else None
        if last is not None and self.stack and last.text == self.stack[-1][1] and not last.note:
            # Nothing since the previous heading: nest under it, as EPUB sections do.
            self.stack.append((max(level, self.stack[-1][0] + 0.5), title))
        else:
            self.stack = [entry for entry in self.stack if entry[0] < level]
            self.stack.append((level, title))
        self._add(title, heading=True)

    def paragraph(self, text: str, *, continued: bool = False) -> None:
        """A paragraph; ``continued``: the rest of one cut by a page break (not a new ¶)."""
        self._add(text, continued=continued)

    def rows(self, lines: list[str]) -> None:
        """A table (or the part of one on this page) as its row lines: one paragraph."""
        self._add("\n".join(lines))

    def note(self, text: str) -> None:
        """A footnote, endnote or comment: shown at the end of the unit that refers to it."""
        text = clean_page_text(text, drop_page_numbers=False)
        if text:
            self.blocks.append(_Block(self.page, self.path, self.paragraphs, text, note=True))

    def _add(self, text: str, *, continued: bool = False, heading: bool = False) -> None:
        text = clean_page_text(text, drop_page_numbers=False)
        if not text:
            return
        if not continued:
            self.paragraphs += 1
        self.blocks.append(_Block(self.page, self.path, self.paragraphs, text, heading=heading))

    def pages(self, *, paginated: bool, source: PageSource = "text") -> list[Page]:
        """The document's units (see the module docstring)."""
        if paginated:
            return [
                _page(n, [b for b in self.blocks if b.page == n], source)
                for n in range(1, self.page + 1)
            ]
        units: list[list[_Block]] = []
        size = 0
        for block in self.blocks:
            # Headings with nothing under them yet open the section of the heading below.
            same = units and (units[-1][-1].path == block.path or all(b.heading for b in units[-1]))
            if same and (block.note or size + len(block.text) <= MAX_SECTION_CHARS):
                units[-1].append(block)
                size += len(block.text)
            else:
                units.append([block])
                size = len(block.text)
        return [_section(i, unit, source) for i, unit in enumerate(units, start=1)]


def _join(blocks: list[_Block]) -> tuple[str, list[list[Any]]]:
    """The blocks' text, notes last, and ``[offset, path]`` where the heading path changes."""
    text = ""
    starts: list[list[Any]] = []
    for block in [b for b in blocks if not b.note] + [b for b in blocks if b.note]:
        if text:
            text += "\n\n"
        if not block.note and (not starts or starts[-1][1] != block.path):
            starts.append([len(text), block.path])
        text += block.text
    return text, starts


def _page(number: int, blocks: list[_Block], source: PageSource) -> Page:
    text, starts = _join(blocks)
    if len(starts) <= 1:
        return Page(number, text, heading_path=starts[0][1] if starts else "", source=source)
    # The page's own path is the section covering most of its text (as a PDF page's).
    ends = [s[0] for s in starts[1:]] + [len(text)]
    covering = max(zip(starts, ends, strict=True), key=lambda s: s[1] - s[0][0])[0][1]
    meta: dict[str, Any] = {"headings": starts}
    return Page(number, text, heading_path=covering, source=source, meta=meta)


def _section(number: int, blocks: list[_Block], source: PageSource) -> Page:
    text, _ = _join(blocks)
    path = [b for b in blocks if not b.note][-1].path if any(not b.note for b in blocks) else ""
    first, last = blocks[0].paragraph, blocks[-1].paragraph
    where = f"¶ {first}" if first == last else f"¶ {first}–{last}"
    heading = path.rsplit(PATH_SEPARATOR, 1)[-1]
    label = f"{heading}, {where}" if heading else where
    meta = {"paragraphs": [first, last]}
    return Page(number, text, heading_path=path, source=source, meta=meta, label=label)
