"""Search's order when no cross-encoder is installed: the first hits by their best sentence,
scored as the extractive answer scores its candidates (synthesis/extractive.py). Measured on
the page-QA sets, it puts the right page first more often than fusion order
(docs/design/retrieval.md, "Ideas tried"); the runtime hands it to the searcher, which may not
import this layer."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence

from quire.embed.base import Embedder
from quire.retrieval.hits import Hit, from_view
from quire.retrieval.planner import identifiers
from quire.storage import chunks, documents
from quire.storage.db import Database
from quire.synthesis import extractive
from quire.synthesis.asks import Asks

#: Search without a cross-encoder orders its first hits by their best unit (``by_best_sentence``),
#: keeping this much of the fusion order; its first ``DISTINCT`` are that many pages, each the
#: passage with its best unit (two passages of one page there pushed another page out).
ORDER_TOP = 10
ORDER_PRIOR = 0.1
DISTINCT = 5
#: What a page in a document's last ``END_SHARE`` adds in that order when the question asks
#: about the end ("the book's closing sentence").
NEAR_END = 0.5
END_SHARE = 0.15
#: Such a question also has the pages near a document's end among this many hits read.
END_REACH = 20
_ENDING = re.compile(
    r"\b(closing|final|last|concluding|ending) (sentence|sentences|words?|lines?|paragraph|"
    r"note|chapter|section|page|remarks?|scene|pages)\b|\bat the (very )?end\b"
    r"|\b(ends?|conclude[sd]?|closes?) (the|his|her|its|their) (book|novel|story|paper|report)\b",
    re.I,
)
#: The share of its cosine a unit giving nothing the question asks for counts in that order
#: (and of its score, when the question asks for a number or a date).
GIVES_NOTHING = 0.5
#: What a hit adds for holding the question's identifiers and named days (a share of them),
#: counted again as the cosine is: the one table row that names ``R_RISCV_CALL_PLT`` with its
#: number, the diary entry dated "1st May" (0.1 moved nothing, 0.3 cost an Office question).
NAMED = 0.2
#: A question naming an identifier (``R_RISCV_CALL_PLT``) also reads the hits the exact leg put
#: this high, wherever fusion put them: a specification's table row names it by itself.
EXACT_READ = 5
#: Each of the first this many hits that ends its page is followed by the next page's opening
#: passage when its section goes on there: the answer is often over the page (Think
#: Complexity's "With n=100 the average of ps is about 0.59", on the page after the random walk
#: it reports on), and search finds that passage by the words of the page before.
CONTINUED = 3


def page_texts(db: Database, hits: Sequence[Hit]) -> dict[tuple[int, int], str]:
    """The text of each hit's page, so that a sentence a chunk boundary cut is read whole."""
    with db.read() as conn:
        return chunks.page_texts(conn, [(h.document_id, h.page) for h in hits])


class SentenceOrder:
    """``searcher.order``: hits → the first ``ORDER_TOP`` by their best sentence."""

    def __init__(self, db: Database, embedder: Embedder | None) -> None:
        self.db = db
        self.embedder = embedder

    def reach(self, question: str) -> int:
        """How many hits it reads: more of them for a question about how a document ends or
        naming an identifier."""
        if asks_for_the_end(question) or identifiers(question):
            return END_REACH
        return 0

    def __call__(self, question: str, hits: list[Hit]) -> list[Hit]:
        head = hits[:ORDER_TOP]
        near_end: set[tuple[int, int]] = set()
        if asks_for_the_end(question):
            with self.db.read() as conn:
                counts = documents.page_counts(conn, {h.document_id for h in hits})
            near_end = {
                (h.document_id, h.page)
                for h in hits
                if h.page > counts.get(h.document_id, 0) * (1 - END_SHARE)
            }
            # The pages near a document's end are read first, from further down the hits.
            ends = [h for h in hits if (h.document_id, h.page) in near_end]
            head = ends + [h for h in head if (h.document_id, h.page) not in near_end]
        taken = {h.chunk_id for h in head}
        head += [
            h
            for h in hits[ORDER_TOP:]
            if h.ranks.get("exact", EXACT_READ + 1) <= EXACT_READ and h.chunk_id not in taken
        ]
        pages = page_texts(self.db, head)
        head = self._continued(head, hits, pages)
        pages.update(page_texts(self.db, [h for h in head if (h.document_id, h.page) not in pages]))
        ordered = by_best_sentence(
            question,
            head,
            self.embedder,
            pages,
            top=len(head),
            near_end=near_end,
        )
        read = {h.chunk_id for h in head}
        return ordered + [h for h in hits[ORDER_TOP:] if h.chunk_id not in read]

    def _continued(
        self, head: list[Hit], hits: Sequence[Hit], pages: Mapping[tuple[int, int], str]
    ) -> list[Hit]:
        """``head`` with the passage that opens the next page after each of its first
        ``CONTINUED`` hits that ends its page, when it goes on in the same section (the hit
        search made of it, if it made one)."""
        ends = [
            h
            for h in head[:CONTINUED]
            if (page := pages.get((h.document_id, h.page)))
            and page.rstrip().endswith(h.text.rstrip())
        ]
        if not ends:
            return head
        taken = {h.chunk_id for h in head}
        with self.db.read() as conn:
            first = chunks.openings(conn, [(h.document_id, h.page + 1) for h in ends])
            views = chunks.ready_views(conn, [c for c in first.values() if c not in taken])
        found = {h.chunk_id: h for h in hits}
        after = {}
        for h in ends:
            view = views.get(first.get((h.document_id, h.page + 1), 0))
            if view is not None and view.heading_path == h.heading_path:
                after[h.chunk_id] = found.get(view.chunk_id) or from_view(view)
        out: list[Hit] = []
        for h in head:
            out += [h, after[h.chunk_id]] if h.chunk_id in after else [h]
        return out


def asks_for_the_end(question: str) -> bool:
    """Whether ``question`` asks about how a document ends ("the book's closing sentence",
    "the recommended reading at the end", "Harker's closing note")."""
    return bool(_ENDING.search(question))


def by_best_sentence(
    question: str,
    hits: Sequence[Hit],
    embedder: Embedder | None,
    pages: Mapping[tuple[int, int], str] | None = None,
    *,
    top: int = ORDER_TOP,
    near_end: Collection[tuple[int, int]] = (),
) -> list[Hit]:
    """The first ``top`` hits in the order of their best unit: its score as a lead plus the
    best cosine of its units to the question, with a little of the fusion order kept
    (``ORDER_PRIOR / (1 + rank)``), ``DISTINCT`` pages first; the hits after ``top`` follow
    unchanged. A passage whose sentence answers the question outranks one that shares more of
    its words. When the question asks for something in particular (a number, a date, a name,
    a definition, a list), a unit's cosine counts as much as the unit gives it (half when it
    gives nothing; for a number or a date its score too, as the answer leads with a unit
    that holds one), and what a unit names of the question's (``NAMED``) counts again. A question
    about how a document ends prefers the pages in ``near_end``."""
    head = list(hits[:top])
    best: dict[int, tuple[float, float]] = {}
    named: dict[int, float] = {}
    asks = Asks.of(question).kind
    particular = asks not in ("other", "yesno")
    for s in extractive.score_sentences(
        question, head, embedder, max_passages=len(head), pages=pages
    ):
        score, cosine = best.get(s.hit_index, (0.0, 0.0))
        # A sentence close to the question in meaning that gives nothing it asks for (the
        # introduction that restates its subject) speaks less for its page; for a number or a
        # date, so does its score: the answer is led by the best unit holding one, and its
        # page should come first.
        meant, said = s.cosine, s.score
        if particular:
            meant *= GIVES_NOTHING + (1 - GIVES_NOTHING) * s.gives
        if asks in extractive.EXACT and not s.gives:
            said *= GIVES_NOTHING
        best[s.hit_index] = (max(score, said), max(cosine, meant))
        named[s.hit_index] = max(named.get(s.hit_index, 0.0), s.named)
    # A page cut into two passages: the one with its best sentence is judged by the best
    # cosine of either.
    lead: dict[tuple[int, int], int] = {}
    page_cos: dict[tuple[int, int], float] = {}
    for i, h in enumerate(head):
        key = (h.document_id, h.page)
        score, cosine = best.get(i, (0.0, 0.0))
        if key not in lead or score > best.get(lead[key], (0.0, 0.0))[0]:
            lead[key] = i
        page_cos[key] = max(page_cos.get(key, 0.0), cosine)

    def total(i: int) -> float:
        h = head[i]
        score, cosine = best.get(i, (0.0, 0.0))
        if lead[(h.document_id, h.page)] == i:
            cosine = page_cos[(h.document_id, h.page)]
        end = NEAR_END if (h.document_id, h.page) in near_end else 0.0
        return score + cosine + ORDER_PRIOR / (1 + i) + end + NAMED * named.get(i, 0.0)

    order = sorted(range(len(head)), key=lambda i: -total(i))
    firsts = [i for i in order if lead[(head[i].document_id, head[i].page)] == i][:DISTINCT]
    return [head[i] for i in firsts + [i for i in order if i not in firsts]] + list(hits[top:])
