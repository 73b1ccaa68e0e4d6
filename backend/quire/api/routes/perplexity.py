"""Perplexity sync: start one in the background, and its status (last run, login, progress)."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter
from pydantic import BaseModel, Field

from quire.api.deps import AdminOnly, SettingsDep, SyncRunnerDep
from quire.api.schemas import ErrorOut
from quire.config import Settings
from quire.sources.perplexity import browser
from quire.sources.perplexity.checkpoint import auth_path
from quire.sources.perplexity.status import record_login, status_report, sync_running

# The sync is the library's (one account, set up on the server): an admin's, with people.
router = APIRouter(prefix="/api/perplexity", tags=["perplexity"], dependencies=[AdminOnly])


class SyncIn(BaseModel):
    limit: int | None = Field(default=None, ge=1, description="Only the newest N threads.")


class CountsOut(BaseModel):
    listed: int
    changed: int = Field(description="New or changed threads.")
    exported: int
    ingested: int = Field(description="Handed to the library (ingest jobs queued).")
    failed: int
    unchanged: int
    resumed: int = Field(description="Finished by the interrupted run this one resumed.")
    deleted_upstream: int = Field(description="Gone from Perplexity; kept in the library.")


class ThreadErrorOut(BaseModel):
    slug: str
    title: str
    error: str


class RunOut(BaseModel):
    started_at: str
    finished_at: str
    outcome: str = Field(description="ok, or the error code that stopped the run.")
    message: str
    counts: CountsOut
    errors: list[ThreadErrorOut]
    resumed: bool
    limit: int | None
    seconds: float
    requests: int


class CurrentOut(BaseModel):
    started_at: str | None
    total: int = Field(description="Threads to visit (0 while listing).")
    thread: str = Field(description="The thread being synced, or the phase.")
    counts: CountsOut


class LoginOut(BaseModel):
    saved: bool = Field(description="A login (browser storage state) is saved.")
    saved_at: str | None
    valid: bool | None = Field(
        description="The last session check passed and has not expired (None: not checked)."
    )
    checked_at: str | None
    expires: str | None
    user: str | None


class ThreadsOut(BaseModel):
    synced: int
    deleted_upstream: int = Field(description="Gone from Perplexity; kept in the library.")


class PerplexityStatusOut(BaseModel):
    running: bool
    current: CurrentOut | None = Field(description="The running sync's progress.")
    last_run: RunOut | None
    login: LoginOut
    threads: ThreadsOut
    base_url: str


def _verify(settings: Settings) -> None:
    """A live session check in a headless browser; the result goes to status.json."""
    if not auth_path(settings).is_file():
        return
    with browser.logged_in_page(settings, headless=True) as page:
        record_login(settings, browser.check_session(page, settings))


@router.post(
    "/sync",
    status_code=202,
    response_model=PerplexityStatusOut,
    responses={409: {"model": ErrorOut}},
)
async def start_sync(
    runner: SyncRunnerDep, settings: SettingsDep, body: SyncIn | None = None
) -> PerplexityStatusOut:
    """Start a sync in the background (409 if one is running or there is no saved login)."""
    runner.start((body or SyncIn()).limit)
    return PerplexityStatusOut.model_validate(await asyncio.to_thread(status_report, settings))


@router.get("/status", response_model=PerplexityStatusOut, responses={503: {"model": ErrorOut}})
async def status(settings: SettingsDep, verify: bool = False) -> PerplexityStatusOut:
    """The last run, the running one, and the login; ``verify=true`` checks the login live
    (a headless browser, a few seconds; skipped while a sync runs, which checks it itself)."""
    if verify and not await asyncio.to_thread(sync_running, settings):
        await asyncio.to_thread(_verify, settings)
    return PerplexityStatusOut.model_validate(await asyncio.to_thread(status_report, settings))
