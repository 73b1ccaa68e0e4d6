"""Links: add a page (or the file behind a link) by its address, fetched by the server or sent
by the browser extension; add the pages a Perplexity thread cites, with progress."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from fastapi.sse import ServerSentEvent
from pydantic import BaseModel, Field, RootModel

from quire.api.deps import DbDep, SettingsDep
from quire.api.schemas import (
    DocumentOut,
    IdPath,
    JobOut,
    error_responses,
    stream_error_responses,
)
from quire.api.sse import EventStream
from quire.config import Settings
from quire.errors import ErrorBody
from quire.storage import access, documents, jobs
from quire.storage.db import Database
from quire.storage.records import Visibility
from quire.web import sources
from quire.web.fetch import Fetcher
from quire.web.links import AddedLink, LinkStatus, add_link

router = APIRouter(prefix="/api/documents", tags=["links"])
#: Links fetched at once when a thread's sources are added.
SOURCE_FETCHES = 3


class LinkIn(BaseModel):
    url: str = Field(min_length=1, max_length=8192, description="The page's http(s) address.")
    html: str | None = Field(
        default=None,
        description="The page as the browser rendered it (the extension): stored for `url` "
        "without fetching anything.",
    )
    title: str | None = Field(
        default=None, max_length=2000, description="The page's title, if the reader finds none."
    )
    visibility: Visibility = Field(
        default="team",
        description="team (default): every person of the library reads it; private: only you.",
    )


class LinkOut(BaseModel):
    status: LinkStatus = Field(
        description="added; updated (known address, changed content: read again); unchanged."
    )
    document: DocumentOut
    job: JobOut | None = Field(description="The ingest job queued (null when unchanged).")


def _link_out(db: Database, added: AddedLink) -> LinkOut:
    with db.read() as conn:
        doc = documents.get_document(conn, added.intake.document_id)
        job = (
            jobs.get(conn, added.intake.job_id)
            if added.intake.job_id is not None and added.status != "unchanged"
            else None
        )
    return LinkOut(
        status=added.status,
        document=DocumentOut.model_validate(doc),
        job=JobOut.model_validate(job, from_attributes=True) if job is not None else None,
    )


def _add(db: Database, settings: Settings, body: LinkIn) -> LinkOut:
    with Fetcher(settings) as fetcher:
        added = add_link(db, settings, body.url, fetcher=fetcher, html=body.html, title=body.title)
    return _link_out(db, added)


@router.post(
    "/url",
    status_code=202,
    response_model=LinkOut,
    responses={
        200: {"model": LinkOut, "description": "Already in the library, unchanged."},
        **error_responses(403, 413, 415, 422, 502),
    },
    summary="Add a page or file by its address",
)
async def add_url(body: LinkIn, db: DbDep, settings: SettingsDep) -> JSONResponse:
    """Fetch ``url`` on the server (http/https, public addresses only unless
    QUIRE_FETCH_ALLOW_HOSTS allows; size, time and unpacked-size limits) — or take ``html`` —
    and add it like an upload: 202 added/updated, 200 unchanged."""
    with access.adding(body.visibility):
        out = await asyncio.to_thread(_add, db, settings, body)
    status = 200 if out.status == "unchanged" else 202
    return JSONResponse(out.model_dump(mode="json"), status_code=status)


class SourceOutcomeOut(BaseModel):
    n: int = Field(description="Its place in the thread's list of sources, from 1.")
    url: str
    title: str | None
    status: Literal["added", "updated", "unchanged", "refused"]
    document_id: int | None
    job_id: int | None
    error: ErrorBody | None = Field(description="Why it was refused.")


class SourcesDoneOut(BaseModel):
    document_id: int
    outcomes: list[SourceOutcomeOut]
    counts: dict[str, int] = Field(description="Outcomes by status.")


class SourcesEventOut(RootModel[SourceOutcomeOut | SourcesDoneOut]):
    """An event of the stream: an ``outcome`` (one address done), or the closing ``done``."""


@router.post(
    "/{document_id}/sources/add",
    response_class=EventStream,
    responses={
        200: {
            "model": SourcesEventOut,
            "description": "`outcome` events (one per address, as each is done), then `done`.",
        },
        **stream_error_responses({404: "No such document", 422: "It cites no web pages"}),
    },
    summary="Add the pages a thread cites",
)
async def add_sources(
    document_id: IdPath, db: DbDep, settings: SettingsDep, request: Request
) -> EventStream:
    """Each web page the document (a Perplexity thread) cites, added as ``POST /url`` adds
    one: an ``outcome`` event per address as it is done, then ``done`` with them all."""
    cited = await asyncio.to_thread(sources.cited_pages, db, document_id)
    gate = asyncio.Semaphore(SOURCE_FETCHES)
    reader = access.current()
    # The pages a private thread cites are as private as it (for a person; else the team's).
    with db.read() as conn:
        private = documents.get_document(conn, document_id)["visibility"] == "private"
    visibility: Visibility = "private" if private and reader.person else "team"

    async def stream() -> AsyncIterator[ServerSentEvent]:
        fetcher = Fetcher(settings)
        try:

            async def one(source: sources.CitedPage) -> sources.SourceOutcome:
                async with gate:
                    with access.reading_as(reader), access.adding(visibility):
                        return await asyncio.to_thread(
                            sources.add_source, db, settings, source, fetcher
                        )

            tasks = [asyncio.ensure_future(one(s)) for s in cited]
            done: list[sources.SourceOutcome] = []
            try:
                for next_done in asyncio.as_completed(tasks):
                    outcome = await next_done
                    done.append(outcome)
                    yield ServerSentEvent(
                        event="outcome", data=SourceOutcomeOut.model_validate(outcome.as_dict())
                    )
                    if await request.is_disconnected():
                        break
            finally:
                for task in tasks:
                    task.cancel()
            done.sort(key=lambda o: o.n)
            yield ServerSentEvent(
                event="done",
                data=SourcesDoneOut(
                    document_id=document_id,
                    outcomes=[SourceOutcomeOut.model_validate(o.as_dict()) for o in done],
                    counts=sources.counts(done),
                ),
            )
        finally:
            fetcher.close()

    return EventStream(stream())
