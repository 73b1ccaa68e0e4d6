"""The reranker replaced while searches run (a pull through the API): a search keeps the one it
started with to its end; the one replaced is closed once no search holds it, and never when it
was the caller's; a replacement after the slot closed is closed at once."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from quire.retrieval.rerank import Logits
from quire.retrieval.reranker_slot import RerankerSlot


class Model:
    def __init__(self, name: str) -> None:
        self.name = name
        self.closed = False

    def score(self, query: str, passages: Sequence[str]) -> Logits:
        assert not self.closed, f"{self.name} was closed while in use"
        return np.zeros(len(passages), dtype=np.float32)

    def close(self) -> None:
        self.closed = True


def test_a_search_keeps_its_reranker_and_the_old_one_closes_after_it() -> None:
    old, new, newer = Model("old"), Model("new"), Model("newer")
    slot = RerankerSlot(old, owned=True)
    with slot.hold() as held, slot.hold() as other:
        assert held is old and other is old
        slot.replace(new)
        assert slot.current is new
        with slot.hold() as later:
            assert later is new
        assert held.score("q", ["a"]).shape == (1,) and not old.closed  # still in use
    assert old.closed and not new.closed  # the last search holding it ended
    slot.replace(newer)  # nobody holds `new`: closed at once
    assert new.closed and not newer.closed
    slot.close()
    assert newer.closed


def test_only_what_the_slot_owns_is_closed() -> None:
    theirs, ours = Model("theirs"), Model("ours")
    slot = RerankerSlot(theirs)  # not owned: the caller closes it
    slot.replace(ours)
    assert not theirs.closed and slot.current is ours
    slot.close()
    assert ours.closed and not theirs.closed

    empty = RerankerSlot()
    with empty.hold() as nothing:
        assert nothing is None
        empty.replace(theirs)
    assert empty.current is theirs and not theirs.closed
    empty.close()
    late = Model("late")
    empty.replace(late)  # the searcher closed (the API stopping mid-pull)
    assert late.closed and theirs.closed
