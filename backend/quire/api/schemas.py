"""Response models: what the API promises (and what the OpenAPI schema shows)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import Path
from pydantic import AfterValidator, BaseModel, Field


def _as_utc(value: datetime) -> datetime:
    # SQLite keeps naive UTC. Said out loud ("...Z"), so that a browser's Date does not read
    # it as local time, and it is the RFC 3339 date-time the schema promises.
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


UtcDateTime = Annotated[datetime, AfterValidator(_as_utc)]

# SQLite integers are 64-bit: a bigger id cannot exist, and cannot even be bound to a query
# (it raised OverflowError, a 500, until the fuzzer found it).
MAX_ID = 2**63 - 1
Id = Annotated[int, Field(ge=1, le=MAX_ID)]
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


class JobBrief(BaseModel):
    id: int
    status: str
    stage: str
    progress: float
    error: str | None = None


class DocumentOut(BaseModel):
    id: int
    kind: str
    title: str | None
    author: str | None
    filename: str
    sha256: str
    byte_size: int
    page_count: int
    chunk_count: int
    status: Literal["queued", "processing", "ready", "failed"]
    error: str | None
    created_at: UtcDateTime
    updated_at: UtcDateTime
    metadata: dict[str, Any]
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
    kind: str | None = None
    error: UploadError | None = None


class UploadResponse(BaseModel):
    files: list[UploadResult]


class PageChunk(BaseModel):
    id: int
    ordinal: int
    text: str


class PageOut(BaseModel):
    document_id: int
    page: int
    page_count: int
    heading_path: str
    text: str
    source: str
    metadata: dict[str, Any]
    chunks: list[PageChunk]


class PageBrief(BaseModel):
    page: int
    heading_path: str
    chars: int
    source: str


class PageList(BaseModel):
    document_id: int
    pages: list[PageBrief]


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


class ErrorBody(BaseModel):
    status: int
    code: str
    message: str
    detail: Any = None


class ErrorOut(BaseModel):
    error: ErrorBody
