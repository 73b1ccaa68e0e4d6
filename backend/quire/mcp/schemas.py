"""What the MCP tools return: one model per result, each a tool's output schema, so a client
can check and an assistant can read every field's meaning."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from quire.errors import ErrorBody
from quire.retrieval.options import Strategy
from quire.storage.records import DocumentStatus, JobStatus, Kind, Origin, PageSource
from quire.storage.web_sources import WebSource
from quire.synthesis.events import AnswerMode

_PAGE = "1-based page (PDF), section (EPUB, markdown), turn (Perplexity) or part (text)."


class Place(BaseModel):
    """A citable page of a document, and how to cite and open it."""

    document_id: int
    title: str
    kind: Kind
    page: int = Field(description=_PAGE)
    page_label: str | None = Field(
        default=None,
        description="The printed page label (PDF /PageLabels), e.g. 'xii' or '166'; None when "
        "the PDF has none or it equals the page number",
    )
    heading_path: str = Field(description="Chapter > Section of the page (may be empty).")
    place: str = Field(
        description='Where it is, as Quire names it everywhere: "p. 166 (PDF p. 188)", '
        '"Chapter 60 · The Return", "turn 2", "slide 14 · Results".'
    )
    citation: str = Field(description='How to cite it, e.g. "Title, p. 12 — Chapter > Section".')
    link: str | None = Field(
        description="The original at this page (a PDF opens at the page), or its web address."
    )
    resource: str = Field(description="The page's MCP resource: read it for the full text.")
    web_sources: list[WebSource] = Field(
        default_factory=list,
        description="The web pages the passage's own footnote markers cite (Perplexity, ChatGPT "
        "and Claude turns); empty for other kinds.",
    )


class Hit(Place):
    passage: str = Field(description="The matching passage (a chunk of the page).")
    highlights: list[tuple[int, int]] = Field(
        description="[start, end) character spans in passage that match the query."
    )
    score: float = Field(description="Relevance: the reranker's logit, else the fused score.")


class SearchResult(BaseModel):
    query: str = Field(description="The query as searched (cut to the search's limit).")
    strategy: Strategy
    hits: list[Hit] = Field(description="Best first.")
    notices: list[str] = Field(description="What the search had to change or skip.")


class Source(Place):
    n: int = Field(description="The number the answer cites it by: [n].")
    quote: str = Field(description="The fact (LLM) or sentence (extractive) it supports.")
    passage: str = Field(description="The passage it comes from.")


class Answer(BaseModel):
    question: str
    answer: str = Field(description="Markdown with [n] citations into sources.")
    mode: AnswerMode = Field(
        description="llm: written by the language model from the sources; extractive: quoted "
        "sentences from the passages, no model involved."
    )
    model: str | None = Field(description="The backend that wrote it (null: extractive).")
    extractive_reason: str | None = Field(
        description="Why the answer is extractive (no model reachable, switched off, ...)."
    )
    citations: list[int] = Field(description="The source numbers the answer cites.")
    sources: list[Source]
    notices: list[str]


class PageText(BaseModel):
    page: int = Field(description=_PAGE)
    heading_path: str
    text: str


class Page(Place):
    page_count: int
    text: str = Field(description="The page's whole text.")
    extracted_by: PageSource = Field(
        description="Where the text came from (ocr: recognised from a scan)."
    )
    previous: PageText | None = Field(description="The page before (with context), if any.")
    next: PageText | None = Field(description="The page after (with context), if any.")


class Document(BaseModel):
    id: int
    title: str
    author: str | None
    kind: Kind
    filename: str
    source: str | None = Field(
        description="Where it came from: path:/… (a file on the server), url:…, perplexity:…, "
        "or null (uploaded)."
    )
    origin: Origin = Field(
        description="Where it came from: upload, folder, chatgpt, claude, perplexity, zotero, web."
    )
    status: DocumentStatus = Field(
        description="queued, processing, searchable (by keywords, while its vectors are made), "
        "ready, failed."
    )
    error: str | None
    page_count: int
    chunk_count: int
    language: str | None = Field(
        default=None,
        description="Detected language: en, fr, ja, zh-Hant, ar … (null: too little text).",
    )
    created_at: datetime = Field(description="When it was added (UTC).")
    resource: str = Field(description="The document's MCP resource (metadata and page list).")


class DocumentList(BaseModel):
    documents: list[Document] = Field(description="Newest first.")
    total: int = Field(description="How many match the filters (documents may be fewer).")


class Ingested(BaseModel):
    path: str = Field(description="The file or URL that was added.")
    document_id: int
    job_id: int | None
    status: Literal["queued", "duplicate", "updated", "requeued"] = Field(
        description="queued: new; duplicate: already in the library; updated: a new version of "
        "a known file; requeued: a failed document tried again."
    )
    job_status: JobStatus | None
    kind: Kind
    resource: str


class IngestResult(BaseModel):
    files: list[Ingested]
    note: str = Field(description="What happens next.")


class Failure(BaseModel):
    """An error result's structured content (its text says the same in words)."""

    error: ErrorBody


class Note(BaseModel):
    """One of the user's highlights or notes (docs/using/notes.md)."""

    id: int
    document_id: int | None = Field(description="The document it is on (null: a kept answer).")
    document_title: str | None
    page: int | None = Field(description=_PAGE)
    citation: str = Field(description='How to cite it: "Title, your note on p. 45".')
    quote: str = Field(description="The highlighted passage (may be empty: a note on a page).")
    body: str = Field(description="The note itself, Markdown.")
    tags: list[str]
    status: Literal["ok", "moved", "orphaned"] = Field(
        description="orphaned: the quote is no longer on its page (the document changed)."
    )
    origin: Literal["quire", "zotero"]
    updated_at: datetime


class NoteList(BaseModel):
    notes: list[Note] = Field(description="By document and page.")
    total: int = Field(description="How many match (notes may be fewer).")
    next_offset: int | None = Field(
        default=None, description="The offset of the next notes; null: these are the last."
    )
