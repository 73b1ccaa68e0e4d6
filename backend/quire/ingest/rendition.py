"""A Word, OpenDocument or slide file seen as the original: converted once to PDF by LibreOffice
(its *rendition*, kept beside the original as ``<sha256>.rendition.pdf``), and each page or
section of the text matched to the rendition page that holds it.

Slides are the rendition's pages one for one (hidden slides are exported too). A Word page
(as Word laid it out) or a section is found on the rendition by its paragraphs' words
(``pdftotext``), so that the source view shows the page that holds it; a document read by
section is then also cited with LibreOffice's pages ("pp. 4–5 as LibreOffice paginates it"). A
conversion that fails or times out leaves the document read as text, with the reason in its
metadata.
"""

from __future__ import annotations

import bisect
import logging
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from quire.config import Settings
from quire.errors import QuireError
from quire.formats.detect import legacy_format
from quire.formats.office.convert import INSTALL_HINT, SLIDES_TO_PDF, convert, soffice
from quire.formats.types import Extracted
from quire.storage.documents import part_path, rendition_path

log = logging.getLogger(__name__)

RENDERED_KINDS = frozenset({"docx", "odt", "pptx", "odp"})
SLIDE_KINDS = frozenset({"pptx", "odp"})
PROBE_WORDS = 8
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Rendition:
    """The outcome of rendering one document: the PDF, or why there is none."""

    path: Path | None
    note: str | None = None  # why there is none


def render(settings: Settings, source: Path, sha256: str, kind: str, timeout_s: float) -> Rendition:
    """The document's rendition, made now unless an earlier ingest made it."""
    target = rendition_path(settings.files_dir, sha256)
    if kind not in RENDERED_KINDS:
        return Rendition(None)
    if target.is_file():
        return Rendition(target)
    command = soffice(settings)
    if command is None:
        return Rendition(None, f"no renderer is installed: {INSTALL_HINT} to see the original")
    suffix = f".{legacy_format(source) or kind}"
    try:
        with tempfile.TemporaryDirectory(prefix="quire-render-") as tmp:
            export = SLIDES_TO_PDF if kind in SLIDE_KINDS else ""
            made = convert(
                source,
                "pdf",
                Path(tmp),
                command=command,
                timeout_s=timeout_s,
                memory_mb=settings.job_memory_mb,
                suffix=suffix,
                export=export,
            )
            target.parent.mkdir(parents=True, exist_ok=True)
            part = part_path(target)  # two workers rendering the same bytes never share it
            shutil.move(made, part)
            part.replace(target)
    except QuireError as exc:
        log.warning("no rendition of %s: %s", source.name, exc.message)
        return Rendition(None, f"the rendered view could not be made: {exc.message}")
    return Rendition(target)


def page_texts(pdf: Path, timeout_s: float = 120) -> list[str]:
    """The text of each page of a PDF (``pdftotext``; form feeds end its pages)."""
    out = subprocess.run(
        ["pdftotext", "-enc", "UTF-8", str(pdf), "-"],
        capture_output=True,
        timeout=timeout_s,
        check=True,
    )
    pages = out.stdout.decode("utf-8", "replace").split("\f")
    return pages[:-1] if len(pages) > 1 else pages


class _Finder:
    """Finds a paragraph's words on the rendition's pages, moving forward through it."""

    def __init__(self, texts: list[str]) -> None:
        words: list[str] = []
        self.starts: list[int] = []
        for text in texts:
            self.starts.append(len(" ".join(words)) + (1 if words else 0))
            words.extend(_WORD.findall(text.lower()))
        self.text = " ".join(words)
        self.cursor = 0

    def page(self, paragraph: str) -> int | None:
        """The 1-based rendition page where ``paragraph`` starts, or None when not found."""
        words = _WORD.findall(paragraph.lower())
        for start in (0, len(words) // 2):
            probe = " ".join(words[start : start + PROBE_WORDS])
            if len(probe) < 12:
                continue
            at = self.text.find(probe, self.cursor)
            if at == -1:
                at = self.text.find(probe)
            if at != -1:
                self.cursor = at
                return bisect.bisect_right(self.starts, at)
        return None


def apply(extracted: Extracted, rendition: Rendition) -> None:
    """Record the rendition in the document's and pages' metadata (see the module docstring)."""
    meta = extracted.metadata
    if rendition.path is None:
        if rendition.note:
            meta["rendition_note"] = rendition.note
        return
    try:
        texts = page_texts(rendition.path)
    except (OSError, subprocess.SubprocessError) as exc:
        log.warning("the rendition %s could not be read: %s", rendition.path.name, exc)
        meta["rendition_note"] = f"the rendered view could not be read ({type(exc).__name__})"
        return
    slides = extracted.kind in SLIDE_KINDS
    by_section = meta.get("pagination") == "sections"
    info: dict[str, Any] = {"pages": len(texts), "bytes": rendition.path.stat().st_size}
    if slides and len(texts) == len(extracted.pages):
        extracted.pages = [
            replace(p, meta={**p.meta, "rendition_page": p.number}) for p in extracted.pages
        ]
        meta["rendition"] = {**info, "basis": "slides"}
        return
    finder = _Finder(texts)
    pages = []
    for page in extracted.pages:
        found = [n for p in page.text.split("\n\n") if (n := finder.page(p)) is not None]
        if found:
            first, last = found[0], max(found)
            extra: dict[str, Any] = {"rendition_page": first}
            label = page.label
            if by_section and not slides:
                extra["rendition_pages"] = [first, last]
                where = f"p. {first}" if first == last else f"pp. {first}–{last}"
                label = f"{label} · {where} as LibreOffice paginates it"
            page = replace(page, meta={**page.meta, **extra}, label=label)
        pages.append(page)
    extracted.pages = pages
    info["basis"] = "libreoffice" if by_section else ("slides" if slides else "word")
    meta["rendition"] = info
