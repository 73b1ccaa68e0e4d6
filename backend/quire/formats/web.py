"""Saved web pages: ``.html``/``.htm``/``.xhtml`` files, MHTML single-file saves
(``.mhtml``/``.mht``) and SingleFile's HTML, read as documents of kind ``web``
(docs/sources/web.md).

What the article is, as opposed to the navigation, cookie banners, comments and related-links
boxes around it, is readability-lxml's judgement (the port of Mozilla's Readability, chosen
over trafilatura by measurement: bench/webpages.py). Readability's own output loses structure
(headings styled with ``<font>`` or in their own ``<div>``), so the page is walked here, in
document order, block by block, and a block is kept when readability kept its text:

- headings (h1–h6) open sections, whose path is the citation's heading path; a heading is kept
  when readability kept it or the block after it is kept, and the article's title heading
  (the one the page's ``<title>`` names) opens the document even when readability left it out;
- paragraphs, list items ("- " or "3. "), code blocks (``<pre>``, lines as they are) and
  tables, each table as its rows with their header (formats/pdf/rows.py, as for PDF and Office
  tables: ``Model: BA graph · Clustering: 0.037``);
- scripts, styles, forms, hidden elements, ``<nav>``, blocks whose class or id names
  comments, cookie or consent banners, sharing or related links, and short paragraphs that
  are mostly links ("Lire aussi : …", "Read more: …") are never read.

The sections are cut as a Word file without rendered pages is (formats/office/flow.py): a unit
per heading path, labelled "The Four Golden Signals, ¶ 3–7".

Decoding: a byte-order mark, else UTF-8 when the bytes are valid UTF-8 (whatever the page
declares: a page declaring latin-1 that is UTF-8 is common), else the charset the page
declares (``<meta charset>``, ``http-equiv``, the XML declaration, an MHTML part's header),
else the legacy encodings of formats/detect.py.

Metadata (``documents.meta``): ``url`` (the address the caller knows, else the canonical link,
``og:url``, SingleFile's ``url:`` or the browser's ``saved from url=`` mark, MHTML's
``Snapshot-Content-Location``), ``site`` (``og:site_name``, else the URL's host),
``published`` (ISO date: ``article:published_time``, JSON-LD ``datePublished``, ``<time>``…),
``saved_with`` ("SingleFile", "MHTML" or null); title and author in their columns.

Hostile pages: more than :data:`MAX_HTML_BYTES` of HTML is refused; an ``.xhtml`` file that
declares entities (billion laughs, external entities) is refused as unsafe XML, as in EPUBs;
elements nested deeper than the HTML parser's 255 levels are refused (the parser would drop
what lies below); no network access, no script is run. A page with no text but scripts gets
:class:`~quire.errors.NeedsJavaScript`; one with no readable text, :class:`EmptyFile`.
"""

from __future__ import annotations

import codecs
import email
import email.policy
import json
import logging
import re
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import lxml.etree
import lxml.html

from quire.errors import CorruptFile, EmptyFile, FileTooLarge, NeedsJavaScript
from quire.formats.detect import XML_DECL, is_mhtml, legacy_encoding
from quire.formats.epub import check_xml_safe
from quire.formats.office.flow import Flow
from quire.formats.pdf.rows import Grid, table_rows
from quire.formats.types import Extracted

log = logging.getLogger(__name__)

#: The most HTML a page may have (a saved article is rarely over 2 MB; MHTML's pictures are
#: not counted).
MAX_HTML_BYTES = 16 << 20
#: How deep libxml2's HTML parser nests elements before it drops the rest of the page.
MAX_DEPTH = 255
#: Below this many characters of text a page with scripts is taken to be drawn by them.
MIN_TEXT_CHARS = 40
#: A block this long whose text lies inside what readability kept is kept, even when
#: readability cut it differently.
MIN_MATCH_CHARS = 30
MAX_JSON_LD = 100_000
#: A paragraph this short whose links make this share of its text is a related-links insert.
MAX_LINKS_CHARS = 200
LINK_SHARE = 0.6
#: Blocks kept anywhere inside the article, whatever readability made of them.
WINDOW_KINDS = ("code", "table")

_SKIP = {
    "script", "style", "noscript", "template", "head", "nav", "form", "button", "input",
    "select", "textarea", "iframe", "object", "embed", "svg", "math", "canvas", "audio",
    "video", "dialog", "label", "option",
}  # fmt: skip
_BLOCKS = {
    "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details",
    "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "header", "hgroup", "hr",
    "li", "main", "ol", "p", "section", "summary", "td", "th", "tr", "ul", "tbody", "thead",
    "tfoot", "html", "menu",
}  # fmt: skip
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
#: Class or id words of the boxes around an article (whole words of the attribute).
_BOILERPLATE = re.compile(
    r"(?:^|[\s_-])(?:comments?|comment-list|commentlist|cookies?|consent|gdpr|cookiebanner"
    r"|share|sharing|social|related|newsletter|breadcrumbs?|navbar|sidebar|mw-editsection"
    r"|skip-link|visually-hidden|sr-only)(?:$|[\s_-])",
    re.IGNORECASE,
)
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
#: A heading's own link to itself ("#", "¶", "🔗") or Wikipedia's "[edit]".
_ANCHOR_MARK = re.compile(r"\s*(?:[#¶§🔗]|\[\s*(?:edit|modifier|bearbeiten)\s*\])\s*$")
_SPACE = re.compile(r"\s+")
_DECLARED = re.compile(rb"""(?:encoding|charset)\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_DOCTYPE_SUBSET = re.compile(r"<!DOCTYPE[^\[>]*\[.*?\]\s*>", re.IGNORECASE | re.DOTALL)
_SINGLEFILE = re.compile(r"<!--\s*Page saved with SingleFile\s*(?:url:\s*(\S+))?", re.IGNORECASE)
_SAVED_FROM = re.compile(r"<!--\s*saved from url=\(\d+\)(\S+?)\s*-->", re.IGNORECASE)
_JS_NOTICE = re.compile(r"enable javascript|javascript (?:is )?(?:required|disabled)", re.I)
_DATE_META = (
    "article:published_time", "og:published_time", "datepublished", "date", "dc.date",
    "dc.date.issued", "dcterms.date", "dcterms.created", "citation_publication_date",
    "citation_date", "pubdate", "publishdate", "sailthru.date", "parsely-pub-date",
)  # fmt: skip
_AUTHOR_META = (
    "author", "article:author", "dc.creator", "citation_author", "byl", "parsely-author",
)  # fmt: skip


@dataclass
class _Item:
    """One block of the page in document order."""

    kind: str  # "heading", "text", "code", "table"
    text: str  # normalised text, what is matched against readability's
    level: int = 0
    shown: str = ""  # the text as stored (a list item's bullet, a code block's lines)
    grid: Grid | None = None
    kept: bool = False


def decode_html(data: bytes, declared: str | None = None) -> str:
    """The page's text (see the module docstring for the order)."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    found = _DECLARED.search(data[:4096])
    for encoding in (declared, found.group(1).decode("ascii") if found else None):
        if not encoding:
            continue
        try:
            codecs.lookup(encoding)
        except LookupError:
            continue
        if codecs.lookup(encoding).name == "utf-8":
            continue  # it is not
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    encoding = legacy_encoding(data)
    log.info("web page is not in the encoding it declares; decoding as %s", encoding)
    return data.decode(encoding, errors="replace")


def _mhtml_page(data: bytes) -> tuple[bytes, str | None, str | None]:
    """The HTML of an MHTML archive: (bytes, their declared charset, the page's address)."""
    message = email.message_from_bytes(data, policy=email.policy.compat32)
    snapshot = message.get("Snapshot-Content-Location")
    for part in message.walk():
        if part.get_content_type() in ("text/html", "application/xhtml+xml"):
            payload = part.get_payload(decode=True)
            if not isinstance(payload, bytes):
                break
            url = snapshot or part.get("Content-Location")
            return payload, part.get_content_charset(), url
    raise CorruptFile("This MHTML archive holds no HTML page (no text/html part).")


def read_web(path: Path, *, url: str | None = None) -> Extracted:
    """Read a saved page from a file (HTML, XHTML, SingleFile's HTML or MHTML)."""
    size = path.stat().st_size
    with path.open("rb") as fh:
        head = fh.read(4096).decode("utf-8", errors="replace")
    if is_mhtml(head):
        data, charset, saved_url = _mhtml_page(path.read_bytes())
        return read_html(data, url=url, declared=charset, saved_url=saved_url, saved="MHTML")
    if size > MAX_HTML_BYTES:
        raise FileTooLarge(_too_large(size))
    return read_html(path.read_bytes(), url=url, name=path.name)


def _too_large(size: int) -> str:
    return (
        f"This web page is {size / 2**20:.1f} MB of HTML, over the "
        f"{MAX_HTML_BYTES >> 20} MB a page may have; nothing was read."
    )


def read_html(
    data: bytes,
    *,
    url: str | None = None,
    declared: str | None = None,
    saved_url: str | None = None,
    saved: str | None = None,
    name: str = "the page",
) -> Extracted:
    """Read one page's HTML into sections (see the module docstring).

    ``url``: the page's address when the caller knows it (fetched, or sent by the browser
    extension); it wins over what the page says. ``declared``: the charset a transport or
    archive declared. ``saved_url``/``saved``: what an archive (MHTML) says of the page."""
    if len(data) > MAX_HTML_BYTES:
        raise FileTooLarge(_too_large(len(data)))
    text = decode_html(data, declared)
    if "<!ENTITY" in text[:65536].upper() or text.lstrip("\ufeff \t\r\n").startswith("<?xml"):
        check_xml_safe(name, text.encode("utf-8"))  # XHTML: no entity may be declared
    if match := _SINGLEFILE.search(text[:4096]):
        saved, saved_url = "SingleFile", match.group(1) or saved_url
    elif match := _SAVED_FROM.search(text[:4096]):
        saved_url = match.group(1)
    markup = _DOCTYPE_SUBSET.sub("<!DOCTYPE html>", XML_DECL.sub("", text, count=1), count=1)
    root = _parse(markup)
    meta = _metadata(root, url, saved_url)
    meta["saved_with"] = saved
    title_text = meta.pop("_title")
    author = meta.pop("_author")
    body = root.find("body")
    walker = _Walker()
    if body is not None:
        walker.walk(body)
    items = walker.done()
    if sum(len(i.text) for i in items) < MIN_TEXT_CHARS:
        _no_text(root, items)
    kept = _kept_blocks(markup)
    page_title = meta.pop("_page_title") or ""
    _choose(items, kept, [title_text or "", page_title])
    heading = next((it.text for it in items if it.kept and it.kind == "heading"), "")
    if title_text == page_title and heading and heading in page_title:
        title_text = heading  # "Homo Brandenburgensis", not "… | Brandenburgische Landes…"
    flow = Flow()
    for item in items:
        if not item.kept:
            continue
        if item.kind == "heading":
            flow.heading(item.level, item.text)
        elif item.kind == "table" and item.grid is not None:
            flow.rows(table_rows(item.grid))
        else:
            flow.paragraph(item.shown or item.text)
    pages = flow.pages(paginated=False, source="web")
    if not pages:
        raise EmptyFile("No readable text in this web page: nothing in it reads as an article.")
    return Extracted(kind="web", title=title_text, author=author, pages=pages, metadata=meta)


def _parse(markup: str) -> lxml.html.HtmlElement:
    """The page's tree, without comments; refused when nested past the parser's depth."""
    parser = lxml.html.HTMLParser(
        remove_comments=True, remove_pis=True, no_network=True, default_doctype=False
    )
    try:
        root = lxml.html.document_fromstring(markup, parser=parser)
    except (lxml.etree.ParserError, ValueError) as exc:
        raise EmptyFile(f"No readable text in this web page ({exc}).") from exc
    if any("Excessive depth" in e.message for e in parser.error_log):
        raise CorruptFile(
            f"This web page nests its elements more than {MAX_DEPTH} deep (a broken or hostile "
            "page): the HTML parser would drop what lies below, so nothing was read."
        )
    return root


def _no_text(root: lxml.html.HtmlElement, items: list[_Item]) -> None:
    """Raise the error of a page without text: drawn by scripts, or simply empty."""
    scripts = root.xpath("//script[@src or string-length(normalize-space(.)) > 0]")
    notice = " ".join(" ".join(n.itertext()) for n in root.iter("noscript"))
    if scripts or _JS_NOTICE.search(notice):
        raise NeedsJavaScript(
            "This page shows no text without JavaScript (its scripts draw it in the browser, "
            "and Quire never runs them): save it from the browser with the Quire extension, "
            "which sends the page as you see it."
        )
    raise EmptyFile("No readable text in this web page.")


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


class _Walker:
    """Blocks of a tree in document order (see the module docstring)."""

    def __init__(self) -> None:
        self.items: list[_Item] = []
        self.buffer: list[str] = []
        self.bullet = ""

    def flush(self) -> None:
        raw = "".join(self.buffer)
        self.buffer = []
        lines = [_norm(line) for line in raw.split("\n")]
        text = "\n".join(line for line in lines if line)
        if text:
            self.items.append(_Item("text", _norm(text), shown=self.bullet + text))
        self.bullet = ""

    def walk(self, el: lxml.html.HtmlElement) -> None:
        tag = el.tag if isinstance(el.tag, str) else ""
        if tag in _SKIP or _hidden(el):
            return
        if tag in _HEADINGS:
            self.flush()
            title = _ANCHOR_MARK.sub("", _norm(_heading_text(el)))
            if title:
                self.items.append(_Item("heading", title, level=_HEADINGS[tag]))
            return
        if tag == "pre":
            self.flush()
            code = "\n".join(line.rstrip() for line in _pre_text(el).strip("\n").split("\n"))
            if code.strip():
                self.items.append(_Item("code", _norm(code), shown=code))
            return
        if tag == "table" and (grid := _grid(el)) is not None:
            self.flush()
            caption = _norm(" ".join(c.text_content() for c in el.iterchildren("caption")))
            if caption:  # "Table 6-1. Example symptoms and causes"
                self.items.append(_Item("text", caption, shown=caption))
            cells = [c for row in grid for c in row if c]
            self.items.append(_Item("table", _norm(" ".join(cells)), grid=grid))
            return
        if tag == "p" and _links_only(el):
            return
        if tag == "br":
            self.buffer.append("\n")
        block = tag in _BLOCKS
        if block:
            self.flush()
        if tag == "li":
            parent = el.getparent()
            if parent is not None and parent.tag == "ol":
                self.bullet = f"{[c for c in parent if c.tag == 'li'].index(el) + 1}. "
            else:
                self.bullet = "- "
        if el.text:
            self.buffer.append(el.text)
        for child in el:
            self.walk(child)
            if child.tail:
                self.buffer.append(child.tail)
        if block:
            self.flush()

    def done(self) -> list[_Item]:
        self.flush()
        return self.items


def _hidden(el: lxml.html.HtmlElement) -> bool:
    if el.get("hidden") is not None or el.get("aria-hidden") == "true":
        return True
    if _HIDDEN_STYLE.search(el.get("style") or ""):
        return True
    marks = f"{el.get('class') or ''} {el.get('id') or ''} {el.get('role') or ''}"
    return el.tag not in ("body", "html", "main", "article") and bool(_BOILERPLATE.search(marks))


def _pre_text(pre: lxml.html.HtmlElement) -> str:
    """A code block's text, its ``<br>`` as line breaks."""
    parts: list[str] = []

    def add(el: lxml.html.HtmlElement) -> None:
        if el.tag == "br":
            parts.append("\n")
        elif isinstance(el.tag, str) and el.text:
            parts.append(el.text)
        for child in el:
            add(child)
            if child.tail:
                parts.append(child.tail)

    add(pre)
    return "".join(parts)


def _links_only(p: lxml.html.HtmlElement) -> bool:
    """A short paragraph that is mostly links: a "Lire aussi : …" or "Read more" insert."""
    text = _norm(p.text_content())
    if not text or len(text) > MAX_LINKS_CHARS:
        return False
    linked = sum(len(_norm(a.text_content())) for a in p.iter("a"))
    return linked >= LINK_SHARE * len(text)


def _heading_text(el: lxml.html.HtmlElement) -> str:
    """A heading's text without its edit links and hidden parts."""
    parts: list[str] = []

    def add(node: lxml.html.HtmlElement) -> None:
        if node.text:
            parts.append(node.text)
        for child in node:
            if isinstance(child.tag, str) and child.tag not in _SKIP and not _hidden(child):
                add(child)
            if child.tail:
                parts.append(child.tail)

    add(el)
    return "".join(parts)


def _grid(table: lxml.html.HtmlElement) -> Grid | None:
    """A data table's cells (a merged cell repeated where it spans); None for a layout table
    (one column or row, nested tables, or long cells), which is read as its blocks."""
    if table.xpath(".//table"):
        return None
    grid: Grid = []
    spans: dict[int, tuple[int, str]] = {}  # column -> (rows left, text) of a rowspan above
    for tr in table.iter("tr"):
        row: list[str | None] = []
        for cell in [c for c in tr if c.tag in ("td", "th")]:
            _spanned(row, spans)
            text = _norm(" ".join(cell.itertext()))
            down = _int(cell.get("rowspan"), 1, 500)
            for _ in range(_int(cell.get("colspan"), 1, 50)):
                if down > 1:
                    spans[len(row)] = (down - 1, text)
                row.append(text)
        _spanned(row, spans)
        if any(row):
            grid.append(row)
    width = max((len(r) for r in grid), default=0)
    longest = max((len(c) for r in grid for c in r if c), default=0)
    if len(grid) < 2 or width < 2 or longest > 400:
        return None
    return grid


def _spanned(row: list[str | None], spans: dict[int, tuple[int, str]]) -> None:
    """Fill the next columns of ``row`` that cells of the rows above span down into."""
    while len(row) in spans:
        left, text = spans.pop(len(row))
        if left > 1:
            spans[len(row)] = (left - 1, text)
        row.append(text)


def _int(value: str | None, default: int, most: int) -> int:
    try:
        return max(1, min(int(value or default), most))
    except ValueError:
        return default


def _kept_blocks(markup: str) -> tuple[set[str], str]:
    """What readability keeps of the page: its blocks' texts, and all of it as one string."""
    from readability import Document
    from readability.readability import Unparseable

    try:
        summary = Document(markup).summary(html_partial=True)
    except Unparseable:
        return set(), ""
    tree = lxml.html.fragment_fromstring(summary, create_parent="div")
    walker = _Walker()
    walker.walk(tree)
    items = walker.done()
    texts = {i.text for i in items}
    for item in items:  # a table readability kept: each of its cells
        if item.grid is not None:
            texts.update(_norm(c) for row in item.grid for c in row if c)
    return texts, " ".join(i.text for i in items)


def _choose(items: list[_Item], kept: tuple[set[str], str], titles: list[str]) -> None:
    """Mark the items of the article (see the module docstring)."""
    texts, joined = kept

    def inside(text: str) -> bool:
        return text in texts or (len(text) >= MIN_MATCH_CHARS and text in joined)

    for item in items:
        if item.kind == "table" and item.grid is not None:
            cells = [_norm(c) for row in item.grid for c in row if c]
            item.kept = sum(inside(c) or c in joined for c in cells) >= len(cells) / 2
        elif item.kind != "heading":
            item.kept = inside(item.text)
    # Only between the first and the last long block kept: a teaser of the article in a
    # sidebar repeats its text.
    strong = [
        i
        for i, it in enumerate(items)
        if it.kept and len(it.text) >= MIN_MATCH_CHARS and it.text in texts
    ]
    if not strong:
        strong = [i for i, it in enumerate(items) if it.kept]
    if not strong:
        return
    first, last = strong[0], strong[-1]
    for i, item in enumerate(items):
        if item.kind != "heading":
            # Inside the article, code and tables readability dropped (a ``<pre>`` in a
            # highlighter's ``<div>``, a table of short cells) are the article's.
            inside_article = first <= i <= last
            item.kept = inside_article and (item.kept or item.kind in WINDOW_KINDS)
    for i, item in enumerate(items):
        if item.kind != "heading":
            continue
        after = next((x for x in items[i + 1 :] if x.kind != "heading"), None)
        item.kept = (first <= i <= last and item.text in texts) or (
            after is not None and after.kept and i < last
        )
    if any(it.kept for it in items[:first] if it.kind == "heading"):
        return
    wanted = [t.casefold() for t in titles if t]
    for item in reversed(items[:first]):
        name = item.text.casefold()
        if item.kind == "heading" and len(name) >= 3 and any(name in t for t in wanted):
            item.kept = True
            return


def _metadata(
    root: lxml.html.HtmlElement, url: str | None, saved_url: str | None
) -> dict[str, Any]:
    """url, site, published and the title/author (``_title``, ``_author``, ``_page_title``)."""
    metas: dict[str, str] = {}
    for m in root.iter("meta"):
        key = (m.get("property") or m.get("name") or m.get("itemprop") or "").strip().lower()
        value = _norm(m.get("content") or "")
        if key and value and key not in metas:
            metas[key] = value
    ld = _json_ld(root)
    canonical = next(
        (
            (link.get("href") or "").strip()
            for link in root.iter("link")
            if "canonical" in (link.get("rel") or "").lower().split() and link.get("href")
        ),
        None,
    )
    page_title = _norm(root.findtext(".//title") or "")
    own = url or _absolute(canonical, saved_url) or _absolute(metas.get("og:url"), saved_url)
    own = own or saved_url or ld.get("url")
    if own and urlsplit(own).scheme not in ("http", "https"):
        own = saved_url if saved_url and urlsplit(saved_url).scheme in ("http", "https") else None
    site = metas.get("og:site_name") or ld.get("publisher") or metas.get("application-name")
    if not site and own:
        site = urlsplit(own).hostname
    published = next((_iso_date(metas[k]) for k in _DATE_META if k in metas), None)
    published = published or _iso_date(ld.get("datePublished") or "")
    if not published:
        times = root.xpath("//article//time[@datetime] | //time[@pubdate][@datetime]")
        published = _iso_date(times[0].get("datetime")) if times else None
    author = next((metas[k] for k in _AUTHOR_META if k in metas and "://" not in metas[k]), None)
    author = author or ld.get("author")
    title = metas.get("og:title") or ld.get("headline") or page_title or None
    return {
        "url": own,
        "site": site,
        "published": published,
        "_title": title,
        "_author": author,
        "_page_title": page_title,
    }


def _absolute(href: str | None, base: str | None) -> str | None:
    if not href:
        return None
    return urljoin(base, href) if base else href


def _json_ld(root: lxml.html.HtmlElement) -> dict[str, str]:
    """headline, author, datePublished, publisher and url of the page's JSON-LD article."""
    found: dict[str, str] = {}
    for script in root.xpath("//script[@type='application/ld+json']"):
        raw = script.text or ""
        if len(raw) > MAX_JSON_LD:
            continue
        try:
            data = json.loads(raw)
        except ValueError:
            continue
        nodes = data if isinstance(data, list) else data.get("@graph", [data])
        for node in nodes if isinstance(nodes, list) else []:
            if not isinstance(node, dict):
                continue
            for key in ("headline", "datePublished", "url"):
                if isinstance(node.get(key), str) and key not in found:
                    found[key] = node[key]
            author = node.get("author")
            named = [a.get("name") if isinstance(a, dict) else a for a in _listed(author)]
            names = [n for n in named if isinstance(n, str) and n.strip()]
            if names and "author" not in found:
                found["author"] = "; ".join(names)
            publisher = node.get("publisher")
            if isinstance(publisher, dict) and isinstance(publisher.get("name"), str):
                found.setdefault("publisher", publisher["name"])
    return found


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value] if value else []


def _iso_date(value: str | None) -> str | None:
    """``2015-05-05`` of ``2015-05-05T18:53:17+02:00``, ``2015-05-05`` or ``20150505``."""
    value = (value or "").strip()
    for text, fmt in ((value[:10], "%Y-%m-%d"), (value[:8], "%Y%m%d")):
        try:
            return datetime.strptime(text, fmt).date().isoformat()
        except ValueError:
            continue
    try:
        return date.fromisoformat(value).isoformat()
    except ValueError:
        return None
