"""How an MCP result names a place in the library: the citation string an assistant can quote,
the ``quire://`` resource it can open, and a link to the original at that page.

    citation("Parts List", "pdf", 2, "Main Gear")      # "Parts List, p. 2 — Main Gear"
    citation("Think Complexity", "pdf", 188, label="166")  # "..., p. 166 (PDF p. 188)"
    Links.over_http("http://127.0.0.1:8080/").original(1, "pdf", 2, stored)
        # "http://127.0.0.1:8080/api/documents/1/file#page=2"
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from quire import urls
from quire.storage.records import Kind, place, section

DOCUMENT_URI = "quire://documents/{document_id}"
PAGE_URI = "quire://documents/{document_id}/pages/{page}"


def citation(
    title: str, kind: Kind, page: int, heading_path: str = "", label: str | None = None
) -> str:
    """ "Title, p. 12 — Chapter > Section": the page as records.place names it, and the section
    when the place does not already name it (records.section)."""
    where = f"{title}, {place(kind, page, label, heading_path)}"
    shown = section(kind, heading_path)
    return f"{where} — {shown}" if shown else where


def document_uri(document_id: int) -> str:
    return DOCUMENT_URI.format(document_id=document_id)


def page_uri(document_id: int, page: int) -> str:
    return PAGE_URI.format(document_id=document_id, page=page)


@dataclass(frozen=True)
class Links:
    """Where the originals are reached from the client: over HTTP the API's file route under
    ``base_url``; over stdio (the client runs on this machine) the stored file itself."""

    base_url: str | None = None

    @classmethod
    def over_http(cls, base_url: str) -> Links:
        return cls(base_url.rstrip("/"))

    def original(
        self, document_id: int, kind: Kind, page: int, stored_path: str | None = None
    ) -> str | None:
        """The original at ``page``; PDF viewers honour ``#page=N``. None when unknown."""
        if self.base_url is not None:
            path = urls.original(document_id, kind, page)
            return self.base_url + path if path else None
        if stored_path is None:
            return None
        anchor = f"#page={page}" if kind == "pdf" else ""
        return Path(stored_path).resolve().as_uri() + anchor
