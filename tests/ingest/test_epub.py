from __future__ import annotations

import re
import unicodedata
import zipfile
from pathlib import Path

import pytest

from quire.config import Settings
from quire.errors import CorruptFile, ResourceLimit
from quire.formats.epub import extract_epub
from quire.formats.extract import extract_file
from quire.formats.types import Extracted

# CI clones the repo next to shared/: always resolve it as <repo>/../shared.
DOCS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "docs"
EPUBS = DOCS / "epub"
ARABIC_LETTER = re.compile("[\u0621-\u064a]")

CONTAINER = """<?xml version="1.0"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>
  </rootfiles>
</container>"""

OPF = """<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="id">urn:uuid:1234</dc:identifier>
    <dc:title>A Small Test Book</dc:title>
    <dc:creator>Ada Tester</dc:creator>
    <dc:language>zh</dc:language>
    <meta property="dcterms:modified">2024-01-01T00:00:00Z</meta>
  </metadata>
  <manifest>
    <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
    {items}
  </manifest>
  <spine>
    <itemref idref="nav"/>
    {itemrefs}
  </spine>
</package>"""

NAV = """<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops">
<head><title>Contents</title></head>
<body><nav epub:type="toc"><h1>Table of Contents</h1><ol>
{links}
</ol></nav></body></html>"""


def chapter(body: str, doctype: str = "") -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        + doctype
        + '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>t</title>'
        + "<style>p { color: red; }</style></head><body>"
        + body
        + "</body></html>"
    )


def make_epub(path: Path, chapters: dict[str, str], extra: dict[str, bytes] | None = None) -> Path:
    """A minimal valid EPUB 3 with the given chapter files (name -> XHTML)."""
    items = "\n".join(
        f'<item id="c{i}" href="{name}" media-type="application/xhtml+xml"/>'
        for i, name in enumerate(chapters)
    )
    itemrefs = "\n".join(f'<itemref idref="c{i}"/>' for i in range(len(chapters)))
    links = "\n".join(
        f'<li><a href="{name}">Part {i + 1}</a></li>' for i, name in enumerate(chapters)
    )
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")
        zf.writestr("META-INF/container.xml", CONTAINER)
        zf.writestr("OEBPS/content.opf", OPF.format(items=items, itemrefs=itemrefs))
        zf.writestr("OEBPS/nav.xhtml", NAV.format(links=links))
        for name, xhtml in chapters.items():
            zf.writestr(f"OEBPS/{name}", xhtml, compress_type=zipfile.ZIP_DEFLATED)
        for name, data in (extra or {}).items():
            zf.writestr(name, data, compress_type=zipfile.ZIP_DEFLATED)
    return path


@pytest.fixture(scope="module")
def alice() -> Extracted:
    return extract_file(EPUBS / "alice-epub3.epub", Settings())


def test_alice_epub3_sections_and_metadata(alice: Extracted) -> None:
    assert alice.kind == "epub"
    assert alice.title == "Alice's Adventures in Wonderland"
    assert alice.author == "Lewis Carroll"
    assert alice.metadata["language"] == "en-US"
    assert alice.metadata["identifier"] == "edu.nyu.itp.future-of-publishing.alice-in-wonderland"
    assert [p.number for p in alice.pages] == list(range(1, len(alice.pages) + 1))
    assert all(p.source == "epub" for p in alice.pages)
    paths = [p.heading_path for p in alice.pages]
    assert paths[:4] == [
        "Alice's Adventures In Wonderland",
        "Down The Rabbit-Hole",
        "The Pool Of Tears",
        "A Caucus-Race And A Long Tale",  # the heading spans three source lines
    ]
    assert paths[-1] == "Alice's Evidence"
    rabbit = alice.pages[1].text
    assert rabbit.startswith("Down The Rabbit-Hole\n\nAlice was beginning to get very tired")
    # Source line breaks inside a paragraph are spaces; paragraphs are separated by a blank line.
    assert "sitting by her sister on the bank" in rabbit and "\n\nSo she was considering" in rabbit


def test_navigation_document_is_skipped(alice: Extracted) -> None:
    assert all(p.heading_path != "Contents" for p in alice.pages)
    assert not any("Title Page" in p.text for p in alice.pages)


def test_readium_epub2_heading_paths() -> None:
    doc = extract_file(EPUBS / "readium-smoketest-epub2.epub", Settings())
    assert doc.title == "SmokeTest - EPUB 2" and doc.author == "Ric Wright"
    assert doc.metadata["epub_version"] == "2.0"
    paths = [p.heading_path for p in doc.pages]
    assert paths == [
        "1. King Solomon's Mines",  # text before the first heading: the NCX label
        "CHAPTER V > OUR MARCH INTO THE DESERT",  # two headings in a row nest
        "2. The Marvellous Land of Oz",
        "His Majesty the Scarecrow",
    ]
    assert "We had killed nine elephants" in doc.pages[1].text
    assert "Jack Pumpkinhead" in doc.pages[3].text
    # The NCX's own title never shows up as content.
    assert not any("Smoke Test - EPUB 2" in p.text for p in doc.pages)


def test_arabic_rtl_text_is_intact() -> None:
    doc = extract_file(EPUBS / "idpf-arabic-rtl.epub", Settings())
    assert doc.metadata["language"] == "ar" and doc.metadata["direction"] == "rtl"
    text = "\n".join(p.text for p in doc.pages)
    assert len(ARABIC_LETTER.findall(text)) > 10_000
    # Mojibake of UTF-8 Arabic read as Latin-1 looks like "Ø§Ù„"; none of that.
    assert not re.search("[ØÙ][\u0080-\u00ff]", text)
    assert "حسنًا! إن أردنا أن نفهم الآن كيف يمكن للأغذية" in text
    assert doc.pages[0].heading_path == "الفصل الثاني > ما هو السرطان؟ > من أين تأتي الحياة؟"
    assert "السرطان: مرض جينيّ > جينات متضرّرة" in [p.heading_path for p in doc.pages]
    # Cleaning changed nothing beyond NFC, which only puts stacked diacritics (shadda +
    # fathatan) in canonical order: no compatibility mapping touched the Arabic.
    raw = extract_epub(EPUBS / "idpf-arabic-rtl.epub")
    assert [unicodedata.normalize("NFC", p.text) for p in raw.pages] == [p.text for p in doc.pages]


def test_built_epub_headings_blocks_and_cjk(tmp_path: Path) -> None:
    one = chapter(
        "<p>Preface text.</p>"
        "<h1>Part One</h1><h2>Chapter 1</h2><p>First <b>bold</b> words.<br/>New line.</p>"
        "<script>var hidden = 1;</script>"
        "<h3>Scene A</h3><ul><li>item one</li><li>item two</li></ul>"
        "<h2>Chapter 2</h2><p>中文测试，保持原样。</p><table><tr><td>a</td><td>b</td></tr></table>"
    )
    two = chapter("<div><h1>Part Two</h1><p>Closing words.</p><h4>Small heading</h4><p>x</p></div>")
    path = make_epub(tmp_path / "built.epub", {"one.xhtml": one, "two.xhtml": two})
    doc = extract_file(path, Settings())
    assert doc.title == "A Small Test Book" and doc.author == "Ada Tester"
    assert [(p.number, p.heading_path) for p in doc.pages] == [
        (1, "Part 1"),
        (2, "Part One > Chapter 1"),
        (3, "Part One > Chapter 1 > Scene A"),
        (4, "Part One > Chapter 2"),
        (5, "Part Two"),
    ]
    texts = [p.text for p in doc.pages]
    assert texts[0] == "Preface text."
    assert texts[1] == "Part One\n\nChapter 1\n\nFirst bold words.\nNew line."
    assert texts[2] == "Scene A\n\nitem one\n\nitem two"
    assert texts[3] == "Chapter 2\n\n中文测试，保持原样。\n\na b"
    assert texts[4] == "Part Two\n\nClosing words.\n\nSmall heading\n\nx"
    assert not any("hidden" in t or "color" in t or "Table of Contents" in t for t in texts)


def test_a_heading_reads_as_set_inline_markup_adding_no_space() -> None:
    # <h2>CHAPTER XII.<br/>GEOGRAPHICAL DISTRIBUTION—<i>continued</i>.</h2>: the line break is
    # a space, the italic word joins its dash and full stop as it does on the page.
    doc = extract_epub(EPUBS / "pg1228-origin-of-species-epub3.epub")
    paths = [p.heading_path for p in doc.pages]
    assert "CHAPTER XII. GEOGRAPHICAL DISTRIBUTION—continued." in paths
    assert not any(" ." in path or "— " in path for path in paths)


def test_a_headings_note_marker_is_left_out_and_its_own_superscript_kept(tmp_path: Path) -> None:
    # Read with its marker, "Chapter 1" + "2" was cited as "Chapter 12".
    body = "<p>The heron waited by the weir until dusk, then flew over the river.</p>"
    path = make_epub(
        tmp_path / "notes.epub",
        {
            "c1.xhtml": chapter(f'<h1>Chapter 1<sup><a href="#fn2">2</a></sup></h1>{body}'),
            "c2.xhtml": chapter(
                '<h1>Introduction<a epub:type="noteref" href="n.xhtml#n1">*</a></h1>' + body
            ),
            "c3.xhtml": chapter(f'<h1>Notes<a href="#fn3"><sup>[3]</sup></a></h1>{body}'),
            "c4.xhtml": chapter(f"<h1>E = mc<sup>2</sup></h1>{body}"),
        },
    )
    paths = [p.heading_path for p in extract_epub(path).pages]
    assert paths == ["Chapter 1", "Introduction", "Notes", "E = mc2"]


def test_truncated_epub_is_corrupt(tmp_path: Path) -> None:
    data = (EPUBS / "alice-epub3.epub").read_bytes()
    path = tmp_path / "half.epub"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptFile, match="Damaged EPUB: not a readable zip"):
        extract_file(path, Settings())


XXE = '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>\n'
LAUGHS = '<!DOCTYPE html [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>\n'


@pytest.mark.parametrize("doctype", [XXE, LAUGHS])
def test_entity_declarations_are_refused(tmp_path: Path, doctype: str) -> None:
    body = chapter("<h1>Hi</h1><p>&e;</p>", doctype=doctype)
    path = make_epub(tmp_path / "xxe.epub", {"c.xhtml": body})
    with pytest.raises(CorruptFile, match="unsafe XML: OEBPS/c.xhtml"):
        extract_file(path, Settings())


def test_entity_in_malformed_xml_is_still_refused(tmp_path: Path) -> None:
    # Broken before the DOCTYPE, so a parser stops early; the raw bytes are checked too.
    body = '<?xml version="1.0" encoding="UTF-8"?><<\n' + XXE + "<html><body>&e;</body></html>"
    path = make_epub(tmp_path / "xxe2.epub", {"c.xhtml": body})
    with pytest.raises(CorruptFile, match="unsafe XML"):
        extract_file(path, Settings())


def test_external_dtd_reference_is_fine(tmp_path: Path) -> None:
    doctype = (
        '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" '
        '"http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">\n'
    )
    body = chapter("<h1>Chapter</h1><p>Plain&#160;text&nbsp;here.</p>", doctype=doctype)
    doc = extract_file(make_epub(tmp_path / "dtd.epub", {"c.xhtml": body}), Settings())
    assert doc.pages[0].text == "Chapter\n\nPlain text here."


@pytest.mark.parametrize("name", ["../evil.xhtml", "/etc/evil.xhtml", "OEBPS/../../x.css"])
def test_unsafe_entry_names(tmp_path: Path, name: str) -> None:
    path = make_epub(tmp_path / "slip.epub", {"c.xhtml": chapter("<p>x</p>")}, {name: b"x"})
    with pytest.raises(CorruptFile, match="unsafe path"):
        extract_file(path, Settings())


def test_zip_bomb_ratio(tmp_path: Path) -> None:
    path = make_epub(
        tmp_path / "bomb.epub",
        {"c.xhtml": chapter("<p>x</p>")},
        {"OEBPS/zeros.css": bytes(4 << 20)},
    )
    with pytest.raises(ResourceLimit, match="zip bomb"):
        extract_file(path, Settings())


def test_unpacked_size_limit(tmp_path: Path) -> None:
    # Varied words (about 3:1 compressed, far from a bomb's ratio) over the 1 MB limit.
    words = [f"w{i * 7919 % 10007}" for i in range(200_000)]
    body = chapter("<p>" + " ".join(words) + "</p>")
    path = make_epub(tmp_path / "big.epub", {"c.xhtml": body})
    with pytest.raises(ResourceLimit, match="unpacks to 1 MB; the limit is 1 MB"):
        extract_file(path, Settings(max_unpacked_mb=1))
    assert extract_file(path, Settings(max_unpacked_mb=2)).pages
