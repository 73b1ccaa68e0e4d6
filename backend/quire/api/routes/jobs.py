"""Ingest jobs: status, and a Server-Sent Events stream of progress."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from quire.api.deps import DbDep
from quire.api.schemas import ErrorOut, IdPath, JobOut
from quire.errors import NotFound
from quire.storage import jobs
from quire.storage.db import Database

router = APIRouter(prefix="/api/jobs", tags=["jobs"])
POLL_S = 0.3
MAX_STREAM_S = 6 * 3600


def _job(db: Database, job_id: int) -> JobOut:
    with db.read() as conn:
        job = jobs.get(conn, job_id)
    if job is None:
        raise NotFound(f"job {job_id} does not exist")
    return JobOut.model_validate(job, from_attributes=True)


@router.get("/{job_id}", response_model=JobOut, responses={404: {"model": ErrorOut}})
def get_job(job_id: IdPath, db: DbDep) -> JobOut:
    return _job(db, job_id)


@router.get(
    "/{job_id}/events",
    responses={200: {"content": {"text/event-stream": {}}}, 404: {"model": ErrorOut}},
)
async def job_events(job_id: IdPath, db: DbDep, request: Request) -> StreamingResponse:
    """``progress`` events whenever the job row changes, then one ``done`` or ``failed``."""
    first = await asyncio.to_thread(_job, db, job_id)

    async def stream() -> AsyncIterator[str]:
        job, last = first, ""
        loop = asyncio.get_running_loop()
        end = loop.time() + MAX_STREAM_S
        while loop.time() < end and not await request.is_disconnected():
            data = job.model_dump_json()
            if data != last:
                last = data
                if job.status in ("done", "failed"):
                    yield f"event: {job.status}\ndata: {data}\n\n"
                    return
                yield f"event: progress\ndata: {data}\n\n"
            await asyncio.sleep(POLL_S)
            job = await asyncio.to_thread(_job, db, job_id)
        yield f"event: timeout\ndata: {json.dumps({'id': job_id})}\n\n"

    return StreamingResponse(
        stream(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
