from __future__ import annotations

import random
import zipfile
from pathlib import Path

import pytest

from quire.config import Settings
from quire.errors import EmptyFile, UnsupportedFileType
from quire.formats.detect import detect_kind
from quire.formats.extract import extract_file

# CI clones the repo next to shared/: always resolve it as <repo>/../shared.
DOCS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "docs"

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00"

EXPORTER = """# Rust async runtimes

**Space:** Programming  
**ID:** rust-async-runtimes-AbC123  
**Date:** 2024-05-01T10:00:00  

## which async runtime should I use?

Tokio is the default choice.
"""  # noqa: W291 - the two trailing spaces are part of the layout


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("pdf/naacl06-shinyama.pdf", "pdf"),
        ("pdf/scan-grumman-175.pdf", "pdf"),
        ("pdf/dmca-summary.pdf", "pdf"),
        ("epub/alice-epub3.epub", "epub"),
        ("epub/readium-smoketest-epub2.epub", "epub"),
        ("epub/idpf-arabic-rtl.epub", "epub"),
        ("perplexity/pnw-states-multiturn.md", "perplexity"),
    ],
)
def test_real_files(name: str, kind: str) -> None:
    assert detect_kind(DOCS / name) == kind


def _write(tmp_path: Path, name: str, data: bytes | str) -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def test_zero_bytes_is_empty(tmp_path: Path) -> None:
    with pytest.raises(EmptyFile, match="empty"):
        detect_kind(_write(tmp_path, "empty.pdf", b""))


def test_whitespace_only_is_empty(tmp_path: Path) -> None:
    with pytest.raises(EmptyFile):
        detect_kind(_write(tmp_path, "blank.txt", "  \n\n\t\n"))


def test_gif_named_pdf_is_rejected_by_name_of_format(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedFileType, match="GIF image"):
        detect_kind(_write(tmp_path, "scan.pdf", b"GIF89a" + bytes(range(256))))


def test_page_images_are_images_whatever_their_name(tmp_path: Path) -> None:
    assert detect_kind(_write(tmp_path, "scan.pdf", PNG + bytes(range(256)))) == "image"
    webp = b"RIFF" + bytes(4) + b"WEBPVP8 " + bytes(64)
    assert detect_kind(_write(tmp_path, "photo.txt", webp)) == "image"
    bmp = b"BM" + bytes(8) + b"\x36\x00\x00\x00" + bytes(64)
    assert detect_kind(_write(tmp_path, "page.bmp", bmp)) == "image"
    assert detect_kind(_write(tmp_path, "notes.txt", "BM: a note on bowel movements.\n")) == "text"


def test_text_named_pdf_is_text(tmp_path: Path) -> None:
    path = _write(tmp_path, "notes.pdf", "Just some notes I took.\nNothing more to it.\n")
    assert detect_kind(path) == "text"


def test_pdf_named_txt_is_pdf_and_leading_junk_is_allowed(tmp_path: Path) -> None:
    real = (DOCS / "pdf" / "naacl06-shinyama.pdf").read_bytes()
    assert detect_kind(_write(tmp_path, "a.txt", real)) == "pdf"
    assert detect_kind(_write(tmp_path, "b.bin", b"\x00junk" * 100 + real)) == "pdf"


def test_pdf_magic_beyond_the_first_kilobyte_does_not_count(tmp_path: Path) -> None:
    path = _write(tmp_path, "c.pdf", b"\x00" * 2048 + b"%PDF-1.4\n")
    with pytest.raises(UnsupportedFileType, match="binary"):
        detect_kind(path)


def test_zip_that_is_not_an_epub(tmp_path: Path) -> None:
    path = tmp_path / "book.epub"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("readme.txt", "hello")
    with pytest.raises(UnsupportedFileType, match="zip archive that is not an EPUB"):
        detect_kind(path)


def test_an_office_package_of_another_kind_is_named(tmp_path: Path) -> None:
    path = tmp_path / "report.pdf"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("[Content_Types].xml", "<Types/>")  # no Word, PowerPoint or Excel part
        zf.writestr("visio/document.xml", "<document/>")
    with pytest.raises(UnsupportedFileType, match="Office Open XML package that is not"):
        detect_kind(path)


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("docx/hipaa-privacy-notice.docx", "docx"),
        ("pptx/algeria-guide-bachelier-2018-fr-ar.pptx", "pptx"),  # a slide show (.ppsx type)
        ("xlsx/chicago-gsb-employment-2006.xlsx", "xlsx"),
        ("odt/odfpy-api-manual.odt", "odt"),
        ("odt/uottawa-python-pandas-workshop.odp", "odp"),
    ],
)
def test_office_files_by_their_content_whatever_their_name(
    tmp_path: Path, name: str, kind: str
) -> None:
    path = tmp_path / "renamed.bin"
    path.write_bytes((DOCS / "office" / name).read_bytes())
    assert detect_kind(path) == kind


def test_epub_by_container_without_mimetype(tmp_path: Path) -> None:
    path = tmp_path / "book.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("META-INF/container.xml", "<container/>")
    assert detect_kind(path) == "epub"


def test_truncated_epub_is_still_recognised(tmp_path: Path) -> None:
    real = (DOCS / "epub" / "alice-epub3.epub").read_bytes()
    assert detect_kind(_write(tmp_path, "half.epub", real[: len(real) // 2])) == "epub"


def test_truncated_plain_zip_is_unsupported(tmp_path: Path) -> None:
    path = tmp_path / "x.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("data.bin", bytes(random.Random(1).randbytes(5000)))
    data = path.read_bytes()
    with pytest.raises(UnsupportedFileType, match="damaged zip"):
        detect_kind(_write(tmp_path, "y.zip", data[: len(data) // 2]))


def test_random_binary_is_unsupported(tmp_path: Path) -> None:
    data = random.Random(7).randbytes(4096)
    with pytest.raises(UnsupportedFileType, match="binary"):
        detect_kind(_write(tmp_path, "blob.txt", data))


def test_printable_signature_at_the_start_of_a_sentence_is_text(tmp_path: Path) -> None:
    assert (
        detect_kind(_write(tmp_path, "cars.txt", "BMW makes cars.\nMZ made motorcycles.\n"))
        == "text"
    )


@pytest.mark.parametrize(
    "head",
    [
        "<!DOCTYPE html><html><body>x</body></html>",
        "\ufeff<html lang='en'><body>x</body></html>",
        '<?xml version="1.0"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><body/></html>',
        "<!--\n Page saved with SingleFile \n url: https://example.org/ \n-->\n<html></html>",
        "<!-- saved from url=(0024)https://example.org/a/ -->\n<html><body>x</body></html>",
        "From: <Saved by Blink>\r\nSnapshot-Content-Location: https://example.org/\r\n"
        'MIME-Version: 1.0\r\nContent-Type: multipart/related;\r\n\ttype="text/html"\r\n',
    ],
)
def test_web_pages_are_web(tmp_path: Path, head: str) -> None:
    assert detect_kind(_write(tmp_path, "page.txt", head)) == "web"


def test_xml_that_is_not_a_page_is_unsupported(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedFileType, match="XML document that is not XHTML"):
        detect_kind(_write(tmp_path, "feed.md", '<?xml version="1.0"?>\n<rss><channel/></rss>'))


def test_utf16_with_bom_is_text(tmp_path: Path) -> None:
    path = _write(tmp_path, "u16.txt", "Zażółć gęślą jaźń.\nSecond line.\n".encode("utf-16"))
    assert detect_kind(path) == "text"


def test_cp1252_text_is_text(tmp_path: Path) -> None:
    path = _write(tmp_path, "legacy.txt", "Caf\xe9 cr\xe8me \x96 na\xefve.\n".encode("latin-1"))
    assert detect_kind(path) == "text"


def test_utf8_split_at_the_sample_boundary_is_still_utf8(tmp_path: Path) -> None:
    text = "ą" * 40000  # 80,000 bytes: the 64 KiB sample ends inside a character or not
    assert detect_kind(_write(tmp_path, "long.txt", text + "\n")) == "text"


def test_markdown_vs_text(tmp_path: Path) -> None:
    md = "# Setup\n\nInstall with `pip install x`.\n\n- one\n- two\n\nSee [docs](https://x.org).\n"
    prose = "Dear Ann,\n\nThe weather is fine. We went to the lake - it was cold.\n\nBest, Bo\n"
    assert detect_kind(_write(tmp_path, "a.txt", md)) == "markdown"
    assert detect_kind(_write(tmp_path, "b.md", prose)) == "text"


def test_perplexity_exporter_layout(tmp_path: Path) -> None:
    assert detect_kind(_write(tmp_path, "thread.md", EXPORTER)) == "perplexity"


def test_perplexity_builtin_without_logo_but_with_footnotes(tmp_path: Path) -> None:
    text = (
        "# why is the sky blue?\n\nRayleigh scattering.[^1_1]\n\n[^1_1]: https://example.org/sky\n"
    )
    assert detect_kind(_write(tmp_path, "sky.md", text)) == "perplexity"


def test_ordinary_markdown_with_h2_is_not_perplexity(tmp_path: Path) -> None:
    text = "# Project\n\nSome intro.\n\n## Usage\n\nRun it.\n"
    assert detect_kind(_write(tmp_path, "README.md", text)) == "markdown"


def test_extract_file_refuses_before_extracting(tmp_path: Path) -> None:
    # The worker's entry point applies the same content checks.
    settings = Settings()
    with pytest.raises(EmptyFile):
        extract_file(_write(tmp_path, "zero.epub", b""), settings)
    with pytest.raises(UnsupportedFileType, match="GIF image"):
        extract_file(_write(tmp_path, "image.pdf", b"GIF89a" + bytes(64)), settings)
    doc = extract_file(_write(tmp_path, "text.pdf", "Plain words, not a PDF at all.\n"), settings)
    assert doc.kind == "text" and doc.pages[0].text == "Plain words, not a PDF at all."
