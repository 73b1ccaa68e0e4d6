"""An Office Open XML or OpenDocument package, opened only once it is known to be safe.

Both are zip archives of XML parts. Before any part is parsed, here or by python-pptx or
openpyxl, the archive passes the EPUB reader's checks (entry count, names, unpacked size and
compression ratio, read from the zip's directory before anything is inflated: formats/epub.py
:func:`check_zip_limits`), and every XML part is streamed once looking for a document type
declaration. Neither format ever declares one, so a DTD can only be an attack (entity
expansion, an external entity naming a local file or a URL): the file is refused. Parts are
then parsed by lxml with entities left unresolved and the network off.

    with open_package(path, "Word document", max_unpacked) as pkg:
        root = pkg.xml(main_part(pkg))

Below, what Office Open XML packages share: a part's relationships, the main part, the page
count and the title and author the application recorded.
"""

from __future__ import annotations

import posixpath
import zipfile
import zlib
from pathlib import Path
from types import TracebackType

from lxml import etree

from quire.errors import CorruptFile
from quire.formats.epub import MAX_UNPACKED_BYTES, check_zip_limits

REL = "http://schemas.openxmlformats.org/package/2006/relationships"
OFFICE_DOCUMENT = "/officeDocument"
_DTD = b"<!DOCTYPE"
_BLOCK = 1 << 16
XML_PARSER = etree.XMLParser(
    resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, recover=False
)


def _is_xml(name: str) -> bool:
    return name.lower().endswith((".xml", ".rels"))


class Package:
    """A checked zip package: read its XML parts by name (see the module docstring)."""

    def __init__(self, path: Path, label: str, max_unpacked_bytes: int) -> None:
        self.label = label
        try:
            self.zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
            raise CorruptFile(f"Damaged {label}: not a readable zip archive ({exc})") from exc
        try:
            self.names = {i.filename for i in check_zip_limits(self.zip, label, max_unpacked_bytes)}
            for name in sorted(self.names):
                if _is_xml(name):
                    self._refuse_dtd(name)
        except BaseException:
            self.zip.close()
            raise

    def _refuse_dtd(self, name: str) -> None:
        tail = b""
        try:
            with self.zip.open(name) as fh:
                while block := fh.read(_BLOCK):
                    if _DTD in tail + block:
                        raise CorruptFile(
                            f"unsafe XML: {name} in this {self.label} declares a document type "
                            "(entity expansion or an external entity); refused"
                        )
                    tail = block[-len(_DTD) :]
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError) as exc:
            raise CorruptFile(f"Damaged {self.label}: {name} cannot be read ({exc})") from exc

    def read(self, name: str) -> bytes | None:
        """A part's bytes, or None when the package has no such part."""
        if name not in self.names:
            return None
        try:
            return self.zip.read(name)
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError) as exc:
            raise CorruptFile(f"Damaged {self.label}: {name} cannot be read ({exc})") from exc

    def xml(self, name: str) -> etree._Element | None:
        """A part parsed, or None when it is missing."""
        data = self.read(name)
        if data is None:
            return None
        try:
            return etree.fromstring(data, XML_PARSER)
        except etree.XMLSyntaxError as exc:
            raise CorruptFile(
                f"Damaged {self.label}: {name} is not well-formed XML ({exc})"
            ) from exc

    def close(self) -> None:
        self.zip.close()

    def __enter__(self) -> Package:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def open_package(path: Path, label: str, max_unpacked_bytes: int = MAX_UNPACKED_BYTES) -> Package:
    """The package at ``path``, checked (CorruptFile, ResourceLimit when it is not safe)."""
    return Package(path, label, max_unpacked_bytes)


# -- Office Open XML -------------------------------------------------------------------------
def relationships(pkg: Package, part: str) -> dict[str, list[str]]:
    """A part's relationships: type (its last path segment, "/styles") -> target parts."""
    folder, name = posixpath.split(part)
    root = pkg.xml(posixpath.join(folder, "_rels", f"{name}.rels"))
    out: dict[str, list[str]] = {}
    if root is None:
        return out
    for rel in root.iter(f"{{{REL}}}Relationship"):
        if rel.get("TargetMode") == "External":
            continue
        kind = "/" + (rel.get("Type") or "").rsplit("/", 1)[-1]
        target = rel.get("Target") or ""
        path = target.lstrip("/") if target.startswith("/") else posixpath.join(folder, target)
        out.setdefault(kind, []).append(posixpath.normpath(path))
    return out


def main_part(pkg: Package) -> str:
    """The package's main document part (the officeDocument relationship of /_rels/.rels)."""
    targets = relationships(pkg, "").get(OFFICE_DOCUMENT, [])
    if not targets or targets[0] not in pkg.names:
        raise CorruptFile(f"Damaged {pkg.label}: no main document part")
    return targets[0]


def rendered_pages(pkg: Package) -> int | None:
    """The page count the application recorded (docProps/app.xml ``Pages``), if any."""
    root = pkg.xml("docProps/app.xml")
    if root is None:
        return None
    for el in root.iter("{*}Pages"):
        if (el.text or "").strip().isdigit():
            return int((el.text or "").strip())
    return None


def core_properties(pkg: Package) -> tuple[str | None, str | None]:
    """(title, author) from docProps/core.xml."""
    root = pkg.xml("docProps/core.xml")

    def first(tag: str) -> str | None:
        for el in root.iter(tag) if root is not None else ():
            text = " ".join((el.text or "").split())
            if text:
                return text
        return None

    return first("{http://purl.org/dc/elements/1.1/}title"), first(
        "{http://purl.org/dc/elements/1.1/}creator"
    )
