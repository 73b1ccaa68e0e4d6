"""Hostile and broken files, generated on the fly (nothing large is checked in).

Each builder returns bytes; :func:`hostile_corpus` gives the whole set with the phrase the
failed job's error must contain. PDFs are written object by object with a correct xref table,
so that pdfminer reaches the hostile part instead of failing on the container.
"""

from __future__ import annotations

import io
import tempfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from tests.ingest.test_epub import LAUGHS, XXE, chapter, make_epub

ZEROS_MB = 16


def raw_pdf(objects: list[bytes], *, root: int = 1) -> bytes:
    """A PDF of ``objects`` (numbered from 1) with a valid xref table and trailer."""
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root %d 0 R >>\n" % (len(objects) + 1, root))
    out.write(b"startxref\n%d\n%%%%EOF\n" % xref)
    return out.getvalue()


def stream(data: bytes, extra: bytes = b"") -> bytes:
    return b"<< /Length %d %s >>\nstream\n" % (len(data), extra) + data + b"\nendstream"


FONT = b"<< /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >>"


def one_page_pdf(content_obj: bytes, *more: bytes, resources: bytes = FONT) -> bytes:
    """Catalog, pages, one page whose content is object 4, then ``more`` from object 5."""
    return raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources " + resources + b" >>",
            content_obj,
            *more,
        ]
    )


def many_pages_pdf(pages: int, count: int | None = None) -> bytes:
    """A page tree of ``pages`` empty pages (about 60 bytes each) claiming ``count`` pages."""
    kids = b" ".join(b"%d 0 R" % (3 + i) for i in range(pages))
    claimed = pages if count is None else count
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] >>"
    return raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % claimed,
            *([page] * pages),
        ]
    )


def deep_page_tree_pdf(depth: int) -> bytes:
    """Pages nodes nested ``depth`` deep, one page at the bottom."""
    nodes = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    for level in range(depth):
        nodes.append(b"<< /Type /Pages /Kids [%d 0 R] /Count 1 >>" % (3 + level))
    nodes.append(b"<< /Type /Page /MediaBox [0 0 10 10] >>")
    return raw_pdf(nodes)


def slow_pdf(ops: int = 1_000_000) -> bytes:
    """One page of ``ops`` separately placed glyphs: a small file that pdfminer's layout
    analysis chews on for minutes (it is not a loop, only far too much work)."""
    body = b"".join(
        b"BT /F1 4 Tf %d %d Td (x) Tj ET\n" % (i % 600, (i // 600) % 780) for i in range(ops)
    )
    packed = zlib.compress(body, 1)
    return one_page_pdf(stream(packed, b"/Filter /FlateDecode"))


def _zeros_deflate(total_mb: int) -> bytes:
    """zlib data for ``total_mb`` MB of zeros, built from one flushed 16 MB block repeated."""
    block = bytes(ZEROS_MB << 20)
    comp = zlib.compressobj(9)
    segment = comp.compress(block) + comp.flush(zlib.Z_FULL_FLUSH)
    header, segment = segment[:2], segment[2:]
    # Adler-32 of n zero bytes: A stays 1, B adds A once per byte.
    adler = ((total_mb << 20) % 65521) << 16 | 1
    tail = zlib.compressobj(9, wbits=-15).flush()  # an empty final block
    return header + segment * (total_mb // ZEROS_MB) + tail + adler.to_bytes(4, "big")


def stream_bomb_pdf(total_mb: int = 2048) -> bytes:
    """A content stream that inflates to ``total_mb`` MB of zeros (Flate over Flate: ~10 KB)."""
    inner = _zeros_deflate(total_mb)
    outer = zlib.compress(inner, 9)
    return one_page_pdf(stream(outer, b"/Filter [/FlateDecode /FlateDecode]"))


def nested_forms_pdf(depth: int = 2_000) -> bytes:
    """A page that draws form XObject 1, which draws form 2, ... ``depth`` forms deep (a form
    drawing itself is caught by pdfminer; a chain of distinct forms is not)."""
    forms = []
    for level in range(depth):
        child = 5 + level + 1
        resources = b"<< /XObject << /X %d 0 R >> >>" % child if level + 1 < depth else b"<< >>"
        forms.append(
            stream(
                b"q /X Do Q",
                b"/Type /XObject /Subtype /Form /BBox [0 0 10 10] /Resources " + resources,
            )
        )
    return one_page_pdf(stream(b"q /X Do Q"), *forms, resources=b"<< /XObject << /X 5 0 R >> >>")


def make_epub_bytes(chapters: dict[str, str], extra: dict[str, bytes] | None = None) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        return make_epub(Path(tmp) / "book.epub", chapters, extra).read_bytes()


def zip_bomb_epub() -> bytes:
    """A valid EPUB whose stylesheet inflates 1000-fold (32 MB from 32 KB)."""
    return make_epub_bytes(
        {"c.xhtml": chapter("<h1>Hi</h1><p>text</p>")}, {"OEBPS/style.css": bytes(32 << 20)}
    )


def traversal_epub(name: str) -> bytes:
    return make_epub_bytes({"c.xhtml": chapter("<p>x</p>")}, {name: b"owned"})


def entity_epub(doctype: str) -> bytes:
    return make_epub_bytes({"c.xhtml": chapter("<h1>Hi</h1><p>&e;</p>", doctype=doctype)})


def lying_zip() -> bytes:
    """A plain zip named .epub (no EPUB mimetype or container)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("readme.txt", "not a book")
    return buf.getvalue()


@dataclass(frozen=True)
class Hostile:
    name: str
    data: bytes
    # Where it must end: "rejected" at upload (4xx) or "failed" by the worker, and a phrase of
    # the reason (case-insensitive).
    outcome: str
    reason: str


def xhtml(doctype: str, body: str) -> bytes:
    """An XHTML page with ``doctype`` (an entity declaration) before its root."""
    return (
        f'<?xml version="1.0" encoding="utf-8"?>\n{doctype}'
        f'<html xmlns="http://www.w3.org/1999/xhtml"><head><title>t</title></head>'
        f"<body>{body}</body></html>"
    ).encode()


def deep_page(depth: int) -> bytes:
    """A page whose only paragraph sits ``depth`` elements deep."""
    return (
        b"<!DOCTYPE html><html><body>"
        + b"<div>" * depth
        + b"<p>The heron waits below ten thousand boxes.</p>"
        + b"</div>" * depth
        + b"</body></html>"
    )


def hostile_pages() -> list[Hostile]:
    """Saved web pages (formats/web.py) that must end in their own clear error."""
    paragraph = "<p>" + "The heron stood in the shallow water of the weir. " * 20 + "</p>"
    return [
        # Over the reader's 16 MB and under the test stack's 20 MB upload limit: the reader's
        # own limit is what refuses it (a 50 MB page: tests/ingest/test_web.py).
        Hostile("huge.html", b"<!DOCTYPE html><html><body>" + b"<p>heron</p>" * (18 * 2**20 // 12),
                "failed", "MB a page may have"),
        Hostile("laughs.xhtml", xhtml(LAUGHS, "<p>&b;</p>" + paragraph), "failed", "unsafe XML"),
        Hostile("xxe.xhtml", xhtml(XXE, "<p>&e;</p>" + paragraph), "failed", "unsafe XML"),
        Hostile("deep.html", deep_page(10_000), "failed", "more than 255 deep"),
        Hostile("empty.html", b"<!DOCTYPE html><html><body></body></html>", "failed",
                "no readable text"),
        Hostile("menu.html", b"<!DOCTYPE html><html><body><nav><a href='/'>Home</a> <a>About</a>"
                b"</nav><footer>(c) 2026</footer></body></html>", "failed", "no readable text"),
        Hostile("app.html", b'<!DOCTYPE html><html><head><script src="/app.js"></script></head>'
                b'<body><div id="root"></div></body></html>', "failed", "JavaScript"),
    ]  # fmt: skip


def hostile_corpus(real_pdf: bytes) -> list[Hostile]:
    """Every hostile or broken file of the hardening tests, with its expected end."""
    return [
        Hostile("empty.pdf", b"", "rejected", "empty"),
        Hostile("blank.txt", b" \n\t\n", "rejected", "whitespace"),
        Hostile("photo.pdf", b"GIF89a" + bytes(256), "rejected", "GIF image"),
        Hostile("photo.png", b"\x89PNG\r\n\x1a\n" + bytes(256), "failed", "damaged"),
        Hostile("program.epub", b"\x7fELF\x02\x01\x01" + bytes(256), "rejected", "ELF"),
        Hostile("archive.epub", lying_zip(), "rejected", "not an EPUB"),
        Hostile("page.md", b"<!DOCTYPE html><html><script>x()</script>", "failed", "JavaScript"),
        Hostile("feed.html", b'<?xml version="1.0"?><rss><channel/></rss>', "rejected", "XHTML"),
        *hostile_pages(),
        Hostile("truncated.pdf", real_pdf[: len(real_pdf) // 3], "failed", "truncated"),
        Hostile("garbage.pdf", b"%PDF-1.4\n" + bytes(range(256)) * 64, "failed", "damaged"),
        Hostile("zipbomb.epub", zip_bomb_epub(), "failed", "zip bomb"),
        Hostile("slip.epub", traversal_epub("../../evil.sh"), "failed", "unsafe path"),
        Hostile("abs.epub", traversal_epub("/etc/cron.d/evil"), "failed", "unsafe path"),
        Hostile("xxe.epub", entity_epub(XXE), "failed", "unsafe XML"),
        Hostile("laughs.epub", entity_epub(LAUGHS), "failed", "unsafe XML"),
        Hostile("pages.pdf", many_pages_pdf(30_000), "failed", "the limit is 20000"),
        Hostile("deeptree.pdf", deep_page_tree_pdf(5_000), "failed", "nested too deeply"),
        Hostile("nested-forms.pdf", nested_forms_pdf(), "failed", "nested too deeply"),
        Hostile("bomb.pdf", stream_bomb_pdf(), "failed", "more memory than allowed"),
        Hostile("slow.pdf", slow_pdf(), "failed", "s limit"),
    ]
