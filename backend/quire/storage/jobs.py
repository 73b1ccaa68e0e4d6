"""The ingest job queue in ``ingest_jobs``: enqueue, claim atomically, report, finish.

A job is claimed with one ``UPDATE ... RETURNING`` inside ``BEGIN IMMEDIATE``, so two workers
never get the same job. A running job whose worker died (its process is gone on this host, or
its heartbeat is older than ``stale_s``) is claimed again; the pipeline is idempotent, so a
resumed job leaves no duplicate chunks or vectors.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from sqlalchemy import Connection, insert, select, text, update

from quire.storage.db import dialect, id_list, in_ids
from quire.storage.schema import documents, ingest_jobs, utcnow


class JobLost(Exception):
    """This worker no longer owns the job (it was reclaimed as stale): abandon it quietly."""


@dataclass(frozen=True)
class Job:
    id: int
    document_id: int | None
    kind: str
    status: str
    stage: str
    progress: float
    attempts: int
    error: str | None
    detail: dict[str, Any]


def worker_identity() -> str:
    """``host:pid:start``, so a restarted worker can tell that a job's owner is gone."""
    return f"{socket.gethostname()}:{os.getpid()}:{int(utcnow().timestamp())}"


def _owner_dead(worker_id: str | None) -> bool:
    if not worker_id:
        return True
    host, _, rest = worker_id.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def from_row(row: Any) -> Job:
    m = row._mapping
    return Job(
        id=m["id"],
        document_id=m["document_id"],
        kind=m["kind"],
        status=m["status"],
        stage=m["stage"],
        progress=m["progress"],
        attempts=m["attempts"],
        error=m["error"],
        detail=m["detail"] or {},
    )


def enqueue(conn: Connection, document_id: int | None, kind: str = "ingest") -> int:
    """Queue a job; returns its id. An unfinished job for the same document is reused."""
    # Two writers (API replicas, a reingest clicked twice) must not both find no open job and
    # both insert one: one at a time per document (or kind), until commit.
    dialect(conn).serialize(
        conn, f"quire.enqueue:{document_id if document_id is not None else kind}"
    )
    same = (
        ingest_jobs.c.document_id == document_id
        if document_id is not None
        else ingest_jobs.c.kind == kind
    )
    existing = conn.execute(
        select(ingest_jobs.c.id).where(same, ingest_jobs.c.status.in_(("queued", "running")))
    ).first()
    if existing:
        return int(existing[0])
    result = conn.execute(
        insert(ingest_jobs).values(
            document_id=document_id,
            kind=kind,
            status="queued",
            stage="queued",
            progress=0.0,
            attempts=0,
            created_at=utcnow(),
            detail={},
        )
    )
    return int(result.inserted_primary_key[0])  # type: ignore[index]


#: PostgreSQL: workers on several machines claim at once; each skips the rows another holds
#: (SQLite's one writer at a time needs nothing).
def claim(conn: Connection, worker_id: str, stale_s: float) -> Job | None:
    """Take the oldest runnable job (queued, or running with a dead owner); call in write()."""
    now = utcnow()
    stale_before = now - timedelta(seconds=stale_s)
    running = conn.execute(
        select(ingest_jobs.c.id, ingest_jobs.c.worker_id, ingest_jobs.c.heartbeat).where(
            ingest_jobs.c.status == "running"
        )
    ).all()
    reclaimable = [
        r.id for r in running if _owner_dead(r.worker_id) or (r.heartbeat or now) < stale_before
    ]
    row = conn.execute(
        text(
            # A job taken is "starting" until its first stage reports, not still "queued".
            "UPDATE ingest_jobs SET status = 'running', worker_id = :w, heartbeat = :now, "
            "stage = CASE WHEN stage = 'queued' THEN 'starting' ELSE stage END, "
            "attempts = attempts + 1, started_at = coalesce(started_at, :now), error = NULL "
            "WHERE id = (SELECT id FROM ingest_jobs WHERE "
            "(status = 'queued' AND (not_before IS NULL OR not_before <= :now)) "
            f"OR {in_ids(conn, 'id', 're')} ORDER BY id LIMIT 1{dialect(conn).skip_locked}) "
            "RETURNING id"
        ),
        {"w": worker_id, "now": now, "re": id_list(conn, reclaimable)},
    ).first()
    return get(conn, row[0]) if row else None


def any_queued(conn: Connection) -> bool:
    """Whether a job waits to be claimed (idle work such as term_postings.refresh yields)."""
    row = conn.exec_driver_sql("SELECT 1 FROM ingest_jobs WHERE status = 'queued' LIMIT 1")
    return row.first() is not None


def _owned_update(conn: Connection, job_id: int, owner: str | None, values: dict[str, Any]) -> None:
    where = [ingest_jobs.c.id == job_id]
    if owner is not None:
        where.append(ingest_jobs.c.worker_id == owner)
    if conn.execute(update(ingest_jobs).where(*where).values(**values)).rowcount == 0:
        raise JobLost(f"job {job_id} is no longer owned by {owner}")


def report(
    conn: Connection,
    job_id: int,
    *,
    owner: str | None = None,
    stage: str | None = None,
    progress: float | None = None,
    detail: dict[str, Any] | None = None,
) -> None:
    """Record stage/progress and beat the heartbeat (as ``owner``, if given)."""
    values: dict[str, Any] = {"heartbeat": utcnow()}
    if stage is not None:
        values["stage"] = stage
    if progress is not None:
        values["progress"] = max(0.0, min(1.0, progress))
    if detail is not None:
        values["detail"] = detail
    _owned_update(conn, job_id, owner, values)


def finish(
    conn: Connection, job_id: int, detail: dict[str, Any], *, owner: str | None = None
) -> None:
    """Mark a job done."""
    _owned_update(
        conn,
        job_id,
        owner,
        {
            "status": "done",
            "stage": "done",
            "progress": 1.0,
            "finished_at": utcnow(),
            "heartbeat": utcnow(),
            "detail": detail,
            "error": None,
        },
    )


def fail(
    conn: Connection,
    job_id: int,
    error: str,
    *,
    retry_at: datetime | None = None,
    owner: str | None = None,
) -> None:
    """Mark a job failed, or back in the queue until ``retry_at`` for a transient error."""
    if retry_at is not None:
        values: dict[str, Any] = {"status": "queued", "not_before": retry_at, "error": error}
    else:
        values = {"status": "failed", "finished_at": utcnow(), "error": error}
    values["worker_id"] = None
    _owned_update(conn, job_id, owner, values)


def get(conn: Connection, job_id: int) -> Job | None:
    """One job by id."""
    row = conn.execute(select(ingest_jobs).where(ingest_jobs.c.id == job_id)).first()
    return from_row(row) if row else None


def get_many(conn: Connection, job_ids: Iterable[int]) -> dict[int, Job]:
    """Jobs by id, in one query (ids that do not exist are left out)."""
    ids = list(job_ids)
    if not ids:
        return {}
    rows = conn.execute(select(ingest_jobs).where(ingest_jobs.c.id.in_(ids)))
    return {int(r.id): from_row(r) for r in rows}


def latest_for_document(conn: Connection, document_id: int) -> Job | None:
    """The newest job of a document."""
    row = conn.execute(
        select(ingest_jobs)
        .where(ingest_jobs.c.document_id == document_id)
        .order_by(ingest_jobs.c.id.desc())
        .limit(1)
    ).first()
    return from_row(row) if row else None


#: Finished ingest jobs whose time per byte makes the estimate (the latest ones).
RATE_SAMPLE = 20
#: Below this progress a running job's own pace says too little: the library's decides.
MIN_PACE_PROGRESS = 0.1
#: Sizes must differ this much before time is taken to grow with size.
SIZE_SPREAD = 4


@dataclass(frozen=True)
class QueuePlace:
    """Where a job stands: files to be taken before it, and the seconds until it is done,
    estimated from how long this library's last files took (None before any finished)."""

    ahead: int
    running: int
    eta_s: float | None


@dataclass(frozen=True)
class Pace:
    """A file's expected seconds: ``fixed`` + ``per_mb`` × its size."""

    fixed: float
    per_mb: float

    def seconds(self, byte_size: int | None) -> float:
        return self.fixed + self.per_mb * (byte_size or 0) / 1e6


def queue_place(conn: Connection, job_id: int) -> QueuePlace | None:
    """A queued or running ingest job's place in the queue and its estimate; None otherwise.

    The estimate: this library's pace (``pace``) applied to the jobs ahead and its own, shared
    by the jobs running now (each runs on a worker: at least one); a running job past
    ``MIN_PACE_PROGRESS`` is judged by how fast it has gone so far."""
    j, d = ingest_jobs.c, documents.c
    rows = conn.execute(
        select(j.id, j.status, j.progress, j.started_at, d.byte_size)
        .select_from(ingest_jobs.outerjoin(documents, d.id == j.document_id))
        .where(j.status.in_(("queued", "running")), j.kind == "ingest")
        .order_by(j.id)
    ).all()
    mine = next((r for r in rows if r.id == job_id), None)
    if mine is None:
        return None
    running = [r for r in rows if r.status == "running"]
    ahead = [r for r in rows if r.status == "queued" and r.id < job_id]
    measured = pace(conn)
    if measured is None:
        return QueuePlace(len(ahead), len(running), None)
    now = utcnow()

    def left(r: Any) -> float:
        whole = measured.seconds(r.byte_size)
        if r.status != "running":
            return whole
        if r.started_at is not None and r.progress >= MIN_PACE_PROGRESS:
            spent = float((now - r.started_at).total_seconds())
            done = float(r.progress)
            return max(0.0, spent * (1 - done) / done)
        return whole * (1 - float(r.progress))

    if mine.status == "running":
        eta = left(mine)
    else:
        eta = sum(left(r) for r in running + ahead) / max(1, len(running)) + left(mine)
    return QueuePlace(len(ahead), len(running), round(eta, 1))


def pace(conn: Connection) -> Pace | None:
    """How long this library's files take, from its last ``RATE_SAMPLE`` finished ingest jobs:
    a least-squares line of seconds over size when their sizes differ enough to tell (the
    largest at least ``SIZE_SPREAD`` times the smallest), else their median time, whatever
    the size; None before any finished."""
    j, d = ingest_jobs.c, documents.c
    rows = conn.execute(
        select(j.started_at, j.finished_at, d.byte_size)
        .select_from(ingest_jobs.join(documents, d.id == j.document_id))
        .where(
            j.status == "done",
            j.kind == "ingest",
            j.started_at.is_not(None),
            j.finished_at.is_not(None),
        )
        .order_by(j.id.desc())
        .limit(RATE_SAMPLE)
    ).all()
    if not rows:
        return None
    mb = np.array([(r.byte_size or 0) / 1e6 for r in rows])
    secs = np.array([(r.finished_at - r.started_at).total_seconds() for r in rows])
    if len(rows) >= 2 and mb.max() >= SIZE_SPREAD * max(mb.min(), 1e-3):
        slope = float(np.polyfit(mb, secs, 1)[0])
        per_mb = max(0.0, slope)
        return Pace(max(0.0, float(secs.mean() - per_mb * mb.mean())), per_mb)
    return Pace(float(np.median(secs)), 0.0)
