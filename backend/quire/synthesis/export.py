"""A stored answer as it leaves Quire: Markdown with its references, BibTeX, CSL JSON.

The Markdown is the answer as stored, its ``[n]`` markers untouched, followed by a
"References" list of the sources it cites, numbered as the answer numbers them (so the list
may read [1], [3], [4]: a source the answer may cite but does not is not listed). Each line
names what a reader needs to find the passage again:

    - [1] Allen B. Downey (2017). *Think Complexity*. p. 38 (PDF p. 55), "Small world graphs >
      The WS experiment". <https://doi.org/10.…>
    - [2] *Epoch AI Models Dataset*. turn 1. Perplexity thread: <https://www.perplexity.ai/…>
      Web sources: [Epoch AI](<https://epoch.ai/…>)

BibTeX and CSL JSON hold one entry per cited document (synthesis/bibliography.py).

    export = load_answer(conn, message_id)
    render(export, "markdown")
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ValidationError
from sqlalchemy import Connection

from quire.errors import InputError, NotFound
from quire.storage import conversations, notes
from quire.storage.documents import get_document
from quire.storage.records import Kind, printed_label
from quire.synthesis.bibliography import Work, assign_keys, to_bibtex, to_csl
from quire.synthesis.events import Source
from quire.synthesis.parse import cited_numbers

ExportFormat = Literal["markdown", "bibtex", "csl"]
FORMATS: tuple[ExportFormat, ...] = ("markdown", "bibtex", "csl")
MEDIA_TYPES: dict[ExportFormat, str] = {
    "markdown": "text/markdown; charset=utf-8",
    "bibtex": "application/x-bibtex; charset=utf-8",
    "csl": "application/vnd.citationstyles.csl+json",
}
EXTENSIONS: dict[ExportFormat, str] = {"markdown": "md", "bibtex": "bib", "csl": "json"}
#: Authors a Markdown reference names before "et al.".
MAX_AUTHORS = 3
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<])")


@dataclass
class Reference:
    """One numbered source the answer cites, and the document it is from."""

    source: Source
    work: Work
    web_sources: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class AnswerExport:
    """A stored answer with its cited references (in number order) and works (one per
    document, in first-citation order)."""

    message_id: int
    question: str | None
    answer: str
    references: list[Reference]
    works: list[Work]


def load_answer(conn: Connection, message_id: int) -> AnswerExport:
    """The answer ``message_id`` with what it cites; NotFound, or InputError for a question."""
    message = conversations.message(conn, message_id)
    if message["role"] != "assistant":
        raise InputError(f"only answers can be exported: message {message_id} is a question")
    sources: dict[int, Source] = {}
    for raw in message["sources"]:
        try:
            source = Source.model_validate(raw)
        except ValidationError:
            continue  # a source stored by an older version that no longer validates
        sources.setdefault(source.n, source)
    answer = str(message["content"])
    # The stored list and every number in the text (answers stored before the list was kept),
    # so that each [n] of the Markdown has its reference.
    numbers = [*(message["citations"] or []), *cited_numbers(answer)]
    cited = list(dict.fromkeys(n for n in numbers if isinstance(n, int) and n in sources))
    accessed = str(message["created_at"] or "")[:10] or None
    works: dict[int, Work] = {}
    pages: dict[int, dict[int, str]] = {}  # document → physical page → as printed
    references: list[Reference] = []
    for n in cited:
        source = sources[n]
        if source.document_id not in works:
            works[source.document_id] = _work(conn, source, accessed)
        if source.kind in ("pdf", "image"):  # an image's page: a frame of the scan
            shown = printed_label(source.page, source.page_label) or str(source.page)
            pages.setdefault(source.document_id, {})[source.page] = shown
        references.append(Reference(source, works[source.document_id], _web_sources(source)))
    references.sort(key=lambda r: r.source.n)
    ordered = list(works.values())
    for work in ordered:
        work.annotations = notes_on(conn, work.document_id)
    for work in ordered:
        cited_pages = pages.get(work.document_id, {})
        work.pages = [cited_pages[p] for p in sorted(cited_pages)]
    assign_keys(ordered)
    return AnswerExport(message_id, message["question"], answer, references, ordered)


def notes_on(conn: Connection, document_id: int) -> list[str]:
    """The reader's notes on a document, as a bibliography's annotation: one paragraph each,
    "p. 12: “the quote” the note #tag" (only the notes the reader may read)."""
    found, _ = notes.list_notes(conn, notes.NoteFilter(document_id=document_id), limit=500)
    out = []
    for n in found:
        where = n["place"].removeprefix("your note on ") if n["page"] else "note"
        text = " ".join(
            p
            for p in (
                f"“{' '.join(n['quote'].split())}”" if n["quote"] else "",
                " ".join(n["body"].split()),
                " ".join(f"#{t}" for t in n["tags"]),
            )
            if p
        )
        out.append(f"{where}: {text}")
    return out


def _work(conn: Connection, source: Source, accessed: str | None) -> Work:
    """The document a source is from, with what it declared at ingest (or, if it has been
    deleted since, what the source itself says)."""
    try:
        doc = get_document(conn, source.document_id)
    except NotFound:
        doc = {"title": None, "author": None, "metadata": {}}
    title = str(doc.get("title") or source.title or source.filename)
    return document_work(doc, source.document_id, source.kind, title, source.origin_url, accessed)


def document_work(
    doc: dict[str, Any],
    document_id: int,
    kind: Kind,
    title: str,
    origin_url: str | None = None,
    accessed: str | None = None,
) -> Work:
    """A document (``documents.get_document``) as a bibliography lists it, with what it
    declared at ingest; ``origin_url`` is the cited passage's own address, if any."""
    meta: dict[str, Any] = doc.get("metadata") or {}
    authors = meta.get("authors")
    if not isinstance(authors, list):
        authors = [doc["author"]] if doc.get("author") else []
    year = meta.get("year")
    if not isinstance(year, int) and kind == "perplexity" and meta.get("date"):
        year = _year(str(meta["date"]))
    url = origin_url or meta.get("identifier_url")
    publisher = meta.get("publisher")
    if kind == "web":  # the page itself; the text fragment goes on the reference line
        url = meta.get("url") or None
        year = year if isinstance(year, int) else _year(str(meta.get("published") or ""))
        accessed = str(meta.get("fetched_at") or "")[:10] or None
        publisher = publisher or meta.get("site")
    return Work(
        document_id=document_id,
        kind=kind,
        title=title,
        authors=[str(a) for a in authors if a],
        year=year if isinstance(year, int) else None,
        doi=_str(meta.get("doi")),
        isbn=_str(meta.get("isbn")),
        publisher=_str(publisher),
        url=_str(url),
        accessed=accessed if kind in ("perplexity", "web") else None,
        journal=_str(meta.get("container")) if _is_article(meta) else None,
        volume=_str(meta.get("volume")),
        number=_str(meta.get("issue")),
        citation_key=_str(meta.get("citation_key")),
    )


def _is_article(meta: dict[str, Any]) -> bool:
    """An item in a journal (Zotero's journalArticle, BibTeX's article, CSL's article-*)."""
    return str(meta.get("item_type") or "").lower().startswith(("journalarticle", "article"))


def _str(value: object) -> str | None:
    return str(value) if value else None


def _year(value: str) -> int | None:
    match = re.match(r"\s*(\d{4})", value)
    return int(match.group(1)) if match else None


def _web_sources(source: Source) -> list[dict[str, Any]]:
    """The web pages a Perplexity passage cites, as ``{"url", "title"}`` (any stored shape)."""
    out = []
    for item in source.model_dump().get("web_sources") or []:
        if isinstance(item, str):
            out.append({"url": item, "title": None})
        elif isinstance(item, dict) and item.get("url"):
            out.append({"url": str(item["url"]), "title": item.get("title")})
    return out


# -- Markdown ---------------------------------------------------------------------------------
def _escape(text: str) -> str:
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def reference_line(ref: Reference) -> str:
    """``[n] Authors (year). *Title*. place, "section". links`` — one line, Markdown."""
    work, source = ref.work, ref.source
    parts: list[str] = []
    if work.authors:
        names = ", ".join(work.authors[:MAX_AUTHORS])
        if len(work.authors) > MAX_AUTHORS:
            names += " et al."
        parts.append(_escape(names) + (f" ({work.year})." if work.year else "."))
    elif work.year:
        parts.append(f"({work.year}).")
    parts.append(f"*{_escape(work.title)}*.")
    where = _escape(source.place)
    if source.section:
        where += f', "{_escape(source.section)}"'
    parts.append(where if where.endswith(('."', '?"', '!"')) else where + ".")
    if work.doi:
        parts.append(f"<https://doi.org/{work.doi}>")
    if source.kind == "perplexity" and source.origin_url:
        parts.append(f"Perplexity thread: <{source.origin_url}>")
    elif work.url and source.kind != "pdf":
        parts.append(f"<{work.url}>")
    if source.kind == "web" and source.origin_url:  # scrolls to the passage on the live page
        parts.append(f"Passage: <{source.origin_url}>")
    if ref.web_sources:
        links = [f"[{_escape(w['title'] or w['url'])}](<{w['url']}>)" for w in ref.web_sources]
        parts.append("Web sources: " + ", ".join(links))
    return f"- [{source.n}] " + " ".join(parts)


def to_markdown(export: AnswerExport) -> str:
    """The answer, then its "References" (only the cited sources, numbered as cited)."""
    text = export.answer.rstrip()
    if not export.references:
        return text + "\n"
    lines = [reference_line(r) for r in export.references]
    return text + "\n\n## References\n\n" + "\n".join(lines) + "\n"


def render(export: AnswerExport, fmt: ExportFormat) -> str:
    """The export in ``fmt``: Markdown, BibTeX, or CSL JSON (a JSON array, as text)."""
    if fmt == "markdown":
        return to_markdown(export)
    if fmt == "bibtex":
        return to_bibtex(export.works)
    return json.dumps(to_csl(export.works), ensure_ascii=False, indent=2) + "\n"


def filename(export: AnswerExport, fmt: ExportFormat) -> str:
    """What a download of the export is called: ``quire-answer-12.md``."""
    return f"quire-answer-{export.message_id}.{EXTENSIONS[fmt]}"
