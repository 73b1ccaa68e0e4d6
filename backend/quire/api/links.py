"""Where a source leads, in this API's URLs: the original at the cited page, and the page's
text for the source viewer. Built here, at the HTTP edge, so that nothing below knows them."""

from __future__ import annotations

from quire.synthesis.events import Source, SourcesEvent


def original_url(document_id: int, kind: str, page: int) -> str:
    """The stored original; PDF viewers honour ``#page=N``."""
    url = f"/api/documents/{document_id}/file"
    return f"{url}#page={page}" if kind == "pdf" else url


def linked(source: Source) -> Source:
    """The source with its ``url`` (its own web address if it has one) and ``view``; links a
    stored source already carries are kept."""
    if source.url is not None and source.view is not None:
        return source
    return source.model_copy(
        update={
            "url": source.url
            or source.origin_url
            or original_url(source.document_id, source.kind, source.page),
            "view": source.view or f"/api/documents/{source.document_id}/pages/{source.page}",
        }
    )


def linked_event(event: SourcesEvent) -> SourcesEvent:
    return event.model_copy(update={"sources": [linked(s) for s in event.sources]})
