"""Citation metadata at ingest: what the real PDFs and EPUBs in shared/data/docs declare, a DOI
in XMP or printed on the first page, and declarations that are broken or absent."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from fpdf import FPDF

from quire.config import Settings
from quire.formats.bibliographic import (
    normalise_doi,
    normalise_isbn,
    parse_year,
    read_bibliographic,
    split_authors,
)
from quire.formats.extract import extract_file
from quire.storage.records import Page
from tests.conftest import DOCS

# What each real file declares (the PDFs: Info dictionary and XMP; the EPUBs: their OPF).
DECLARED = {
    "pdf/thinkcomplexity2.pdf": {"authors": ["Allen B. Downey"], "year": 2017},
    "pdf/ethereum-yellowpaper-shanghai.pdf": {"authors": ["Gavin Wood"], "year": 2025},  # "Dr."
    "pdf/dmca-summary.pdf": {"authors": ["United States Copyright Office - jmf"]},  # D:0000
    "pdf/naacl06-shinyama.pdf": {"year": 2006},
    "pdf/riscv-abi-spec-v1.0.pdf": {},  # a Title only
    "pdf/scan-grumman-175.pdf": {},
    "pdf/vicksburg-scan-ocr.pdf": {"authors": ["DSI"], "year": 2010},
    "epub/pg1228-origin-of-species-epub3.epub": {
        "authors": ["Charles Darwin"],
        "year": 1998,
        "identifier_url": "http://www.gutenberg.org/1228",
    },
    # Three dc:creator: two authors ("Pr David Khayat") and a translator (role trl).
    "epub/idpf-arabic-rtl.epub": {
        "authors": ["David Khayat", "Nathalie Hutter-Lardeau"],
        "year": 2012,
        "publisher": "Hachette Antoine",
    },
    "epub/readium-smoketest-epub2.epub": {"authors": ["Ric Wright"], "year": 2014},
    "epub/alice-epub3.epub": {"authors": ["Lewis Carroll"]},
}


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_real_files_declare(name: str) -> None:
    path = DOCS / name
    kind = "pdf" if name.endswith(".pdf") else "epub"
    assert read_bibliographic(path, kind, []) == DECLARED[name]


def test_extraction_keeps_it_in_the_metadata(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    extracted = extract_file(DOCS / "epub" / "readium-smoketest-epub2.epub", settings)
    assert extracted.metadata["authors"] == ["Ric Wright"]
    assert extracted.metadata["year"] == 2014
    assert extracted.metadata["epub_version"]  # what the extractor found is kept beside it


def _pdf(path: Path, text: str, *, xmp: str | None = None, author: str | None = None) -> Path:
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=11)
    pdf.multi_cell(0, 6, text)
    if author:
        pdf.set_author(author)
    pdf.set_creation_date(dt.datetime(2019, 5, 4, tzinfo=dt.UTC))
    if xmp:
        pdf.set_xmp_metadata(xmp)
    pdf.output(str(path))
    return path


XMP = """<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
 <rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/"
   xmlns:prism="http://prismstandard.org/namespaces/basic/2.0/">
  <dc:creator><rdf:Seq><rdf:li>Ada Lovelace</rdf:li><rdf:li>Charles Babbage</rdf:li></rdf:Seq>
  </dc:creator>
  <dc:publisher><rdf:Bag><rdf:li>Example Press</rdf:li></rdf:Bag></dc:publisher>
  <prism:doi>10.1000/xyz-123</prism:doi>
  <prism:publicationDate>1843-09-01</prism:publicationDate>
 </rdf:Description>
</rdf:RDF>"""


def test_xmp_metadata(tmp_path: Path) -> None:
    path = _pdf(tmp_path / "x.pdf", "Notes on the analytical engine.", xmp=XMP)
    assert read_bibliographic(path, "pdf", []) == {
        "authors": ["Ada Lovelace", "Charles Babbage"],
        "year": 1843,  # the publication date, before the file's CreationDate (2019)
        "doi": "10.1000/xyz-123",
        "publisher": "Example Press",
    }


def test_info_author_before_xmp_and_a_doi_printed_on_the_first_page(tmp_path: Path) -> None:
    first = "A paper.\nDOI: 10.1145/3292500.3330701.\nISBN 978-3-16-148410-0"
    path = _pdf(tmp_path / "p.pdf", first, author="Smith, J.; Jones, K.", xmp=XMP)
    pages = [Page(1, first), Page(2, "cites 10.1000/other and 10.1000/another")]
    found = read_bibliographic(path, "pdf", pages)
    assert found["authors"] == ["Smith, J.", "Jones, K."]  # the Info dictionary comes first
    assert found["doi"] == "10.1000/xyz-123"  # declared beats printed
    plain = _pdf(tmp_path / "q.pdf", first)
    found = read_bibliographic(plain, "pdf", pages)
    assert found == {"year": 2019, "doi": "10.1145/3292500.3330701", "isbn": "9783161484100"}


def test_a_first_page_citing_several_dois_declares_none(tmp_path: Path) -> None:
    text = "References: 10.1000/a1 and 10.1000/b2"
    path = _pdf(tmp_path / "r.pdf", text)
    assert "doi" not in read_bibliographic(path, "pdf", [Page(1, text)])


@pytest.mark.parametrize(
    "raw", [b"", b"%PDF-1.4\nnot really", b"PK\x03\x04broken zip", b"\x00" * 64]
)
def test_broken_files_declare_nothing(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "broken"
    path.write_bytes(raw)
    assert read_bibliographic(path, "pdf", []) == {}
    assert read_bibliographic(path, "epub", []) == {}
    assert read_bibliographic(path, "markdown", []) == {}


SICI = "10.1002/(SICI)1097-4571(199806)49:8"


@pytest.mark.parametrize(
    ("value", "doi"),
    [
        ("doi:10.1000/182", "10.1000/182"),
        ("https://doi.org/10.1038/nphys1170.", "10.1038/nphys1170"),
        # Angle brackets are outside the pattern: the DOI is cut there, its parentheses kept.
        ("(see 10.1002/(SICI)1097-4571(199806)49:8<693::AID>3.0.CO;2-0)", SICI),
        ("(doi 10.1007/978-3-540-27810-8_23)", "10.1007/978-3-540-27810-8_23"),
        (f"({SICI})", SICI),
        ("no doi here 10.12/short", None),
        ("", None),
    ],
)
def test_normalise_doi(value: str, doi: str | None) -> None:
    assert normalise_doi(value) == doi


def test_isbn_checksum_and_years_and_names() -> None:
    assert normalise_isbn("urn:isbn:978-0-306-40615-7") == "9780306406157"
    assert normalise_isbn("978-0-306-40615-8") is None  # wrong check digit
    assert normalise_isbn("0-8044-2957-X") == "080442957X"
    assert parse_year("D:20171129155014-05'00'") == 2017
    assert parse_year("D:00000101000000Z") is None
    assert parse_year("1998-03-01") == 1998 and parse_year("Spring 1859") == 1859
    assert split_authors("Allen B. Downey") == ["Allen B. Downey"]
    assert split_authors("Downey, Allen B.") == ["Downey, Allen B."]
    assert split_authors("Ada Lovelace, Charles Babbage") == ["Ada Lovelace", "Charles Babbage"]
    assert split_authors("A. One and B. Two & C. Three") == ["A. One", "B. Two", "C. Three"]
    assert split_authors("Dr. Gavin Wood") == ["Gavin Wood"]
