"""Response models: what the API promises (and what the OpenAPI schema shows)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import Path
from pydantic import AfterValidator, BaseModel, Field

from quire.errors import ErrorBody
from quire.storage.records import MAX_ID, DocumentStatus, Kind, Origin, Placed, Visibility


def _as_utc(value: datetime) -> datetime:
    # SQLite keeps naive UTC. Said out loud ("...Z"), so that a browser's Date does not read
    # it as local time, and it is the RFC 3339 date-time the schema promises.
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


UtcDateTime = Annotated[datetime, AfterValidator(_as_utc)]

IdPath = Annotated[int, Path(ge=1, le=MAX_ID)]


class JobOut(BaseModel):
    id: int
    document_id: int | None = None
    kind: str = "ingest"
    status: Literal["queued", "running", "done", "failed"]
    stage: str
    progress: float = Field(ge=0, le=1, description="Overall progress 0..1.")
    attempts: int = 0
    error: str | None = None
    detail: dict[str, Any] = Field(default_factory=dict)
    ahead: int | None = Field(
        default=None,
        description="Queued or running: files the workers take before this one (0: next).",
    )
    running: int | None = Field(default=None, description="Files being read now.")
    eta_s: float | None = Field(
        default=None,
        description="Estimated seconds until it is done, from how fast this library's last "
        "files went; null before any has finished.",
    )


class JobBrief(BaseModel):
    id: int
    status: str
    stage: str
    progress: float = Field(description="The whole job's progress, 0 to 1.")
    stage_progress: float | None = Field(
        default=None, description="How far the current stage is (embed: the share of chunks)."
    )
    error: str | None = None


class DocumentOut(BaseModel):
    id: int
    kind: Kind
    title: str | None
    author: str | None
    filename: str
    sha256: str
    byte_size: int
    page_count: int
    chunk_count: int
    status: DocumentStatus = Field(
        description="queued, processing, searchable (its chunks are in: keyword search finds "
        "it while its vectors are made; `job.progress` says how far), ready, failed.",
    )
    error: str | None
    created_at: UtcDateTime
    updated_at: UtcDateTime
    metadata: dict[str, Any]
    language: str | None = Field(
        description="Detected at ingest: en, fr, ja, zh-Hans, zh-Hant, ar … (null: too little "
        "text to tell).",
    )
    origin: Origin = Field(
        description="Where it came from: upload (also `quire ingest`, MCP), folder (a watched "
        "folder), chatgpt, claude, perplexity, zotero, web (an MCP download). Details (the "
        "folder, the Zotero item) are in metadata.origin.",
    )
    visibility: Visibility = Field(
        default="team",
        description="team: every person of the library reads it; private: only its owner.",
    )
    owner: str | None = Field(
        default=None, description="The person who added it (null: no people, or a sync)."
    )
    can_change: bool = Field(
        default=True,
        description="Whether the one asking may delete or re-ingest it (its owner, an admin "
        "for a team document, anyone without people).",
    )
    job: JobBrief | None = None


class DocumentList(BaseModel):
    documents: list[DocumentOut]


class UploadError(BaseModel):
    status: int
    code: str
    message: str


class UploadResult(BaseModel):
    filename: str
    status: Literal["queued", "duplicate", "updated", "requeued", "rejected"]
    document_id: int | None = None
    job_id: int | None = None
    kind: Kind | None = None
    error: UploadError | None = None


class UploadResponse(BaseModel):
    files: list[UploadResult]


class PageChunk(BaseModel):
    id: int
    ordinal: int
    text: str


class PageOut(Placed):
    document_id: int
    kind: Kind
    page: int
    page_count: int
    page_label: str | None = Field(
        default=None, description="The printed page label (PDF /PageLabels), when it differs."
    )
    heading_path: str
    text: str
    source: str
    metadata: dict[str, Any]
    chunks: list[PageChunk]


class PageBrief(Placed):
    kind: Kind
    page: int
    page_label: str | None = Field(
        default=None, description="The printed page label (PDF /PageLabels), when it differs."
    )
    heading_path: str
    chars: int
    source: str


class OutlineEntry(BaseModel):
    """A section of the document at the page it starts on."""

    title: str
    level: int = Field(description="1 for a chapter, 2 for its sections, …")
    page: int
    place: str = Field(description='The page as Quire names it, e.g. "p. 3 (PDF p. 20)".')


class PageList(BaseModel):
    document_id: int
    pages: list[PageBrief]
    outline: list[OutlineEntry] = Field(
        description="The sections in reading order (PDF outline or headings, EPUB chapters, "
        "slide titles, sheets, headings); empty when the document has none."
    )


class VectorStatus(BaseModel):
    model: str | None
    dim: int | None
    state: str | None
    count: int


class EmbedderStatus(BaseModel):
    name: str = Field(description="The configured embedder, e.g. local:all-MiniLM-L6-v2-int8.")
    dim: int | None = Field(description="Its vector size, as the vector store records it.")


class RerankerStatus(BaseModel):
    model: str = Field(description="Where the cross-encoder is looked for.")
    loaded: bool
    error: str | None = None


class FormatOut(BaseModel):
    formats: str = Field(description="A group of formats, e.g. legacy .doc, .ppt, .xls and .rtf.")
    enabled: bool
    why: str = Field(description="The tool found, or what to install to read them.")


class HealthOut(BaseModel):
    status: Literal["ok"]
    version: str
    documents: int
    chunks: int
    jobs_queued: int
    jobs_running: int
    vectors: VectorStatus
    embedder: EmbedderStatus | None = None
    reranker: RerankerStatus | None = None
    formats: list[FormatOut] = Field(default_factory=list)
    warm: bool = Field(
        default=False,
        description="Whether search has loaded what it needs (QUIRE_WARM_UP, at start, in the "
        "background): until then the first question is slower than the rest.",
    )


class LanguagesEmbedder(BaseModel):
    name: str = Field(description="The configured embedder, e.g. ollama:bge-m3.")
    languages: list[str] | None = Field(
        description="The languages it covers; null when multilingual or not known."
    )
    multilingual: bool
    known: bool = Field(description="Whether its languages are known (by name or setting).")


class LibraryLanguage(BaseModel):
    language: str = Field(description="The tag stored with each document: en, ja, zh-Hant …")
    name: str = Field(description="Its English name, e.g. Japanese.")
    documents: int
    chunks: int
    covered: bool | None = Field(
        description="Whether the embedder covers it (null: the embedder's languages are unknown)."
    )


class LanguagesOut(BaseModel):
    embedder: LanguagesEmbedder
    languages: list[LibraryLanguage] = Field(description="Most chunks first.")
    undetected: int = Field(description="Ready documents whose language could not be told.")
    hint: str | None = Field(
        description="What to set when a language is not covered (or the coverage is unknown)."
    )


class OriginCount(BaseModel):
    origin: Origin
    documents: int
    chunks: int


class SourceRun(BaseModel):
    source: Literal["chatgpt", "claude", "perplexity", "zotero", "folder"]
    location: str = Field(description="The export, Zotero library or folder that was read.")
    started_at: UtcDateTime
    finished_at: UtcDateTime
    ok: bool
    summary: dict[str, Any] = Field(description="What it did: new, updated, unchanged, … .")
    error: str | None = Field(description="Why it failed (ok is false).")


class WatchedFolder(BaseModel):
    path: str
    configured: bool = Field(description="Named in QUIRE_WATCH_DIRS (else: only `quire watch`).")
    exists: bool = Field(description="False: the folder is gone or unmounted.")
    documents: int
    removed: int = Field(description="Documents whose file left the folder (hidden, kept).")
    last_run: SourceRun | None = Field(description="The last pass that changed something.")


class FacetCount(BaseModel):
    name: str
    documents: int


class SourcesOut(BaseModel):
    origins: list[OriginCount] = Field(description="Documents by where they came from.")
    watched_folders: list[WatchedFolder]
    imports: list[SourceRun] = Field(
        description="The last import of each export or library, newest first."
    )
    collections: list[FacetCount] = Field(description="Zotero collections (paths), A–Z.")
    tags: list[FacetCount] = Field(description="Zotero tags, A–Z.")


class ErrorOut(BaseModel):
    error: ErrorBody


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` for these error statuses, each in the one error shape."""
    return {status: {"model": ErrorOut} for status in statuses}


def stream_error_responses(described: dict[int, str]) -> dict[int | str, dict[str, Any]]:
    """The same for a streaming route: its errors come before the stream starts, as JSON.
    (With a ``model``, FastAPI would list them under the route's own media type.)"""
    json_error = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}}
    return {
        status: {"description": description, "content": json_error}
        for status, description in described.items()
    }


class MeUser(BaseModel):
    id: int
    name: str
    admin: bool


class MeOut(BaseModel):
    """Who the request reads as."""

    mode: Literal["single", "people"] = Field(
        description="single: a one-person library (no sign-in); people: each person signs in "
        "with their own token (quire users)."
    )
    user: MeUser | None = Field(
        description="The signed-in person (null: single mode, or the service token)."
    )
