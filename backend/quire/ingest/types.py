"""Values passed between the ingest stages."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

Kind = Literal["pdf", "epub", "perplexity", "markdown", "text"]
Source = Literal["text_layer", "ocr", "markdown", "epub", "text"]

#: ``progress(stage, fraction)``: stage is "extract" or "ocr", fraction in 0..1.
Progress = Callable[[str, float], None]


def no_progress(stage: str, fraction: float) -> None:
    """A progress callback that ignores everything."""


@dataclass(frozen=True)
class Page:
    """One citable unit: a PDF page, an EPUB section, a Perplexity turn, a markdown section."""

    number: int  # 1-based
    text: str
    heading_path: str = ""  # "Chapter 3 > The Voyage"
    source: Source = "text_layer"
    meta: dict[str, Any] = field(default_factory=dict)  # e.g. a Perplexity turn's query and URLs


@dataclass
class Extracted:
    """What an extractor returns for one file."""

    kind: Kind
    title: str | None
    author: str | None
    pages: list[Page]
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Chunk:
    """A passage stored in ``page_chunks``; never spans two pages."""

    page: int
    ordinal: int  # position within the page, from 0
    heading_path: str
    text: str
    content_hash: str  # sha256 of the text
    source: Source
