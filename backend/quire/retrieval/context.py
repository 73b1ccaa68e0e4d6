"""Adjacent-page context: a winner's page with the pages before and after it, merged."""

from __future__ import annotations

from sqlalchemy import Connection, text


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
    rows = conn.execute(
        text(
            "SELECT document_id, page, text FROM pages WHERE (document_id, page) IN "
            "(SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') "
            "FROM json_each(:pairs))"
        ),
        {"pairs": "[" + ",".join(f"[{d},{p}]" for d, p in sorted(wanted)) + "]"},
    ).all()
    texts = {(int(r[0]), int(r[1])): str(r[2]) for r in rows}
    for d, p in winners:
        pages = [q for q in range(p - radius, p + radius + 1) if (d, q) in texts]
        out[(d, p)] = {
            "pages": pages,
            "text": "\n\n".join(texts[(d, q)] for q in pages),
        }
    return out
