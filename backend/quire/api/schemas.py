"""Response models: what the API promises (and what the OpenAPI schema shows)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field


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
    created_at: datetime
    updated_at: datetime
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


class HealthOut(BaseModel):
    status: Literal["ok"]
    version: str
    documents: int
    chunks: int
    jobs_queued: int
    jobs_running: int
    vectors: VectorStatus


class ErrorBody(BaseModel):
    status: int
    code: str
    message: str
    detail: Any = None


class ErrorOut(BaseModel):
    error: ErrorBody
