"""The programs outside Python that some formats use, all optional, and how to install each
with the package manager of the machine: apt (Debian, Ubuntu), Homebrew (macOS), winget
(Windows). ``quire doctor`` names them when one is missing (docs/getting-started/install.md).

Without them Quire still reads PDFs with a text layer, EPUB, Markdown, text, chat exports and
Office Open XML; scanned pages wait for OCR, legacy Office files and renditions for LibreOffice.
"""

from __future__ import annotations

from dataclasses import dataclass

from quire.formats.office.convert import PACKAGES


@dataclass(frozen=True)
class Tool:
    """An optional program: what it is for and its package in each package manager."""

    name: str
    purpose: str
    apt: str
    brew: str
    winget: str
    #: What winget leaves to do: its installers do not put these programs on PATH.
    windows: str

    def install(self) -> str:
        """The three install commands, one line."""
        return (
            f"apt: `sudo apt-get install {self.apt}` · Homebrew: `brew install {self.brew}` · "
            f"winget: `winget install --id {self.winget} -e` ({self.windows})"
        )


TESSERACT = Tool(
    "tesseract",
    "OCR of scanned pages",
    apt="tesseract-ocr tesseract-ocr-eng",
    brew="tesseract",
    winget="UB-Mannheim.TesseractOCR",
    windows="then add C:\\Program Files\\Tesseract-OCR to PATH",
)
POPPLER = Tool(
    "poppler",
    "page images for OCR (pdftoppm)",
    apt="poppler-utils",
    brew="poppler",
    winget="oschwartz10612.Poppler",
    windows="then add its Library\\bin folder to PATH",
)
LIBREOFFICE = Tool(
    "LibreOffice",
    "legacy .doc/.ppt/.xls/.rtf and the rendered view of Office files",
    apt=" ".join(sorted(set(PACKAGES.values()))),
    brew="--cask libreoffice",
    winget="TheDocumentFoundation.LibreOffice",
    windows="then set QUIRE_SOFFICE to its program\\soffice.exe",
)
