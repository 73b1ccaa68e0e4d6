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
per heading path, labelled "The Four Golden Signals, ¶ 3–7". The walk is web_blocks.py's, what
the page says of itself (below) web_meta.py's.

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
import logging
import re
from pathlib import Path

import lxml.etree
import lxml.html

from quire.errors import CorruptFile, EmptyFile, FileTooLarge, NeedsJavaScript
from quire.formats.detect import XML_DECL, is_mhtml, legacy_encoding
from quire.formats.epub import check_xml_safe
from quire.formats.office.flow import Flow
from quire.formats.pdf.rows import table_rows
from quire.formats.types import Extracted
from quire.formats.web_blocks import Item, Walker, norm
from quire.formats.web_meta import page_metadata

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
#: Blocks kept anywhere inside the article, whatever readability made of them.
WINDOW_KINDS = ("code", "table")

_DECLARED = re.compile(rb"""(?:encoding|charset)\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_DOCTYPE_SUBSET = re.compile(r"<!DOCTYPE[^\[>]*\[.*?\]\s*>", re.IGNORECASE | re.DOTALL)
_SINGLEFILE = re.compile(r"<!--\s*Page saved with SingleFile\s*(?:url:\s*(\S+))?", re.IGNORECASE)
_SAVED_FROM = re.compile(r"<!--\s*saved from url=\(\d+\)(\S+?)\s*-->", re.IGNORECASE)
_JS_NOTICE = re.compile(r"enable javascript|javascript (?:is )?(?:required|disabled)", re.I)


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
    meta = page_metadata(root, url, saved_url)
    meta["saved_with"] = saved
    title_text = meta.pop("_title")
    author = meta.pop("_author")
    body = root.find("body")
    walker = Walker()
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


def _no_text(root: lxml.html.HtmlElement, items: list[Item]) -> None:
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


def _kept_blocks(markup: str) -> tuple[set[str], str]:
    """What readability keeps of the page: its blocks' texts, and all of it as one string."""
    from readability import Document
    from readability.readability import Unparseable

    try:
        summary = Document(markup).summary(html_partial=True)
    except Unparseable:
        return set(), ""
    tree = lxml.html.fragment_fromstring(summary, create_parent="div")
    walker = Walker()
    walker.walk(tree)
    items = walker.done()
    texts = {i.text for i in items}
    for item in items:  # a table readability kept: each of its cells
        if item.grid is not None:
            texts.update(norm(c) for row in item.grid for c in row if c)
    return texts, " ".join(i.text for i in items)


def _choose(items: list[Item], kept: tuple[set[str], str], titles: list[str]) -> None:
    """Mark the items of the article (see the module docstring)."""
    texts, joined = kept

    def inside(text: str) -> bool:
        return text in texts or (len(text) >= MIN_MATCH_CHARS and text in joined)

    for item in items:
        if item.kind == "table" and item.grid is not None:
            cells = [norm(c) for row in item.grid for c in row if c]
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
