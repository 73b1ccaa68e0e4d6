"""The reranker searches use, replaced while they run: a pull through the API installs a new
cross-encoder, and the next search reranks with it without a restart (runtime.py).

    slot = RerankerSlot(load_reranker(settings), owned=True)
    with slot.hold() as reranker:       # None: no cross-encoder
        ...                             # kept open to the end, whatever replaces it meanwhile
    slot.replace(load_reranker(settings))
"""

from __future__ import annotations

import contextlib
import threading
from collections import Counter
from collections.abc import Iterator

from quire.retrieval.rerank import Reranker


class RerankerSlot:
    """A search ``hold``s the reranker current when it starts and keeps it to its end; the one
    replaced is closed when the last search holding it lets go (at once when none does).

    ``owned``: whether the first reranker is the slot's to close (not when the caller passed
    it in and closes it itself); the ones put in by ``replace`` always are."""

    def __init__(self, reranker: Reranker | None = None, *, owned: bool = False) -> None:
        self._current = reranker
        self._owned: set[int] = {id(reranker)} if reranker is not None and owned else set()
        self._holds: Counter[int] = Counter()
        self._retired: dict[int, Reranker] = {}
        self._lock = threading.Lock()
        self._closed = False

    @property
    def current(self) -> Reranker | None:
        """The reranker the next search uses."""
        return self._current

    @contextlib.contextmanager
    def hold(self) -> Iterator[Reranker | None]:
        """The current reranker, kept open until the ``with`` ends."""
        with self._lock:
            reranker = self._current
            self._holds[id(reranker)] += 1
        try:
            yield reranker
        finally:
            with self._lock:
                self._holds[id(reranker)] -= 1
                done = None
                if self._holds[id(reranker)] <= 0:
                    del self._holds[id(reranker)]
                    done = self._retired.pop(id(reranker), None)
            if done is not None:
                done.close()

    def replace(self, reranker: Reranker) -> None:
        """Searches from now on use ``reranker`` (the slot closes it in time); the one it
        replaces is closed once no search holds it. After ``close``, ``reranker`` is closed."""
        with self._lock:
            if self._closed:
                old: Reranker | None = reranker
            else:
                old, self._current = self._current, reranker
                self._owned.add(id(reranker))
                if old is None or id(old) not in self._owned:
                    return  # none before, or the caller's to close
                self._owned.discard(id(old))
                if self._holds[id(old)] > 0:
                    self._retired[id(old)] = old
                    return
        assert old is not None
        old.close()

    def close(self) -> None:
        """Close the rerankers the slot owns (the searches are over)."""
        with self._lock:
            owned = list(self._retired.values())
            if self._current is not None and id(self._current) in self._owned:
                owned.append(self._current)
            self._retired.clear()
            self._owned.clear()
            self._closed = True
        for reranker in owned:
            reranker.close()
