"""Documents: upload (multipart, many files), list, get, delete, re-ingest, pages, the original
file and its PDF rendition."""

from __future__ import annotations

import asyncio
import logging
import mimetypes
import os
import tempfile
from pathlib import Path
from typing import Annotated, Literal

from fastapi import APIRouter, File, Form, UploadFile, status
from fastapi.responses import FileResponse, JSONResponse, Response

from quire.api.deps import DbDep, SettingsDep
from quire.api.errors import error_response
from quire.api.schemas import (
    DocumentList,
    DocumentOut,
    ErrorOut,
    IdPath,
    JobOut,
    PageList,
    PageOut,
    UploadError,
    UploadResponse,
    UploadResult,
)
from quire.errors import FileTooLarge, NotFound, QuireError
from quire.formats.detect import detect_kind
from quire.formats.image import image_media_type, page_png
from quire.ingest.intake import add_file, safe_filename
from quire.ingest.rendition import RENDERED_KINDS
from quire.sources.chat_import import import_upload
from quire.storage import access, chunks, documents, jobs
from quire.storage.records import Visibility

log = logging.getLogger(__name__)

router = APIRouter(prefix="/api/documents", tags=["documents"])
ERRORS: dict[int | str, dict[str, object]] = {
    404: {"model": ErrorOut},
    413: {"model": ErrorOut},
    415: {"model": ErrorOut},
    422: {"model": ErrorOut},
}
MEDIA_TYPES = {
    "pdf": "application/pdf",
    "epub": "application/epub+zip",
    "perplexity": "text/markdown; charset=utf-8",
    "markdown": "text/markdown; charset=utf-8",
    "text": "text/plain; charset=utf-8",
    "chatgpt": "application/json",
    "claude": "application/json",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "odt": "application/vnd.oasis.opendocument.text",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "odp": "application/vnd.oasis.opendocument.presentation",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "ods": "application/vnd.oasis.opendocument.spreadsheet",
    # A saved web page is never rendered here: its scripts would run in Quire's origin.
    "web": "text/plain; charset=utf-8",
}
IMAGE_TYPES = ("image/png", "image/jpeg", "image/tiff", "image/webp", "image/bmp")


async def _spool(upload: UploadFile, tmp_dir: Path, max_bytes: int) -> Path:
    """Copy an upload to a temp file in the data dir, stopping at the size limit."""
    fd, name = tempfile.mkstemp(dir=tmp_dir, prefix="upload-")
    size = 0
    try:
        with os.fdopen(fd, "wb") as out:
            while block := await upload.read(1 << 20):
                size += len(block)
                if size > max_bytes:
                    raise FileTooLarge(
                        f"{upload.filename}: over the {max_bytes / 1024 / 1024:.0f} MB limit"
                    )
                out.write(block)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return Path(name)


@router.post(
    "",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=UploadResponse,
    responses=ERRORS,
    summary="Upload one or more files",
)
async def upload_documents(
    db: DbDep,
    settings: SettingsDep,
    files: Annotated[
        list[UploadFile],
        File(description="PDF, EPUB, Office, Perplexity markdown, md, txt, page images"),
    ],
    source_key: Annotated[
        str | None,
        Form(
            description="Stable identity: a changed file with a known key "
            "replaces that document's content (only changed chunks re-embed)."
        ),
    ] = None,
    visibility: Annotated[
        Visibility,
        Form(
            description="team (default): every person of the library reads them; private: "
            "only you (needs a person's token)."
        ),
    ] = "team",
) -> UploadResponse | JSONResponse:
    """Store each file, dedup by content, queue its ingest. A bad file does not sink the others."""
    tmp_dir = settings.data_dir / "tmp"
    tmp_dir.mkdir(parents=True, exist_ok=True)
    results: list[UploadResult] = []
    errors: list[QuireError] = []
    # New documents are the uploader's, with the visibility asked for (storage/access.py).
    with access.adding(visibility):
        for upload in files:
            name = upload.filename or "upload"
            try:
                path = await _spool(upload, tmp_dir, settings.max_upload_bytes)
                try:
                    kind = await asyncio.to_thread(_export_kind, path)
                    if kind is not None:
                        # A ChatGPT or Claude export: a document per conversation, not one file.
                        summary, job_id = await asyncio.to_thread(
                            import_upload, db, settings, path, kind, safe_filename(name)
                        )
                        changed = summary.new + summary.updated + summary.project_docs_changed
                        results.append(
                            UploadResult(
                                filename=safe_filename(name),
                                status="queued" if changed else "duplicate",
                                job_id=job_id,
                                kind=kind,
                            )
                        )
                        continue
                    intake = await asyncio.to_thread(
                        add_file,
                        db,
                        settings.files_dir,
                        path,
                        name,
                        max_bytes=settings.max_upload_bytes,
                        source_key=source_key if len(files) == 1 else None,
                        move=True,
                    )
                finally:
                    path.unlink(missing_ok=True)
            except QuireError as exc:
                errors.append(exc)
                results.append(
                    UploadResult(
                        filename=safe_filename(name),
                        status="rejected",
                        error=UploadError(
                            status=exc.status_code, code=exc.code, message=exc.message
                        ),
                    )
                )
                continue
            results.append(
                UploadResult(
                    filename=intake.filename,
                    status=intake.status,
                    document_id=intake.document_id,
                    job_id=intake.job_id,
                    kind=intake.kind,
                )
            )
    if errors and len(errors) == len(results):
        first = errors[0]
        detail = [r.model_dump() for r in results] if len(results) > 1 else first.detail
        return error_response(first.status_code, first.code, first.message, detail)
    return UploadResponse(files=results)


def _export_kind(path: Path) -> Literal["chatgpt", "claude"] | None:
    """ "chatgpt"/"claude" for an assistant's export; None for anything else (add_file judges
    and reports it)."""
    try:
        kind = detect_kind(path)
    except QuireError:
        return None
    return kind if kind in ("chatgpt", "claude") else None


@router.get("", response_model=DocumentList, summary="List documents")
def list_documents(db: DbDep) -> DocumentList:
    with db.read() as conn:
        return DocumentList.model_validate({"documents": documents.list_documents(conn)})


@router.get("/{document_id}", response_model=DocumentOut, responses=ERRORS)
def get_document(document_id: IdPath, db: DbDep) -> DocumentOut:
    with db.read() as conn:
        return DocumentOut.model_validate(documents.get_document(conn, document_id))


@router.delete("/{document_id}", status_code=204, responses=ERRORS)
def delete_document(document_id: IdPath, db: DbDep) -> None:
    documents.delete_document(db, document_id)


@router.post("/{document_id}/reingest", status_code=202, response_model=JobOut, responses=ERRORS)
def reingest_document(document_id: IdPath, db: DbDep) -> JobOut:
    job_id = documents.reingest(db, document_id)
    with db.read() as conn:
        job = jobs.get(conn, job_id)
    assert job is not None
    return JobOut.model_validate(job, from_attributes=True)


@router.get("/{document_id}/pages", response_model=PageList, responses=ERRORS)
def list_pages(document_id: IdPath, db: DbDep) -> PageList:
    """Every page with its place, and the document's outline (the page list the web app shows
    when there is one)."""
    with db.read() as conn:
        doc = documents.get_document(conn, document_id)
        listed = [{**p, "kind": doc["kind"]} for p in chunks.list_pages(conn, document_id)]
        entries = chunks.outline(conn, document_id, doc["kind"])
    return PageList.model_validate(
        {"document_id": document_id, "pages": listed, "outline": entries}
    )


@router.get("/{document_id}/pages/{page}", response_model=PageOut, responses=ERRORS)
def get_page(document_id: IdPath, page: IdPath, db: DbDep) -> PageOut:
    """The full text of one page (PDF page, EPUB section, Perplexity turn) with its chunks."""
    with db.read() as conn:
        doc = documents.get_document(conn, document_id)
        found = chunks.get_page(conn, document_id, page)
    if found is None:
        if doc["status"] != "ready":
            raise NotFound(f"document {document_id} is {doc['status']}; its pages are not ready")
        raise NotFound(f"document {document_id} has no page {page} (it has {doc['page_count']})")
    return PageOut.model_validate(
        {"document_id": document_id, "kind": doc["kind"], "page_count": doc["page_count"], **found}
    )


@router.get(
    "/{document_id}/pages/{page}/image",
    response_class=Response,
    responses={200: {"content": {"image/png": {}}}, **ERRORS},
)
def get_page_image(document_id: IdPath, page: IdPath, db: DbDep, settings: SettingsDep) -> Response:
    """A page of an image document as PNG, turned upright as OCR read it (its word boxes, in
    this image's pixels, land on it)."""
    with db.read() as conn:
        doc = documents.get_document(conn, document_id)
        if doc["kind"] != "image":
            raise NotFound(f"document {document_id} is a {doc['kind']}, not an image")
        found = chunks.get_page(conn, document_id, page)
        path = documents.original_of(conn, settings.files_dir, document_id)
    if found is None:
        raise NotFound(f"document {document_id} has no page {page} (it has {doc['page_count']})")
    rotated = int((found.get("metadata") or {}).get("rotated", 0))
    # Cached by the browser: a page's image changes only with a new version (a new file).
    return Response(
        page_png(path, page, rotated),
        media_type="image/png",
        headers={"Cache-Control": "private, max-age=3600"},
    )


@router.get(
    "/{document_id}/file",
    response_class=FileResponse,
    responses={
        200: {"content": {m: {} for m in sorted({*MEDIA_TYPES.values(), *IMAGE_TYPES})}},
        **ERRORS,
    },
)
def get_file(document_id: IdPath, db: DbDep, settings: SettingsDep) -> FileResponse:
    """The original file, inline (PDF viewers honour ``#page=N``); a saved web page as a
    download only (sandboxed, as text: it is never rendered in Quire's origin)."""
    with db.read() as conn:
        doc = documents.get_document(conn, document_id)
        path = documents.original_of(conn, settings.files_dir, document_id)
    legacy = (doc["metadata"] or {}).get("converted_from")  # a .doc read as docx: not a docx
    media = None if legacy else MEDIA_TYPES.get(doc["kind"])
    media = media or mimetypes.guess_type(doc["filename"])[0]
    if doc["kind"] == "image":  # told by the bytes, as the kind was
        with path.open("rb") as fh:
            media = image_media_type(fh.read(16))
    web = doc["kind"] == "web"
    return FileResponse(
        path,
        media_type=media or "application/octet-stream",
        filename=doc["filename"],
        content_disposition_type="attachment" if web else "inline",
        # A text file full of markup stays text: no browser may sniff it into HTML.
        headers={"X-Content-Type-Options": "nosniff"}
        | ({"Content-Security-Policy": "sandbox"} if web else {}),
    )


@router.get(
    "/{document_id}/rendition",
    response_class=FileResponse,
    responses={200: {"content": {"application/pdf": {}}}, **ERRORS},
)
def get_rendition(document_id: IdPath, db: DbDep, settings: SettingsDep) -> FileResponse:
    """A Word, OpenDocument or slide file as LibreOffice renders it, as PDF (page N of a deck
    is its slide N); 404 saying why when there is none."""
    with db.read() as conn:
        doc = documents.get_document(conn, document_id)
    path = documents.rendition_path(settings.files_dir, doc["sha256"])
    if not path.is_file():
        meta = doc["metadata"] or {}
        why = meta.get("rendition_note") or (
            "only Word, OpenDocument and slide files are rendered"
            if doc["kind"] not in RENDERED_KINDS
            else f"it is {doc['status']}"
            if doc["status"] not in ("searchable", "ready")
            else "it was ingested before renditions were made: re-ingest it"
        )
        raise NotFound(f"document {document_id} has no rendered view: {why}")
    return FileResponse(
        path,
        media_type="application/pdf",
        filename=f"{Path(doc['filename']).stem}.pdf",
        content_disposition_type="inline",
    )
