"""A document's notes as one Markdown file, for Obsidian and the like (docs/using/notes.md).

    ---
    title: "Alice's Adventures in Wonderland"
    quire_document: 12
    source: "/library/12"
    notes: 3
    tags: [rabbit]
    exported: "2026-12-05T23:10:00Z"
    ---

    # Alice's Adventures in Wonderland

    ## p. 4

    > Down, down, down. Would the fall never come to an end?
    > — *Alice's Adventures in Wonderland*, p. 4 ([open in Quire](/library/12/pages/4?note=7))

    Her fall is the book's first joke about time. #rabbit

The front matter is YAML that Obsidian reads as properties; each highlight is a block quote
followed by its citation line and a link back to the page in Quire; the note's own Markdown
follows as written. ``base_url`` is the web app's address (``--base-url``), else the links are
relative to it. The citation is Quire's own (``records.place``, the same words as every
citation) or, with a CSL ``style`` (synthesis/citation_style.py), the style's citation with the
page as locator: "> — (Downey, 2017, p. 4) ([open in Quire](…))"; the style's reference for the
document then follows the title, and the front matter names the style and holds the reference.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from quire.storage.records import LABELLED_KINDS, UNITS, place
from quire.synthesis import citation_style
from quire.synthesis.bibliography import to_csl
from quire.synthesis.export import document_work


def _yaml(value: Any) -> str:
    """A YAML scalar or flow list: JSON's quoting is valid YAML."""
    return json.dumps(value, ensure_ascii=False)


def filename(title: str, document_id: int) -> str:
    """A file name for the export: the title's safe characters, then the id."""
    safe = "".join(c if c.isalnum() or c in " -_" else " " for c in title)
    return f"{' '.join(safe.split())[:80] or 'notes'} ({document_id}).md"


def render(
    doc: dict[str, Any],
    notes: list[dict[str, Any]],
    *,
    base_url: str = "",
    style: str = citation_style.QUIRE,
) -> str:
    """The Markdown for one document's ``notes`` (storage/notes.py dicts, in page order), each
    highlight cited in ``style`` (``citation_style.check``'d)."""
    title = doc.get("title") or doc.get("filename") or f"document {doc['id']}"
    base = base_url.rstrip("/")
    tags = sorted({t for n in notes for t in n["tags"]})
    cite = None
    if style != citation_style.QUIRE:
        work = document_work(doc, doc["id"], doc["kind"], title)
        cite = citation_style.citer(to_csl([work])[0], style)
    # An Office or web page's label is its whole name ("slide 14 · Results"): said, not a locator.
    unit = "" if doc["kind"] in LABELLED_KINDS else UNITS.get(doc["kind"], "p.")

    def citation(n: dict[str, Any]) -> str:
        where = place(doc["kind"], n["page"], n.get("page_label")) if n["page"] else ""
        if cite is None:
            return f"*{title}*, {where}" if where else f"*{title}*"
        label = n["page_label"] if n.get("page_label") and unit == "p." else None
        return cite(citation_style.page_locator(unit, n["page"], label, where)).citation

    reference = cite(citation_style.Locator(None)).reference if cite else ""
    lines = [
        "---",
        f"title: {_yaml(title)}",
        f"quire_document: {doc['id']}",
        f"source: {_yaml(base + '/library/' + str(doc['id']))}",
        f"notes: {len(notes)}",
        f"tags: {_yaml(tags)}",
        f"exported: {_yaml(datetime.now(UTC).strftime('%Y-%m-%dT%H:%M:%SZ'))}",
        f"citation_style: {_yaml(style)}",
        *([f"reference: {_yaml(reference)}"] if reference else []),
        "---",
        "",
        f"# {title}",
        *(["", reference] if reference else []),
    ]
    current: int | None = -1
    for n in notes:
        if n["page"] != current:
            current = n["page"]
            heading = place(doc["kind"], current, n.get("page_label")) if current else "Notes"
            lines += ["", f"## {heading}"]
        lines.append("")
        link = f"{base}/library/{doc['id']}/pages/{n['page']}?note={n['id']}" if n["page"] else ""
        if n["quote"]:
            lines += [f"> {q}" if q else ">" for q in n["quote"].splitlines()]
            status = f" ({n['status']})" if n["status"] != "ok" else ""
            lines.append(f"> — {citation(n)}{status} ([open in Quire]({link}))")
        elif link:
            lines.append(f"[open in Quire]({link})")
        body = n["body"].strip()
        if body:
            lines += ["", body]
        if n["tags"]:
            lines += ["", " ".join(f"#{t.replace(' ', '-')}" for t in n["tags"])]
    return "\n".join(lines) + "\n"
