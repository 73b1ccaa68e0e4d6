"""The frequent terms' stored entries (storage/term_postings.py) kept by a serving process
for PostgreSQL's BM25 leg: reading a common word's entry from the server costs ~5-10 ms at 1M
chunks."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from sqlalchemy import Connection

from quire.storage import term_postings

#: Stems remembered as having no entry, at most (then forgotten all at once).
_ABSENT_MAX = 100_000


class EntryCache:
    """Stored entries kept by a serving process (PostgreSQL's BM25 leg: reading a common
    word's entry from the server costs ~5-10 ms at 1M chunks), as their bodies (~3-5 bytes a
    posting) decoded on use. They hold for one ``state`` of the entries, which only the worker
    changes, by reading them again (a new ``read`` id), or emptying them; the least recently
    used leave past ``max_mb``. Stems without an entry are remembered too."""

    def __init__(self, max_mb: float) -> None:
        self.max_bytes = int(max_mb * 2**20)
        self._lock = threading.Lock()
        self._key: tuple[str, str] | None = None
        self._bodies: OrderedDict[str, tuple[int, bytes]] = OrderedDict()
        self._absent: set[str] = set()
        self._bytes = 0

    def load_many(
        self, conn: Connection, state: dict[str, Any], stems: Iterable[str]
    ) -> dict[str, term_postings.Entry]:
        """The entries of these stems (those that have one) as of ``state``, read on ``conn``
        (whose snapshot ``state`` was read in)."""
        key = (conn.engine.url.render_as_string(), json.dumps(state, sort_keys=True))
        found: dict[str, tuple[int, bytes]] = {}
        with self._lock:
            if self._key != key:
                self._key, self._bodies, self._absent, self._bytes = key, OrderedDict(), set(), 0
            for stem in stems:
                if (hit := self._bodies.get(stem)) is not None:
                    self._bodies.move_to_end(stem)
                    found[stem] = hit
            todo = [t for t in dict.fromkeys(stems) if t not in found and t not in self._absent]
        read = term_postings.bodies(conn, todo)
        with self._lock:
            if self._key == key:
                if len(self._absent) > _ABSENT_MAX:
                    self._absent = set()
                self._absent.update(t for t in todo if t not in read)
                for stem, value in read.items():
                    if stem not in self._bodies and len(value[1]) <= self.max_bytes:
                        self._bodies[stem] = value
                        self._bytes += len(value[1])
                while self._bytes > self.max_bytes:
                    _, (_, old) = self._bodies.popitem(last=False)
                    self._bytes -= len(old)
        return term_postings.decoded({**found, **read})
