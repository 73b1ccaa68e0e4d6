"""Where a source leads, in this API's URLs: the original at the cited page, and the page's
text for the source viewer. Built here, at the HTTP edge, so that nothing below knows them."""

from __future__ import annotations

from quire import urls
from quire.synthesis.events import Source, SourcesEvent


def linked(source: Source) -> Source:
    """The source with its ``url`` (its own web address if it has one) and ``view``; links a
    stored source already carries are kept."""
    if source.url is not None and source.view is not None:
        return source
    return source.model_copy(
        update={
            "url": source.url
            or source.origin_url
            or urls.original(source.document_id, source.kind, source.page),
            "view": source.view or urls.page_view(source.document_id, source.page),
        }
    )


def linked_event(event: SourcesEvent) -> SourcesEvent:
    return event.model_copy(update={"sources": [linked(s) for s in event.sources]})
