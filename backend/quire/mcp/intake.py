"""``ingest`` over MCP: a file or folder on the server's machine, or a URL, added to the library
and queued for the worker. It writes, so it is refused unless ``QUIRE_MCP_INGEST`` is on, and
it reads only inside ``QUIRE_MCP_INGEST_DIRS`` and downloads only under ``QUIRE_MCP_INGEST_URLS``.

    result = await intake.ingest(settings, db, "~/Papers/attention.pdf")
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from quire.config import Settings
from quire.errors import (
    Forbidden,
    InputError,
    NotFound,
)
from quire.ingest.intake import Intake, add_file
from quire.mcp import schemas
from quire.mcp.citations import document_uri
from quire.storage import jobs
from quire.storage.db import Database
from quire.web.fetch import Fetcher
from quire.web.links import add_link

log = logging.getLogger(__name__)

MAX_FILES = 500  # one call; a bigger folder is for `quire ingest` on the server
NOTE = (
    "Queued for the ingest worker (`quire worker`, which `make run` starts); list_documents "
    "shows each document's status, and it is searchable once ready."
)


async def ingest(settings: Settings, db: Database, target: str) -> schemas.IngestResult:
    """Add ``target``: an http(s) URL under an allowed prefix, else a path in an allowed folder."""
    if not settings.mcp_ingest:
        raise Forbidden(
            "ingest is switched off on this Quire server: it writes to the library. "
            "Its owner can set QUIRE_MCP_INGEST=true (and QUIRE_MCP_INGEST_DIRS or "
            "QUIRE_MCP_INGEST_URLS for what may be added)."
        )
    target = target.strip()
    if target.lower().startswith(("http://", "https://")):
        intakes = [(target, await _download(settings, db, target))]
    else:
        intakes = await asyncio.to_thread(_add_paths, settings, db, target)
    with db.read() as conn:
        states = jobs.get_many(conn, (i.job_id for _, i in intakes if i.job_id is not None))
    files = []
    for name, i in intakes:
        job = states.get(i.job_id) if i.job_id is not None else None
        files.append(
            schemas.Ingested(
                path=name,
                document_id=i.document_id,
                job_id=i.job_id,
                status=i.status,
                job_status=job.status if job is not None else None,  # type: ignore[arg-type]
                kind=i.kind,
                resource=document_uri(i.document_id),
            )
        )
    return schemas.IngestResult(files=files, note=NOTE)


# -- files on this machine ------------------------------------------------------------------
def _add_paths(settings: Settings, db: Database, target: str) -> list[tuple[str, Intake]]:
    allowed = settings.mcp_ingest_dir_list
    if not allowed:
        raise Forbidden(
            "this server lets MCP clients add no files from its disk: QUIRE_MCP_INGEST_DIRS "
            "(the folders it may read) is empty"
        )
    try:
        path = Path(target).expanduser().resolve(strict=True)
    except (OSError, RuntimeError):
        raise NotFound(f"no such file or folder on the Quire server: {target}") from None
    if not _inside(path, allowed):
        raise Forbidden(
            f"{path} is outside the folders this server lets MCP clients add from "
            f"(QUIRE_MCP_INGEST_DIRS: {', '.join(map(str, allowed))})"
        )
    # A symlink in an allowed folder may point out of it: what it points at decides.
    files = [f for f in _files(path) if _inside(f, allowed)]
    if not files:
        raise InputError(f"{path}: no files to add (hidden files are skipped)")
    if len(files) > MAX_FILES:
        raise InputError(
            f"{path} holds {len(files)} files; one call adds at most {MAX_FILES} "
            "(on the server, `quire ingest FOLDER` adds any number)"
        )
    out = []
    for f in files:
        intake = add_file(
            db,
            settings.files_dir,
            f,
            f.name,
            max_bytes=settings.max_upload_bytes,
            source_key=f"path:{f}",  # the key `quire ingest` gives the same file
        )
        out.append((str(f), intake))
    return out


def _inside(path: Path, folders: list[Path]) -> bool:
    return any(path.is_relative_to(d) for d in folders)


def _files(path: Path) -> list[Path]:
    """``path``, or the files in it and below (hidden ones skipped), resolved."""
    if path.is_file():
        return [path]
    return [
        f.resolve()
        for f in sorted(path.rglob("*"))
        if f.is_file() and not any(part.startswith(".") for part in f.relative_to(path).parts)
    ]


# -- downloads --------------------------------------------------------------------------------
def url_allowed(url: str, prefixes: list[str]) -> bool:
    """Whether ``url`` is under one of ``prefixes``: the same scheme and host (and port), and
    a path at or below the prefix's, segment by segment (``/pdf`` allows ``/pdf/1``, not
    ``/pdfx``)."""
    got = urlsplit(url)
    if got.username is not None or got.password is not None:
        return False
    for prefix in prefixes:
        want = urlsplit(prefix)
        if (got.scheme.lower(), got.netloc.lower()) != (want.scheme.lower(), want.netloc.lower()):
            continue
        base = want.path.rstrip("/")
        if not base or got.path == base or got.path.startswith(base + "/"):
            return True
    return False


async def _download(settings: Settings, db: Database, url: str) -> Intake:
    """Add ``url`` as a link (web/links.py: the safe fetcher, the link's source key), each
    address on the way, redirects included, under an allowed prefix."""
    prefixes = settings.mcp_ingest_url_list
    if not url_allowed(url, prefixes):
        allowed = ", ".join(prefixes) if prefixes else "none"
        raise Forbidden(
            f"{url} is not under a URL prefix this server allows (QUIRE_MCP_INGEST_URLS: {allowed})"
        )

    def under_a_prefix(target: str) -> None:
        if not url_allowed(target, prefixes):
            raise Forbidden(
                f"the download redirected to {target}, which is not under an allowed URL "
                "prefix (QUIRE_MCP_INGEST_URLS)"
            )

    def add() -> Intake:
        # The hosts of the prefixes are the owner's choice, an intranet's included.
        hosts = [str(httpx.URL(p).host) for p in prefixes]
        with Fetcher(settings, allow=hosts, hop_check=under_a_prefix) as fetcher:
            return add_link(db, settings, url, fetcher=fetcher).intake

    return await asyncio.to_thread(add)
