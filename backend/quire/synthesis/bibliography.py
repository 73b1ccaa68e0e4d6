"""The documents an answer cites as BibTeX and CSL JSON: names, citation keys, entry types.

One entry per cited document (a document cited on three pages is one work). Types:

    kind         BibTeX                      CSL
    epub         @book                       book
    pdf          @book with an ISBN, else    book with an ISBN, else document
                 @misc (no journal is known, which @article requires)
    perplexity   @online (biblatex)          webpage
    markdown…    @misc                       document
    (any, in a journal: a Zotero item's publication)   @article    article-journal

A document's own citation key (a Zotero item's, ``metadata.citation_key``) is used as it is;
other keys are ``family + year + first title word``, ASCII-folded and lower case
(``downey2017think``); the same key for two documents gets ``a``, ``b``… on the later ones, in
the order the answer first cites them. BibTeX is written by bibtexparser, text fields LaTeX-
encoded by its middleware (``&`` → ``\\&``, ``ü`` → ``\\"u``), URLs and DOIs left verbatim.

    works = [Work(document_id=1, kind="pdf", title="Think Complexity", authors=["Allen B. Downey"],
                  year=2017)]
    to_bibtex(works)  # '@misc{downey2017think,\\n\\ttitle = {Think Complexity}, …'
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from bibtexparser import model
from bibtexparser.entrypoint import write_string
from bibtexparser.library import Library
from bibtexparser.middlewares import LatexEncodingMiddleware
from pylatexenc.latexencode import UnicodeToLatexEncoder

from quire.storage.records import Kind

_STOPWORDS = frozenset(
    "a an the on of in for and to with from by at is are as its la le les der die das el"
    " un une".split()
)
#: Name particles that belong to the family name ("Ludwig van Beethoven" → "van Beethoven").
_PARTICLES = frozenset("van von der den de del della di da du dos le la bin ibn".split())
#: Words that make a declared author an organisation, cited whole ("{United States …}").
_ORGANISATION = re.compile(
    r"\b(?:office|inc|ltd|llc|gmbh|corp|corporation|company|university|institute|"
    r"association|society|committee|council|foundation|agency|department|ministry|"
    r"government|international|consortium|group|project|team|press)\b\.?",
    re.I,
)


@dataclass
class Work:
    """One cited document, as a bibliography lists it."""

    document_id: int
    kind: Kind
    title: str
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    doi: str | None = None
    isbn: str | None = None
    publisher: str | None = None
    url: str | None = None
    #: ISO date a web page was read: a Perplexity thread's, the answer's date; a saved web
    #: page's, the day Quire fetched it (``fetched_at``), unknown for a file saved elsewhere.
    accessed: str | None = None
    pages: list[str] = field(default_factory=list)  # the cited pages, as printed
    journal: str | None = None  # the publication an article is in (a Zotero item's)
    volume: str | None = None
    number: str | None = None
    #: The key the document's source gives it (a Zotero citation key); kept as it is.
    citation_key: str | None = None
    key: str = ""
    #: The reader's notes on the document, one paragraph each ("p. 12: “quote” note"):
    #: BibTeX's ``annote``, CSL's ``annote`` (docs/using/notes.md).
    annotations: list[str] = field(default_factory=list)


# -- names ------------------------------------------------------------------------------------
def is_organisation(name: str) -> bool:
    """Whether a declared author names a body rather than a person."""
    return bool(_ORGANISATION.search(name)) or len(name.split()) > 4 or " - " in name


def person(name: str) -> dict[str, str]:
    """A declared name as CSL's ``{"family", "given"}`` (``{"literal"}`` for organisations)."""
    name = " ".join(name.split())
    if is_organisation(name):
        return {"literal": name}
    if "," in name:
        family, given = (p.strip() for p in name.split(",", 1))
        return {"family": family, "given": given} if given else {"family": family}
    words = name.split()
    if len(words) == 1:
        return {"family": words[0]}
    cut = len(words) - 1
    while cut > 1 and words[cut - 1].lower() in _PARTICLES:
        cut -= 1
    return {"family": " ".join(words[cut:]), "given": " ".join(words[:cut])}


# -- keys -------------------------------------------------------------------------------------
def _ascii_words(text: str) -> list[str]:
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    # A hyphenated word is one ("RISC-V" → "riscv").
    return [
        w.replace("-", "").lower() for w in re.findall(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*", folded)
    ]


def citation_key(work: Work) -> str:
    """``family + year + first word`` of the title (``downey2017think``); no author: two title
    words; nothing in ASCII: ``doc`` + the document's id."""
    words = _ascii_words(work.title)
    title_words = [w for w in words if w not in _STOPWORDS and (len(w) > 1 or w.isdigit())] or words
    family = ""
    if work.authors:
        parts = person(work.authors[0])
        family = "".join(_ascii_words(parts.get("family") or parts.get("literal", "")))
        if "literal" in parts:
            family = "".join(_ascii_words(parts["literal"])[:1])
    if not family and title_words:
        family, title_words = title_words[0], title_words[1:]
    word = title_words[0] if title_words else ""
    key = f"{family}{work.year or ''}{word}"
    return key if family else f"doc{work.document_id}{key}"


def assign_keys(works: list[Work]) -> None:
    """Give each work its key; a repeated key gets ``a``, ``b``… (in order) on later works."""
    seen: dict[str, int] = {}
    taken: set[str] = set()
    for work in works:
        base = work.citation_key or citation_key(work)
        count = seen.get(base, 0)
        key = base
        while key in taken:
            key = base + _suffix(count)
            count += 1
        seen[base] = count
        taken.add(key)
        work.key = key


def _suffix(i: int) -> str:
    out = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        out = chr(ord("a") + r) + out
    return out


# -- BibTeX -----------------------------------------------------------------------------------
def bibtex_type(work: Work) -> str:
    if work.journal:
        return "article"
    if work.kind == "epub" or (work.kind == "pdf" and work.isbn):
        return "book"
    if work.kind in ("perplexity", "web"):
        return "online"
    return "misc"


def _verbatim(value: str) -> str:
    # URLs and DOIs are not LaTeX-encoded (url packages read them verbatim); an unbalanced
    # brace would still end the field, so braces are percent-encoded.
    return value.replace("{", "%7B").replace("}", "%7D")


def to_bibtex(works: list[Work]) -> str:
    """The works as BibTeX entries (keys assigned first if missing)."""
    if any(not w.key for w in works):
        assign_keys(works)
    # Characters LaTeX has no macro for (CJK, Arabic) stay as they are: biber reads UTF-8.
    encoder = LatexEncodingMiddleware(
        encoder=UnicodeToLatexEncoder(unknown_char_policy="keep", unknown_char_warning=False)
    )
    library = Library()
    for work in works:
        text: list[model.Field] = [model.Field("title", work.title)]
        if work.publisher:
            text.append(model.Field("publisher", work.publisher))
        if work.journal:
            text.append(model.Field("journal", work.journal))
        if work.kind == "perplexity":
            text.append(model.Field("organization", "Perplexity"))
        entry = model.Entry(bibtex_type(work), work.key, text)
        encoded = encoder.transform(Library([entry])).entries[0]
        if work.authors:
            encoded.set_field(model.Field("author", _encode_names(encoder, work.authors)))
        if work.year:
            encoded.set_field(model.Field("year", str(work.year)))
        if work.isbn:
            encoded.set_field(model.Field("isbn", work.isbn))
        for name, value in (("volume", work.volume), ("number", work.number)):
            if value:
                encoded.set_field(model.Field(name, value))
        if work.doi:
            encoded.set_field(model.Field("doi", _verbatim(work.doi)))
        if work.url:
            encoded.set_field(model.Field("url", _verbatim(work.url)))
        if work.accessed and work.url:
            encoded.set_field(model.Field("urldate", work.accessed))
        if work.annotations:
            note = model.Entry("misc", "x", [model.Field("annote", "\n\n".join(work.annotations))])
            encoded.set_field(encoder.transform(Library([note])).entries[0].fields_dict["annote"])
        library.add(encoded)
    return write_string(library) if works else ""


def _encode_names(encoder: LatexEncodingMiddleware, authors: list[str]) -> str:
    """``Family, Given and {Organisation}``: each name encoded on its own, so that the braces
    that keep an organisation whole are not escaped with it."""
    pieces = []
    for name in authors:
        parts = person(name)
        plain = parts.get("literal") or (
            f"{parts['family']}, {parts['given']}" if "given" in parts else parts["family"]
        )
        probe = model.Entry("misc", "x", [model.Field("author", plain)])
        value = str(encoder.transform(Library([probe])).entries[0]["author"])
        pieces.append("{" + value + "}" if "literal" in parts else value)
    return " and ".join(pieces)


# -- CSL JSON ---------------------------------------------------------------------------------
def csl_type(work: Work) -> str:
    if work.journal:
        return "article-journal"
    if work.kind == "epub" or (work.kind == "pdf" and work.isbn):
        return "book"
    if work.kind in ("perplexity", "web"):
        return "webpage"
    return "document"


def to_csl(works: list[Work]) -> list[dict[str, Any]]:
    """The works as CSL JSON items (``id`` is the citation key; ``page`` the cited pages)."""
    if any(not w.key for w in works):
        assign_keys(works)
    items: list[dict[str, Any]] = []
    for work in works:
        item: dict[str, Any] = {"id": work.key, "type": csl_type(work), "title": work.title}
        if work.authors:
            item["author"] = [person(a) for a in work.authors]
        if work.year:
            item["issued"] = {"date-parts": [[work.year]]}
        if work.doi:
            item["DOI"] = work.doi
        if work.isbn:
            item["ISBN"] = work.isbn
        if work.publisher:
            item["publisher"] = work.publisher
        if work.journal:
            item["container-title"] = work.journal
        if work.volume:
            item["volume"] = work.volume
        if work.number:
            item["issue"] = work.number
        if work.url:
            item["URL"] = work.url
        if work.annotations:
            item["annote"] = "\n\n".join(work.annotations)
        if work.accessed and work.kind in ("perplexity", "web"):
            y, m, d = (int(p) for p in work.accessed.split("-"))
            item["accessed"] = {"date-parts": [[y, m, d]]}
        if work.pages:
            item["page"] = ", ".join(work.pages)
        items.append(item)
    return items
