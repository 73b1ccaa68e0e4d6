"""Exports: a stored answer as Markdown with its references, or its sources as BibTeX or CSL
JSON (synthesis/export.py), as a download."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from quire.api.deps import DbDep
from quire.api.schemas import IdPath, error_responses
from quire.synthesis.export import MEDIA_TYPES, ExportFormat, filename, load_answer, render

router = APIRouter(prefix="/api", tags=["chat"])


@router.get(
    "/messages/{message_id}/export",
    response_class=Response,
    responses={
        200: {
            "description": "The export, as a download (Content-Disposition: attachment).",
            "content": {
                media.split(";")[0]: {"schema": {"type": "string"}}
                for media in MEDIA_TYPES.values()
            },
        },
        **error_responses(400, 404, 422),
    },
)
def export_message(
    message_id: IdPath,
    db: DbDep,
    format: Annotated[  # noqa: A002 - the query parameter's public name
        ExportFormat,
        Query(
            description="markdown: the answer and its references; bibtex or csl: the cited "
            "documents, one entry each."
        ),
    ] = "markdown",
) -> Response:
    """An answer with its references (400 for a question, 404 for an unknown message)."""
    with db.read() as conn:
        export = load_answer(conn, message_id)
    return Response(
        render(export, format),
        media_type=MEDIA_TYPES[format],
        headers={
            "Content-Disposition": f'attachment; filename="{filename(export, format)}"',
            "X-Content-Type-Options": "nosniff",
        },
    )
