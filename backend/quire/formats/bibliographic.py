"""What a document declares about itself for a citation: authors, year, DOI, ISBN, publisher.

Read once at ingest and kept in ``documents.metadata`` (only the keys that were found):

    authors    list[str]  "Allen B. Downey", in the order declared (honorifics dropped)
    year       int        publication year (EPUB dc:date; PDF XMP dates, else CreationDate)
    doi        str        "10.1145/1234.5678" (XMP prism:doi / dc:identifier, the Info
                          dictionary, else the one DOI printed on the first page)
    isbn       str        13 or 10 digits, checksum-valid (EPUB identifier, or PDF text)
    publisher  str        EPUB dc:publisher, PDF XMP dc:publisher
    identifier_url str    an EPUB identifier that is a web address (Project Gutenberg's)

Sources: a PDF's Info dictionary and XMP metadata stream (pdfminer, no page is parsed), the
text of its first pages for a printed DOI or ISBN, an EPUB's OPF package metadata. Nothing
here fails an ingest: an unreadable declaration is simply not kept.
"""

from __future__ import annotations

import logging
import posixpath
import re
import zipfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import Element

from defusedxml.ElementTree import fromstring as safe_fromstring
from pdfminer.pdfdocument import PDFDocument
from pdfminer.pdfparser import PDFParser
from pdfminer.pdftypes import resolve1
from pdfminer.utils import decode_text

from quire.storage.records import Kind, Page

log = logging.getLogger(__name__)

DOI = re.compile(r"\b(10\.\d{4,9}/[-._;()/:A-Z0-9]+)", re.IGNORECASE)
_ISBN = re.compile(r"\bISBN(?:-1[03])?:?\s*((?:97[89][- ]?)?(?:\d[- ]?){9}[\dX])\b", re.I)
_YEAR = re.compile(r"(?<!\d)(\d{4})(?!\d)")
_HONORIFIC = re.compile(r"^(?:(?:dr|prof|pr|mr|mrs|ms|sir)\.?\s+)+", re.I)
_SPACE = re.compile(r"\s+")
#: Text pages searched for a printed DOI (the first) and ISBN (a book's copyright page).
DOI_PAGES, ISBN_PAGES = 1, 6

_NS = {
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "dc": "http://purl.org/dc/elements/1.1/",
    "prism": "http://prismstandard.org/namespaces/basic/2.0/",
    "prism3": "http://prismstandard.org/namespaces/basic/3.0/",
    "pdfx": "http://ns.adobe.com/pdfx/1.3/",
    "xmp": "http://ns.adobe.com/xap/1.0/",
    "opf": "http://www.idpf.org/2007/opf",
    "container": "urn:oasis:names:tc:opendocument:xmlns:container",
}


def read_bibliographic(path: Path, kind: Kind, pages: Sequence[Page]) -> dict[str, Any]:
    """The citation metadata ``path`` declares (only the keys found); never raises."""
    try:
        if kind == "pdf":
            return _pdf(path, pages)
        if kind == "epub":
            return _epub(path)
    except Exception as exc:  # noqa: BLE001 - metadata is a nicety, never a failed ingest
        log.info("%s: no bibliographic metadata (%s: %s)", path.name, type(exc).__name__, exc)
    return {}


# -- values -----------------------------------------------------------------------------------
def _clean(value: object) -> str | None:
    value = resolve1(value)
    if isinstance(value, bytes):
        value = decode_text(value)
    if not isinstance(value, str):
        return None
    value = _SPACE.sub(" ", "".join(c for c in value if c.isprintable() or c.isspace())).strip()
    return value or None


def split_authors(declared: str) -> list[str]:
    """One declared author string as names: "A and B", "A; B", "A, B" (when each part is a
    whole name, not "Family, Given")."""
    declared = declared.strip().strip(";,")
    if ";" in declared:
        parts = declared.split(";")
    elif re.search(r"\s(?:and|&)\s", declared):
        parts = re.split(r",?\s(?:and|&)\s|,\s*", declared)
    elif "," in declared and all(len(p.split()) >= 2 for p in declared.split(",")):
        parts = declared.split(",")
    else:
        parts = [declared]
    return _names(parts)


def _names(parts: Iterable[str]) -> list[str]:
    out: list[str] = []
    for part in parts:
        name = _HONORIFIC.sub("", _SPACE.sub(" ", part).strip())
        if name and name not in out:
            out.append(name)
    return out


def parse_year(value: str | None) -> int | None:
    """The year of a PDF date ("D:20171129…"), an ISO date or free text; None if implausible."""
    if not value:
        return None
    value = value.strip().removeprefix("D:")
    # PDF and ISO dates start with the year ("20171129155014-05'00'", "1998-03-01").
    match = re.match(r"(\d{4})", value) or _YEAR.search(value)
    if match is None:
        return None
    year = int(match.group(1))
    return year if 1400 <= year <= 2100 else None


def normalise_doi(value: str | None) -> str | None:
    """The DOI in ``value`` ("doi:10.…", "https://doi.org/10.…"), trailing punctuation off."""
    if not value:
        return None
    match = DOI.search(value)
    if match is None:
        return None
    doi = match.group(1).rstrip(".,;:")
    while doi.endswith(")") and doi.count(")") > doi.count("("):
        doi = doi[:-1].rstrip(".,;:")
    return doi


def normalise_isbn(value: str | None) -> str | None:
    """Digits of a checksum-valid ISBN-10 or -13 in ``value``; None otherwise."""
    if not value:
        return None
    digits = re.sub(r"[^0-9Xx]", "", value.removeprefix("urn:isbn:")).upper()
    if len(digits) == 13 and digits.isdigit():
        total = sum(int(d) * (3 if i % 2 else 1) for i, d in enumerate(digits))
        return digits if total % 10 == 0 else None
    if len(digits) == 10 and digits[:9].isdigit():
        total = sum((10 - i) * (10 if d == "X" else int(d)) for i, d in enumerate(digits))
        return digits if total % 11 == 0 else None
    return None


def _printed_doi(pages: Sequence[Page]) -> str | None:
    # Only when the first page names exactly one: a page citing several names other works.
    found = {normalise_doi(m.group(1)) for p in pages[:DOI_PAGES] for m in DOI.finditer(p.text)}
    found.discard(None)
    return found.pop() if len(found) == 1 else None


def _printed_isbn(pages: Sequence[Page]) -> str | None:
    for page in pages[:ISBN_PAGES]:
        for m in _ISBN.finditer(page.text):
            if isbn := normalise_isbn(m.group(1)):
                return isbn
    return None


def _put(out: dict[str, Any], key: str, value: Any) -> None:
    if value and key not in out:
        out[key] = value


# -- PDF --------------------------------------------------------------------------------------
def _pdf(path: Path, pages: Sequence[Page]) -> dict[str, Any]:
    info: dict[str, Any] = {}
    xmp: dict[str, Any] = {}
    with path.open("rb") as fh:
        doc = PDFDocument(PDFParser(fh), password="")
        for entry in doc.info:
            info.update(entry)
        stream = resolve1(doc.catalog.get("Metadata"))
        if stream is not None and hasattr(stream, "get_data"):
            xmp = _xmp(stream.get_data())
    out: dict[str, Any] = {}
    if author := _clean(info.get("Author")):
        _put(out, "authors", split_authors(author))
    _put(out, "authors", xmp.get("authors"))
    _put(out, "year", xmp.get("year"))
    _put(out, "year", parse_year(_clean(info.get("CreationDate"))))
    for key in ("doi", "DOI", "prism:doi"):
        _put(out, "doi", normalise_doi(_clean(info.get(key))))
    _put(out, "doi", xmp.get("doi"))
    _put(out, "doi", _printed_doi(pages))
    _put(out, "isbn", _printed_isbn(pages))
    _put(out, "publisher", xmp.get("publisher"))
    return out


def _texts(root: Element, path: str) -> list[str]:
    """Every value of an XMP property: plain text, or each rdf:li of a Seq, Bag or Alt."""
    values: list[str] = []
    for element in root.iterfind(f".//{path}", _NS):
        items = element.findall(".//rdf:li", _NS) or [element]
        for item in items:
            if text := _clean(item.text or ""):
                values.append(text)
    return values


def _xmp(data: bytes) -> dict[str, Any]:
    try:
        root = safe_fromstring(data.strip(b"\x00 \r\n\t"))
    except Exception:  # noqa: BLE001 - a broken XMP packet is as good as none
        return {}
    out: dict[str, Any] = {}
    _put(out, "authors", _names(_texts(root, "dc:creator")))
    for path in ("prism:doi", "prism3:doi", "pdfx:doi", "dc:identifier"):
        for value in _texts(root, path):
            _put(out, "doi", normalise_doi(value))
    for path in ("prism:publicationDate", "prism:coverDate", "dc:date"):
        for value in _texts(root, path):
            _put(out, "year", parse_year(value))
    _put(out, "publisher", next(iter(_texts(root, "dc:publisher")), None))
    return out


# -- EPUB -------------------------------------------------------------------------------------
def _epub(path: Path) -> dict[str, Any]:
    with zipfile.ZipFile(path) as zf:
        container = safe_fromstring(zf.read("META-INF/container.xml"))
        rootfile = container.find(".//container:rootfile", _NS)
        if rootfile is None or not rootfile.get("full-path"):
            return {}
        opf_path = posixpath.normpath(str(rootfile.get("full-path")))
        opf = safe_fromstring(zf.read(opf_path))
    metadata = opf.find("opf:metadata", _NS)
    if metadata is None:
        return {}
    out: dict[str, Any] = {}
    # EPUB 3 says who is an author with <meta refines="#id" property="role">aut</meta>; EPUB 2
    # with opf:role. Creators with another role (editor, illustrator) are left out.
    roles = {
        str(m.get("refines", "")).lstrip("#"): (m.text or "").strip()
        for m in metadata.findall("opf:meta[@property='role']", _NS)
    }
    creators: list[tuple[str, str]] = []
    for creator in metadata.findall("dc:creator", _NS):
        role = roles.get(creator.get("id", "")) or creator.get(f"{{{_NS['opf']}}}role") or "aut"
        if creator.text:
            creators.append((role, creator.text))
    authors = [name for role, name in creators if role == "aut"]
    _put(out, "authors", _names(authors or [name for _, name in creators]))
    for date in metadata.findall("dc:date", _NS):
        event = date.get(f"{{{_NS['opf']}}}event")
        if event in (None, "publication", "original-publication"):
            _put(out, "year", parse_year(date.text))
    for date in metadata.findall("dc:date", _NS):
        _put(out, "year", parse_year(date.text))
    for identifier in metadata.findall("dc:identifier", _NS):
        value = (identifier.text or "").strip()
        scheme = (identifier.get(f"{{{_NS['opf']}}}scheme") or "").lower()
        if scheme == "doi" or value.lower().startswith(("doi:", "urn:doi:", "10.")):
            _put(out, "doi", normalise_doi(value))
        elif scheme == "isbn" or value.lower().startswith(("isbn", "urn:isbn:", "97")):
            _put(out, "isbn", normalise_isbn(value))
        elif value.startswith(("http://", "https://")):
            _put(out, "identifier_url", value)
    publisher = metadata.find("dc:publisher", _NS)
    _put(out, "publisher", _clean(publisher.text if publisher is not None else None))
    return out
