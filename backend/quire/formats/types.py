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
    """A bookmark: its depth (1 = top), title, page (1-based) and height on the page."""

    level: int
    title: str
    page: int
    top: float | None = None


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
