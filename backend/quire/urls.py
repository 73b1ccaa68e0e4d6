"""The API's addresses of a document's original and of a page's text: one scheme, used by the
API's responses, the MCP server's links and the web app (through the API)."""

from __future__ import annotations


def original(document_id: int, kind: str, page: int) -> str:
    """The stored original; PDF viewers honour ``#page=N``."""
    url = f"/api/documents/{document_id}/file"
    return f"{url}#page={page}" if kind == "pdf" else url


def page_view(document_id: int, page: int) -> str:
    """The page's text with its chunks (the source viewer)."""
    return f"/api/documents/{document_id}/pages/{page}"
