"""Which documents a search may return: always only visible ones (``ready``, or
``searchable`` while their vectors are made) that the reader may read (storage/access.py),
optionally only some
documents, kinds, languages, origins, Zotero collections or tags. Applied inside each leg's
query, not after it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, text

from quire.retrieval.options import RetrievalOptions
from quire.storage import access
from quire.storage.access import Reader
from quire.storage.db import id_list, in_ids, in_strings, json_array_elements, string_list
from quire.storage.records import VISIBLE_SQL


@dataclass(frozen=True)
class Filter:
    """Document ids, kinds, languages, origins, collections and/or tags to search (each empty:
    no restriction; all given: a document must pass each)."""

    document_ids: tuple[int, ...] = ()
    kinds: tuple[str, ...] = ()
    languages: tuple[str, ...] = ()
    origins: tuple[str, ...] = ()
    collections: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    reader: Reader = field(default=access.EVERYONE)

    @classmethod
    def of(cls, options: RetrievalOptions) -> Filter:
        """The filter a request's options ask for, for the reader of this context."""
        return cls(
            tuple(options.document_ids),
            tuple(options.kinds),
            tuple(options.languages),
            tuple(options.origins),
            tuple(options.collections),
            tuple(options.tags),
            access.current(),
        )

    @property
    def narrows(self) -> bool:
        """Whether it lets through fewer than all ready documents."""
        return bool(
            self.document_ids
            or self.kinds
            or self.languages
            or self.origins
            or self.collections
            or self.tags
            or not self.reader.everything
        )

    def sql(self, conn: Connection, chunk: str, doc: str) -> tuple[str, dict[str, Any]]:
        """A WHERE fragment over the chunk and document aliases, with its parameters."""
        parts = [f"{doc}.status {VISIBLE_SQL}"]
        readable, params = access.document_sql(doc, self.reader)
        if readable:
            parts.append(readable)
        if self.document_ids:
            parts.append(in_ids(conn, f"{chunk}.document_id", "flt_docs"))
            params["flt_docs"] = id_list(conn, self.document_ids)
        for column, name, values in (
            ("kind", "flt_kinds", self.kinds),
            ("language", "flt_langs", self.languages),
            ("origin", "flt_origins", self.origins),
        ):
            if values:
                parts.append(in_strings(conn, f"{doc}.{column}", name))
                params[name] = string_list(conn, values)
        if self.collections:
            # A collection's path, or a parent of it ("Thesis" holds "Thesis/Methods").
            held = json_array_elements(conn, "c", f"{doc}.metadata", "origin", "collections")
            asked = json_array_elements(conn, "f", "CAST(:flt_colls AS TEXT)")
            parts.append(
                f"EXISTS (SELECT 1 FROM {held}, {asked} WHERE c.value = f.value "
                "OR substr(c.value, 1, length(f.value) + 1) = f.value || '/')"
            )
            params["flt_colls"] = json.dumps(list(self.collections))
        if self.tags:
            held = json_array_elements(conn, "t", f"{doc}.metadata", "origin", "tags")
            parts.append(
                f"EXISTS (SELECT 1 FROM {held} WHERE {in_strings(conn, 't.value', 'flt_tags')})"
            )
            params["flt_tags"] = string_list(conn, self.tags)
        return " AND ".join(parts), params

    def document_sql(self, conn: Connection) -> tuple[str, dict[str, Any]]:
        """The same WHERE fragment over the documents table alone (alias ``d``)."""
        where, params = self.sql(conn, "c", "d")
        return where.replace("c.document_id", "d.id"), params

    def allowed_documents(self, conn: Connection) -> set[int]:
        """The visible documents this filter lets through."""
        where, params = self.document_sql(conn)
        rows = conn.execute(text(f"SELECT d.id FROM documents d WHERE {where}"), params)
        return {int(r[0]) for r in rows}

    def missing_documents(self, conn: Connection) -> list[int]:
        """Requested document ids that do not exist, or not for this reader (to tell them)."""
        if not self.document_ids:
            return []
        readable, params = access.document_sql("d", self.reader)
        rows = conn.execute(
            text(
                f"SELECT id FROM documents d WHERE {in_ids(conn, 'id', 'ids')}"
                + access.where(readable)
            ),
            {"ids": id_list(conn, self.document_ids), **params},
        )
        found = {int(r[0]) for r in rows}
        return [d for d in self.document_ids if d not in found]
