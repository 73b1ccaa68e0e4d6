"""Search's order when no cross-encoder is installed: the first hits by their best sentence,
scored as the extractive answer scores its candidates (synthesis/extractive.py). Measured on
the page-QA sets, it puts the right page first more often than fusion order
(docs/design/retrieval.md, "Ideas tried"); the runtime hands it to the searcher, which may not
import this layer."""

from __future__ import annotations

from collections.abc import Sequence

from quire.embed.base import Embedder
from quire.retrieval.hits import Hit
from quire.retrieval.planner import identifiers
from quire.storage import chunks, documents
from quire.storage.db import Database
from quire.synthesis import extractive

#: A question naming an identifier (``R_RISCV_CALL_PLT``) also reads the hits the exact leg put
#: this high, wherever fusion put them: a specification's table row names it by itself.
EXACT_READ = 5


def page_texts(db: Database, hits: Sequence[Hit]) -> dict[tuple[int, int], str]:
    """The text of each hit's page, so that a sentence a chunk boundary cut is read whole."""
    with db.read() as conn:
        return chunks.page_texts(conn, [(h.document_id, h.page) for h in hits])


class SentenceOrder:
    """``searcher.order``: hits → the first ``extractive.ORDER_TOP`` by their best sentence."""

    def __init__(self, db: Database, embedder: Embedder | None) -> None:
        self.db = db
        self.embedder = embedder

    def reach(self, question: str) -> int:
        """How many hits it reads: more of them for a question about how a document ends or
        naming an identifier."""
        if extractive.asks_for_the_end(question) or identifiers(question):
            return extractive.END_REACH
        return 0

    def __call__(self, question: str, hits: list[Hit]) -> list[Hit]:
        head = hits[: extractive.ORDER_TOP]
        near_end: set[tuple[int, int]] = set()
        if extractive.asks_for_the_end(question):
            with self.db.read() as conn:
                counts = documents.page_counts(conn, {h.document_id for h in hits})
            near_end = {
                (h.document_id, h.page)
                for h in hits
                if h.page > counts.get(h.document_id, 0) * (1 - extractive.END_SHARE)
            }
            # The pages near a document's end are read first, from further down the hits.
            ends = [h for h in hits if (h.document_id, h.page) in near_end]
            head = ends + [h for h in head if (h.document_id, h.page) not in near_end]
        taken = {h.chunk_id for h in head}
        head += [
            h
            for h in hits[extractive.ORDER_TOP :]
            if h.ranks.get("exact", EXACT_READ + 1) <= EXACT_READ and h.chunk_id not in taken
        ]
        ordered = extractive.by_best_sentence(
            question,
            head,
            self.embedder,
            page_texts(self.db, head),
            top=len(head),
            near_end=near_end,
        )
        read = {h.chunk_id for h in head}
        return ordered + [h for h in hits[extractive.ORDER_TOP :] if h.chunk_id not in read]
