"""Health: is the service up, and what it holds."""

from __future__ import annotations

from fastapi import APIRouter

from quire import __version__
from quire.api.deps import DbDep
from quire.api.schemas import HealthOut, VectorStatus
from quire.storage import vectors

router = APIRouter(prefix="/api", tags=["health"])


@router.get("/health", response_model=HealthOut)
def health(db: DbDep) -> HealthOut:
    with db.read() as conn:
        counts = conn.exec_driver_sql(
            "SELECT (SELECT count(*) FROM documents), (SELECT count(*) FROM page_chunks), "
            "(SELECT count(*) FROM ingest_jobs WHERE status = 'queued'), "
            "(SELECT count(*) FROM ingest_jobs WHERE status = 'running')"
        ).one()
        meta = vectors.read_meta(conn)
        vec_count = vectors.count(conn) if meta else 0
    return HealthOut(
        status="ok",
        version=__version__,
        documents=counts[0],
        chunks=counts[1],
        jobs_queued=counts[2],
        jobs_running=counts[3],
        vectors=VectorStatus(
            model=meta.model if meta else None,
            dim=meta.dim if meta else None,
            state=meta.state if meta else None,
            count=vec_count,
        ),
    )
