"""Ingest jobs: status, and a Server-Sent Events stream of progress."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from fastapi import APIRouter, Request
from fastapi.sse import ServerSentEvent

from quire.api.deps import DbDep
from quire.api.schemas import ErrorOut, IdPath, JobOut, stream_error_responses
from quire.api.sse import EventStream
from quire.errors import NotFound
from quire.storage import documents, jobs
from quire.storage.db import Database

router = APIRouter(prefix="/api/jobs", tags=["jobs"])
POLL_S = 0.3
MAX_STREAM_S = 6 * 3600


def _job(db: Database, job_id: int) -> JobOut:
    with db.read() as conn:
        job = jobs.get(conn, job_id)
        if job is None:
            raise NotFound(f"job {job_id} does not exist")
        # Another person's private document's job is no more there than the document.
        if job.document_id is not None and not documents.is_readable(conn, job.document_id):
            raise NotFound(f"job {job_id} does not exist")
        place = jobs.queue_place(conn, job_id)
    out = JobOut.model_validate(job, from_attributes=True)
    if place is not None:
        out.ahead, out.running = place.ahead, place.running
        # Whole 5 s: the progress stream sends a job again when it changes, not every poll.
        out.eta_s = None if place.eta_s is None else 5.0 * round(place.eta_s / 5.0)
    return out


@router.get("/{job_id}", response_model=JobOut, responses={404: {"model": ErrorOut}})
def get_job(job_id: IdPath, db: DbDep) -> JobOut:
    return _job(db, job_id)


@router.get(
    "/{job_id}/events",
    response_class=EventStream,
    responses={
        200: {"model": JobOut, "description": "`progress`, then `done` or `failed` events."},
        **stream_error_responses({404: "No such job", 422: "Malformed job id"}),
    },
)
async def job_events(job_id: IdPath, db: DbDep, request: Request) -> EventStream:
    """``progress`` events whenever the job row changes, then one ``done`` or ``failed``."""
    first = await asyncio.to_thread(_job, db, job_id)

    async def stream() -> AsyncIterator[ServerSentEvent]:
        job, last = first, None
        loop = asyncio.get_running_loop()
        end = loop.time() + MAX_STREAM_S
        while loop.time() < end and not await request.is_disconnected():
            if job != last:
                last = job
                if job.status in ("done", "failed"):
                    yield ServerSentEvent(event=job.status, data=job)
                    return
                yield ServerSentEvent(event="progress", data=job)
            await asyncio.sleep(POLL_S)
            job = await asyncio.to_thread(_job, db, job_id)
        yield ServerSentEvent(event="timeout", data={"id": job_id})

    return EventStream(stream())
