"""Adjacent-page context: a winner's page with the pages before and after it, merged."""

from __future__ import annotations

from sqlalchemy import Connection

from quire.storage import chunks


def adjacent_pages(
    conn: Connection, winners: list[tuple[int, int]], *, radius: int = 1
) -> dict[tuple[int, int], dict[str, object]]:
    """For each (document id, page): the page numbers used and their texts joined in order.

    Winners on neighbouring pages of one document share the same pages, so a caller that
    merges contexts per document does not repeat text.
    """
    out: dict[tuple[int, int], dict[str, object]] = {}
    wanted = {(d, p + off) for d, p in winners for off in range(-radius, radius + 1)}
    if not wanted:
        return out
    texts = chunks.page_texts(conn, sorted(wanted))
    for d, p in winners:
        pages = [q for q in range(p - radius, p + radius + 1) if (d, q) in texts]
        out[(d, p)] = {
            "pages": pages,
            "text": "\n\n".join(texts[(d, q)] for q in pages),
        }
    return out
