"""Hostile and odd Office files, built here: each fails with a clear error of its own, before
anything is inflated or resolved, and the other documents of the library are read as usual.
A zip bomb named .docx, entity expansion and external entities, a password-protected file, a
macro-enabled document (read, its macros never run), a PDF named .docx."""

from __future__ import annotations

import io
import random
import zipfile
from pathlib import Path

import pytest
from fpdf import FPDF
from msoffcrypto.format.ooxml import OOXMLFile
from openpyxl import Workbook

from quire.config import Settings
from quire.errors import CorruptFile, EncryptedFile, ResourceLimit, UnsupportedFileType
from quire.formats.detect import detect_kind
from quire.formats.extract import extract_file
from quire.ingest.intake import add_file
from quire.storage.db import Database
from quire.storage.documents import list_documents
from tests.ingest.office_files import DOCM_MAIN, docx_bytes, p, write
from tests.runtime import drain


def bomb() -> bytes:
    """A Word package whose document part inflates 1000-fold to 64 MB."""
    good = zipfile.ZipFile(io.BytesIO(docx_bytes(p("decoy"))))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for info in good.infolist():
            if info.filename != "word/document.xml":
                zf.writestr(info, good.read(info))
        zf.writestr("word/document.xml", b"<w:document>" + b" " * (64 << 20))
    return out.getvalue()


def test_a_zip_bomb_named_docx_is_refused_before_it_is_inflated(tmp_path: Path) -> None:
    path = write(tmp_path, "report.docx", bomb())
    assert path.stat().st_size < 1 << 20
    assert detect_kind(path) == "docx"
    with pytest.raises(ResourceLimit, match="expands .*-fold.*zip bomb"):
        extract_file(path, Settings(data_dir=tmp_path / "data"))


def test_the_unpacked_size_limit_is_the_setting(tmp_path: Path) -> None:
    # Incompressible bytes: no ratio to catch, only the total unpacked size.
    noise = random.Random(34).randbytes(8 << 20)
    path = write(tmp_path, "deck.docx", docx_bytes(p("x"), extra={"word/media/n.bin": noise}))
    with pytest.raises(ResourceLimit, match="QUIRE_MAX_UNPACKED_MB"):
        extract_file(path, Settings(data_dir=tmp_path / "data", max_unpacked_mb=5))


LAUGHS = (
    '<!DOCTYPE w:document [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
    '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>'
)
EXTERNAL = '<!DOCTYPE w:document [<!ENTITY x SYSTEM "file:///etc/passwd">]>'


@pytest.mark.parametrize("prolog", [LAUGHS, EXTERNAL], ids=["expansion", "external"])
def test_entity_declarations_are_refused(tmp_path: Path, prolog: str) -> None:
    path = write(
        tmp_path, "x.docx", docx_bytes(p("&c;" if prolog == LAUGHS else "&x;"), prolog=prolog)
    )
    with pytest.raises(CorruptFile, match="declares a document type") as err:
        extract_file(path, Settings(data_dir=tmp_path / "data"))
    assert "root:" not in str(err.value)


def test_an_entity_in_a_spreadsheet_part_is_refused_too(tmp_path: Path) -> None:
    wb = Workbook()
    wb.active.append(["a", 1])
    plain = io.BytesIO()
    wb.save(plain)
    src = zipfile.ZipFile(io.BytesIO(plain.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "xl/sharedStrings.xml" or info.filename.endswith("sheet1.xml"):
                head = data.index(b"?>") + 2 if data.startswith(b"<?xml") else 0
                data = data[:head] + EXTERNAL.encode() + data[head:]
            zf.writestr(info, data)
    path = write(tmp_path, "book.xlsx", out.getvalue())
    with pytest.raises(CorruptFile, match="unsafe XML"):
        extract_file(path, Settings(data_dir=tmp_path / "data"))


def test_a_password_protected_document_says_so(tmp_path: Path) -> None:
    plain = write(tmp_path, "plain.docx", docx_bytes(p("Secret plans")))
    encrypted = tmp_path / "locked.docx"
    with plain.open("rb") as src, encrypted.open("wb") as out:
        OOXMLFile(src).encrypt("hunter2", out)
    assert encrypted.read_bytes().startswith(b"\xd0\xcf\x11\xe0")  # an OLE compound file
    with pytest.raises(EncryptedFile, match="password-protected"):
        detect_kind(encrypted)


def test_an_ole_file_of_no_office_kind_is_named_not_called_encrypted(tmp_path: Path) -> None:
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(4088)
    with pytest.raises(UnsupportedFileType, match="OLE2 compound file"):
        detect_kind(write(tmp_path, "old.doc", ole))


@pytest.mark.parametrize(
    ("stream", "kind"),
    [("WordDocument", "docx"), ("PowerPoint Document", "pptx"), ("Workbook", "xlsx")],
)
def test_a_legacy_office_file_is_known_by_its_main_stream(
    tmp_path: Path, stream: str, kind: str
) -> None:
    # A directory entry's name (UTF-16) at an entry boundary, as in a real compound file.
    ole = bytearray(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(4088))
    name = stream.encode("utf-16-le")
    ole[1024 : 1024 + len(name)] = name
    assert detect_kind(write(tmp_path, "old.bin", bytes(ole))) == kind
    assert detect_kind(write(tmp_path, "old.rtf", b"{\\rtf1\\ansi Hello}")) == "docx"


def test_without_libreoffice_a_legacy_file_names_the_package(tmp_path: Path) -> None:
    ole = bytearray(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(4088))
    name = "Workbook".encode("utf-16-le")
    ole[512 : 512 + len(name)] = name
    path = write(tmp_path, "old.xls", bytes(ole))
    with pytest.raises(UnsupportedFileType, match="apt install libreoffice-calc-nogui"):
        extract_file(path, Settings(data_dir=tmp_path / "data", soffice=""))


def test_a_macro_enabled_document_is_read_and_its_macros_left_alone(tmp_path: Path) -> None:
    macro = b'Attribute VB_Name = "AutoOpen"\nShell "rm -rf ~"'
    data = docx_bytes(
        p("Quarterly figures"), main_type=DOCM_MAIN, extra={"word/vbaProject.bin": macro}
    )
    path = write(tmp_path, "report.docm", data)
    ex = extract_file(path, Settings(data_dir=tmp_path / "data"))
    assert ex.kind == "docx" and ex.pages[0].text == "Quarterly figures"
    assert ex.metadata["macros"] == "present, never run"


def test_a_pdf_named_docx_is_read_as_the_pdf_it_is(tmp_path: Path) -> None:
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.cell(text="Really a PDF")
    path = write(tmp_path, "report.docx", bytes(pdf.output()))
    assert detect_kind(path) == "pdf"
    ex = extract_file(path, Settings(data_dir=tmp_path / "data"))
    assert ex.kind == "pdf" and "Really a PDF" in ex.pages[0].text


def test_a_bad_file_fails_alone(tmp_path: Path, settings: Settings, db: Database) -> None:
    files = {
        "bomb.docx": bomb(),
        "entities.docx": docx_bytes(p("&x;"), prolog=EXTERNAL),
        "good.docx": docx_bytes(p("The reservoir holds 4,000 cubic metres.")),
    }
    for name, data in files.items():
        src = write(tmp_path, name, data)
        add_file(db, settings.files_dir, src, name, max_bytes=settings.max_upload_bytes)
    drain(settings, db)
    with db.read() as conn:
        docs = {d["filename"]: d for d in list_documents(conn)}
    assert docs["good.docx"]["status"] == "ready"
    assert docs["bomb.docx"]["status"] == "failed" and "zip bomb" in docs["bomb.docx"]["error"]
    assert docs["entities.docx"]["status"] == "failed"
    assert "declares a document type" in docs["entities.docx"]["error"]
