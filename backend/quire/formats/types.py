"""Values passed between the ingest stages (pages and chunks are storage's records)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from quire.storage.records import Kind, Page

#: ``progress(stage, fraction)``: stage is "extract" or "ocr", fraction in 0..1.
Progress = Callable[[str, float], None]


@dataclass(frozen=True)
class OutlineEntry:
    """A bookmark: its depth (1 = top), title, page (1-based) and height on the page (from its
    foot, in points, of a page ``page_height`` tall)."""

    level: int
    title: str
    page: int
    top: float | None = None
    page_height: float | None = None

    @property
    def below_the_top(self) -> bool:
        """Whether it points below the top fifth of its page: a running head in the page's
        first line is then not where its section starts."""
        if self.top is None or not self.page_height:
            return False
        return self.top < 0.8 * self.page_height


def no_progress(stage: str, fraction: float) -> None:
    """A progress callback that ignores everything."""


@dataclass
class Extracted:
    """What an extractor returns for one file."""

    kind: Kind
    title: str | None
    author: str | None
    pages: list[Page]
    metadata: dict[str, Any] = field(default_factory=dict)
    #: The PDF's bookmarks; extract_file turns them into heading paths once pages are clean.
    outline: list[OutlineEntry] = field(default_factory=list)
