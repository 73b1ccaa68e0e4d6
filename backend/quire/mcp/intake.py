"""``ingest`` over MCP: a file or folder on the server's machine, or a URL, added to the library
and queued for the worker. It writes, so it is refused unless ``QUIRE_MCP_INGEST`` is on, and
it reads only inside ``QUIRE_MCP_INGEST_DIRS`` and downloads only under ``QUIRE_MCP_INGEST_URLS``.

    result = await intake.ingest(settings, db, "~/Papers/attention.pdf")
"""

from __future__ import annotations

import asyncio
import email.message
import logging
import os
import tempfile
from pathlib import Path
from typing import IO
from urllib.parse import unquote, urljoin, urlsplit

import httpx

from quire.config import Settings
from quire.errors import (
    FileTooLarge,
    Forbidden,
    InputError,
    NotFound,
    ServiceUnavailable,
)
from quire.ingest.intake import Intake, add_file
from quire.mcp import schemas
from quire.mcp.citations import document_uri
from quire.storage import jobs
from quire.storage.db import Database

log = logging.getLogger(__name__)

MAX_FILES = 500  # one call; a bigger folder is for `quire ingest` on the server
MAX_REDIRECTS = 5
DOWNLOAD_TIMEOUT_S = 60.0
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
    prefixes = settings.mcp_ingest_url_list
    if not url_allowed(url, prefixes):
        allowed = ", ".join(prefixes) if prefixes else "none"
        raise Forbidden(
            f"{url} is not under a URL prefix this server allows (QUIRE_MCP_INGEST_URLS: {allowed})"
        )
    tmp_dir = settings.data_dir / "tmp"
    tmp_dir.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=tmp_dir, prefix="mcp-download-")
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as out:
            filename = await _fetch(url, prefixes, out, settings.max_upload_bytes)
        return await asyncio.to_thread(
            add_file,
            db,
            settings.files_dir,
            tmp,
            filename,
            max_bytes=settings.max_upload_bytes,
            source_key=f"url:{url}",
            move=True,
        )
    finally:
        tmp.unlink(missing_ok=True)


async def _fetch(url: str, prefixes: list[str], out: IO[bytes], max_bytes: int) -> str:
    """Stream ``url`` into ``out``, following redirects that stay allowed; the file's name."""
    async with httpx.AsyncClient(timeout=DOWNLOAD_TIMEOUT_S, follow_redirects=False) as http:
        for _ in range(MAX_REDIRECTS + 1):
            try:
                async with http.stream("GET", url) as r:
                    if r.is_redirect and "location" in r.headers:
                        url = urljoin(url, r.headers["location"])
                        if not url_allowed(url, prefixes):
                            raise Forbidden(
                                f"the download redirected to {url}, which is not under an "
                                "allowed URL prefix (QUIRE_MCP_INGEST_URLS)"
                            )
                        continue
                    if r.status_code != 200:
                        raise InputError(f"{url}: the server answered HTTP {r.status_code}")
                    size = 0
                    async for block in r.aiter_bytes(1 << 20):
                        size += len(block)
                        if size > max_bytes:
                            raise FileTooLarge(
                                f"{url}: over the {max_bytes / 1024 / 1024:.0f} MB limit"
                            )
                        out.write(block)
                    return _filename(url, r.headers.get("content-disposition"))
            except httpx.HTTPError as exc:
                raise ServiceUnavailable(f"{url}: the download failed ({exc})") from exc
    raise InputError(f"{url}: more than {MAX_REDIRECTS} redirects")


def _filename(url: str, disposition: str | None) -> str:
    if disposition:
        header = email.message.Message()
        header["content-disposition"] = disposition
        name = header.get_filename()
        if name:
            return name
    return unquote(urlsplit(url).path.rsplit("/", 1)[-1]) or "download"
