"""Decide what a file is from its bytes; the file name is never consulted.

Order: PDF magic (anywhere in the first 1 KB, as readers allow leading junk), a
password-protected Office file (an OLE2 compound file holding an ``EncryptedPackage``
stream: refused as such), a legacy Word, PowerPoint or Excel file (an OLE2 file whose main
stream names it) or RTF, each the kind LibreOffice converts it to (docx, pptx, xlsx), a page
image (PNG, JPEG, TIFF, WebP, BMP: formats/image.py), other known binary signatures (rejected
by name), zip containers (EPUB if
it has the EPUB ``mimetype`` entry or ``META-INF/container.xml``; Word, PowerPoint or Excel
by the main part ``[Content_Types].xml`` declares, macro-enabled and templates included;
OpenDocument text, presentation or spreadsheet by its ``mimetype``; a ChatGPT or Claude data
export if it holds ``conversations.json``),
then text: a saved web page (HTML or XHTML, SingleFile's HTML, an MHTML archive:
formats/web.py), a ChatGPT or Claude export (JSON whose head has ``"mapping"`` or
``"chat_messages"``), Perplexity markdown (either layout of DESIGN §7), other
markdown, plain text. Text must be UTF-8 or UTF-16 with a BOM; a file that is neither but looks
like text (no NUL bytes, few control characters) is read in a legacy encoding: the Chinese,
Japanese or Korean one (Shift_JIS, EUC-JP, EUC-KR, GB18030, Big5) that decodes it and gives
mostly common characters, else cp1252. Any byte decodes in several of them (Shift_JIS read as
GB18030 or Korean is valid, but rare, characters), hence the count of common ones.
"""

from __future__ import annotations

import codecs
import logging
import re
import zipfile
import zlib
from pathlib import Path

from quire.errors import EmptyFile, EncryptedFile, UnsupportedFileType
from quire.formats.image import image_media_type
from quire.storage.records import Kind

log = logging.getLogger(__name__)

HEAD_BYTES = 1024
SAMPLE_BYTES = 64 * 1024
EPUB_MIMETYPE = b"application/epub+zip"
# Legacy encodings tried when text is not UTF-8, and the share of common characters required.
LEGACY_ENCODINGS = ("cp932", "euc_jp", "cp949", "gb18030", "big5")
MIN_COMMON_SHARE = 0.8
_JAPANESE = ("cp932", "euc_jp")

# Signatures of formats people are likely to upload by mistake, so the error can name them.
_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an OLE2 compound file that is not an Office document"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"Rar!\x1a\x07", "a RAR archive"),
    (b"BZh", "a bzip2 archive"),
    (b"\xfd7zXZ\x00", "an xz archive"),
    (b"\x7fELF", "an executable (ELF)"),
    (b"MZ", "a Windows executable"),
    (b"ID3", "an MP3 audio file"),
    (b"OggS", "an Ogg media file"),
    (b"fLaC", "a FLAC audio file"),
    (b"SQLite format 3\x00", "an SQLite database"),
    (b"AT&TFORM", "a DjVu document"),
    (b"%!PS", "a PostScript file"),
)
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
#: The stream an encrypted Office file keeps its package in, as an OLE directory entry names it.
_ENCRYPTED_PACKAGE = "EncryptedPackage".encode("utf-16-le")
#: The main stream of each legacy Office format, as its OLE directory entry names it.
_LEGACY_STREAMS = (
    ("WordDocument".encode("utf-16-le"), "doc"),
    ("PowerPoint Document".encode("utf-16-le"), "ppt"),
    ("Workbook".encode("utf-16-le"), "xls"),
    ("Book".encode("utf-16-le") + b"\x00\x00", "xls"),  # Excel 5/95
)
_RTF_MAGIC = b"{\\rtf"
#: The kind a legacy format is read as, once LibreOffice has converted it (office/convert.py).
LEGACY_KINDS: dict[str, Kind] = {"doc": "docx", "rtf": "docx", "ppt": "pptx", "xls": "xlsx"}
_OLE_ENTRY = 128  # directory entries are 128 bytes, aligned so in the file
MAX_CONTENT_TYPES = 1 << 20
#: The main part's content type, ``[Content_Types].xml``, -> kind (documents, macro-enabled
#: documents and templates of each).
_OOXML_MAIN: tuple[tuple[re.Pattern[bytes], Kind], ...] = (
    (
        re.compile(rb"wordprocessingml\.(?:document|template)\.main|ms-word\.\w+\.macroEnabled"),
        "docx",
    ),
    (
        re.compile(
            rb"presentationml\.(?:presentation|slideshow|template)\.main"
            rb"|ms-powerpoint\.\w+\.macroEnabled"
        ),
        "pptx",
    ),
    (re.compile(rb"spreadsheetml\.(?:sheet|template)\.main|ms-excel\.\w+\.macroEnabled"), "xlsx"),
)
_ODF_KINDS: dict[bytes, Kind] = {
    b"application/vnd.oasis.opendocument.text": "odt",
    b"application/vnd.oasis.opendocument.text-template": "odt",
    b"application/vnd.oasis.opendocument.presentation": "odp",
    b"application/vnd.oasis.opendocument.presentation-template": "odp",
    b"application/vnd.oasis.opendocument.spreadsheet": "ods",
    b"application/vnd.oasis.opendocument.spreadsheet-template": "ods",
}
#: The conversations of a ChatGPT or Claude export zip (sharded since 2026: ``-000``, ``-001``).
EXPORT_ENTRY = re.compile(r"(?:^|/)conversations(?:-\d+)?\.json$")
_CHATGPT_KEYS = (re.compile(r'"mapping"\s*:'), re.compile(r'"(?:create_time|current_node)"\s*:'))
_CLAUDE_KEYS = (re.compile(r'"chat_messages"\s*:'), re.compile(r'"uuid"\s*:'))

_BUILTIN_LOGO = re.compile(r"<img\b[^>]*(?:pplx|perplexity|class=[\"']logo[\"'])", re.IGNORECASE)
_FOOTNOTE_DEF = re.compile(r"^\[\^\d+_\d+\]:", re.MULTILINE)
_H1 = re.compile(r"^# \S", re.MULTILINE)
_H2 = re.compile(r"^## \S", re.MULTILINE)
_EXPORTER_FIELD = re.compile(r"^\*\*(?:Space|ID):\*\*", re.MULTILINE)

_MD_HEADING = re.compile(r"^#{1,6} \S", re.MULTILINE)
_MD_SETEXT = re.compile(r"^\S[^\n]*\n(?:=+|-{3,})[ \t]*$", re.MULTILINE)
_MD_LIST = re.compile(r"^[ \t]*(?:[-*+]|\d{1,3}[.)]) \S", re.MULTILINE)
_MD_LINK = re.compile(r"!?\[[^\]\n]+\]\([^)\s]+\)")
_MD_FENCE = re.compile(r"^(?:```|~~~)", re.MULTILINE)
_MD_EMPHASIS = re.compile(r"(\*\*|__)\S[^\n]*?\S\1|`[^`\n]+`")
_MD_TABLE = re.compile(r"^\|?[ \t]*:?-{3,}:?[ \t]*\|", re.MULTILINE)
#: The head of a saved web page (formats/web.py): an XML declaration, MHTML's MIME headers.
XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>", re.IGNORECASE)
_HTML_ROOT = re.compile(r"<html[\s>]", re.IGNORECASE)
_MHTML_HEAD = re.compile(
    r"^(?:From|Snapshot-Content-Location|Subject|Date|MIME-Version|Content-Type)\s*:",
    re.IGNORECASE,
)


def _common(char: str, encoding: str) -> bool:
    """Kana, CJK punctuation, full-width ASCII, Hangul of KS X 1001, or Han of GB2312 or Big5
    (but not in Korean, which rarely writes Han: GB2312 text read as cp949 is half Han)."""
    if "\u3000" <= char <= "\u30ff" or "\uff01" <= char <= "\uff5e":
        return True
    if "\uac00" <= char <= "\ud7a3":
        sets: tuple[str, ...] = ("euc_kr",)
    else:
        sets = () if encoding == "cp949" else ("gb2312", "big5")
    for charset in sets:
        try:
            char.encode(charset)
            return True
        except UnicodeEncodeError:
            pass
    return False


def legacy_encoding(data: bytes) -> str:
    """The encoding of text that is not UTF-8 (see the module docstring), judged on a sample;
    of two equally plausible, the first in LEGACY_ENCODINGS."""
    sample = data[:SAMPLE_BYTES]
    best, best_share = "cp1252", MIN_COMMON_SHARE
    for encoding in LEGACY_ENCODINGS:
        try:
            # final=False: a character cut by the end of the sample is not an error.
            text = codecs.getincrementaldecoder(encoding)().decode(sample, final=False)
        except UnicodeDecodeError:
            continue
        wide = [c for c in text if ord(c) > 0x7F]
        if encoding in _JAPANESE and not any("\u3041" <= c <= "\u30fa" for c in wide):
            continue  # Japanese without kana: Korean or Chinese bytes that happen to decode
        share = sum(_common(c, encoding) for c in wide) / len(wide) if wide else 0.0
        if share > best_share:
            best, best_share = encoding, share
    return best


def decode_text(data: bytes) -> str:
    """Decode text bytes: UTF-16 with BOM, UTF-8 (BOM optional), else a legacy encoding."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        encoding = legacy_encoding(data)
        log.info("text is not UTF-8; decoding as %s", encoding)
        return data.decode(encoding, errors="replace")


def chat_export_kind(sample: str) -> Kind | None:
    """ "chatgpt" or "claude" when the head of a JSON text is one of their exports."""
    head = sample.lstrip("\ufeff \t\r\n")
    if not head.startswith(("[", "{")):
        return None
    if all(k.search(sample) for k in _CHATGPT_KEYS):
        return "chatgpt"
    if all(k.search(sample) for k in _CLAUDE_KEYS):
        return "claude"
    return None


def _ole_entry(path: Path, name: bytes) -> bool:
    """Whether an OLE2 compound file has a directory entry called ``name`` (UTF-16); the file is
    scanned in blocks for it, at an entry's start."""
    with path.open("rb") as fh:
        offset, tail = 0, b""
        while block := fh.read(1 << 20):
            data = tail + block
            start = offset - len(tail)
            at = data.find(name)
            while at != -1:
                if (start + at) % _OLE_ENTRY == 0:
                    return True
                at = data.find(name, at + 1)
            tail = data[-len(name) :]
            offset += len(block)
    return False


def _encrypted_office(path: Path) -> bool:
    """Whether an OLE2 compound file holds an ``EncryptedPackage`` stream (a password-protected
    docx/xlsx/pptx)."""
    return _ole_entry(path, _ENCRYPTED_PACKAGE)


def legacy_format(path: Path) -> str | None:
    """``doc``, ``ppt``, ``xls`` or ``rtf`` for a legacy Office file (by its bytes), else None."""
    with path.open("rb") as fh:
        head = fh.read(len(_OLE_MAGIC))
    if head.startswith(_RTF_MAGIC):
        return "rtf"
    if head != _OLE_MAGIC:
        return None
    for name, legacy in _LEGACY_STREAMS:
        if _ole_entry(path, name):
            return legacy
    return None


def _office_kind(zf: zipfile.ZipFile, names: set[str], mimetype: bytes) -> Kind | None:
    if mimetype in _ODF_KINDS:
        return _ODF_KINDS[mimetype]
    if "[Content_Types].xml" not in names:
        return None
    info = zf.getinfo("[Content_Types].xml")
    if info.file_size > MAX_CONTENT_TYPES:
        return None
    types = zf.read(info)
    for pattern, kind in _OOXML_MAIN:
        if pattern.search(types):
            return kind
    return None


def _zip_kind(path: Path) -> Kind:
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            mimetype = b""
            # Only a small entry can be a mimetype; a huge one is not read into memory here.
            if "mimetype" in names and zf.getinfo("mimetype").file_size <= 256:
                mimetype = zf.read("mimetype").strip()
            if office := _office_kind(zf, names, mimetype):
                return office
            export = sorted(n for n in names if EXPORT_ENTRY.search(n))
            if export and not mimetype:
                try:
                    with zf.open(export[0]) as fh:  # the head only: never the whole entry
                        first = fh.read(SAMPLE_BYTES).decode("utf-8", errors="replace")
                except RuntimeError:  # an encrypted entry
                    first = ""
                if kind := chat_export_kind(first):
                    return kind
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError) as exc:
        # A damaged EPUB still starts with its stored ``mimetype`` entry (the spec puts it
        # first, uncompressed); let the EPUB reader report it as corrupt.
        with path.open("rb") as fh:
            head = fh.read(HEAD_BYTES)
        if head[30:38] == b"mimetype" and EPUB_MIMETYPE in head[:HEAD_BYTES]:
            return "epub"
        raise UnsupportedFileType(
            f"Unsupported file type: a damaged zip archive, not recognisable as EPUB ({exc})"
        ) from exc
    if mimetype == EPUB_MIMETYPE or "META-INF/container.xml" in names:
        return "epub"
    if "[Content_Types].xml" in names:
        what = "an Office Open XML package that is not a Word, PowerPoint or Excel file"
    elif mimetype.startswith(b"application/vnd.oasis.opendocument"):
        what = "an OpenDocument file other than text, presentation or spreadsheet (odg, odf…)"
    else:
        what = "a zip archive that is not an EPUB (no EPUB mimetype or META-INF/container.xml)"
    raise UnsupportedFileType(f"Unsupported file type: {what}")


def _looks_binary(sample: bytes) -> bool:
    if b"\x00" in sample:
        return True
    controls = sum(1 for b in sample if b < 0x20 and b not in b"\t\n\r\f\x1b")
    return controls > max(8, len(sample) // 100)


def _sample_text(path: Path) -> str:
    with path.open("rb") as fh:
        sample = fh.read(SAMPLE_BYTES)
    if sample.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        # Cut to an even length so a sample boundary cannot split a code unit.
        return sample[: len(sample) // 2 * 2].decode("utf-16", errors="replace")
    if _looks_binary(sample):
        raise UnsupportedFileType("Unsupported file type: binary data (not PDF, EPUB or text)")
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    try:
        # final=False: a multi-byte character split by the sample boundary is not an error.
        return decoder.decode(sample, final=False)
    except UnicodeDecodeError:
        return sample.decode(legacy_encoding(sample), errors="replace")


def is_mhtml(head: str) -> bool:
    """Whether a text file's head is an MHTML archive (MIME headers, ``multipart/related``)."""
    return bool(_MHTML_HEAD.match(head)) and "multipart/related" in head[:4096].lower()


def is_html(head: str) -> bool:
    """Whether a text file's head is an HTML or XHTML page (a save's leading comments, such as
    SingleFile's or ``saved from url=``, and an XML declaration are allowed before it)."""
    text = XML_DECL.sub("", head.lstrip("\ufeff \t\r\n"), count=1).lstrip()
    while text.startswith("<!--"):
        end = text.find("-->")
        if end == -1:
            return False
        text = text[end + 3 :].lstrip()
    start = text[:15].lower()
    if start.startswith(("<!doctype html", "<html", "<head", "<meta charset")):
        return True
    # XHTML with a DOCTYPE of its own (an internal subset: formats/web.py refuses its entities).
    return start.startswith("<!doctype") and _HTML_ROOT.search(text[:SAMPLE_BYTES]) is not None


def is_perplexity_builtin(text: str) -> bool:
    """Perplexity's own "Export → Markdown": the logo image or footnotes, and `# question` turns."""
    head = text[:4096]
    has_turn = bool(_H1.search(text))
    return has_turn and (bool(_BUILTIN_LOGO.search(head)) or bool(_FOOTNOTE_DEF.search(text)))


def is_perplexity_exporter(text: str) -> bool:
    """The exporter layout: `# title`, `**Space:**`/`**ID:**` lines, then `## query` turns."""
    lines = [line for line in text[:4096].splitlines() if line.strip()]
    if not lines or not lines[0].startswith("# "):
        return False
    return bool(_EXPORTER_FIELD.search("\n".join(lines[1:8]))) and bool(_H2.search(text))


def looks_like_markdown(text: str) -> bool:
    """Heuristic: headings plus another markdown feature, or several features of any kind."""
    headings = len(_MD_HEADING.findall(text)) + len(_MD_SETEXT.findall(text))
    others = [
        len(_MD_LIST.findall(text)) >= 2,
        len(_MD_LINK.findall(text)) >= 1,
        len(_MD_FENCE.findall(text)) >= 2,
        len(_MD_EMPHASIS.findall(text)) >= 2,
        bool(_MD_TABLE.search(text)),
    ]
    return (headings >= 1 and (headings >= 2 or any(others))) or sum(others) >= 2


def detect_kind(path: Path) -> Kind:
    """The kind of document in ``path``, judged by content; raises EmptyFile/UnsupportedFileType."""
    with path.open("rb") as fh:
        head = fh.read(HEAD_BYTES)
    if not head:
        raise EmptyFile("The file is empty (0 bytes).")
    if b"%PDF-" in head:
        return "pdf"
    if head.startswith(_ZIP_MAGIC):
        return _zip_kind(path)
    if head.startswith(_OLE_MAGIC) and _encrypted_office(path):
        raise EncryptedFile(
            "This Office document is password-protected (encrypted); remove the password "
            "(File → Info → Protect Document) and add it again."
        )
    if legacy := legacy_format(path):
        return LEGACY_KINDS[legacy]  # converted by LibreOffice when read (formats/extract.py)
    if image_media_type(head):
        return "image"
    for magic, what in _SIGNATURES:
        # A printable signature ("BM", "MZ", "ID3") could start an ordinary sentence: it only
        # counts when the bytes after it are binary. PostScript is a text format.
        textual = magic.isascii() and all(0x20 <= b < 0x7F for b in magic)
        if head.startswith(magic) and (not textual or magic == b"%!PS" or _looks_binary(head)):
            raise UnsupportedFileType(f"Unsupported file type: {what}")
    text = _sample_text(path)
    if not text.strip():
        raise EmptyFile("The file contains only whitespace.")
    stripped = text.lstrip().lower()
    if is_html(text) or is_mhtml(text):
        return "web"
    if stripped.startswith("<?xml"):
        raise UnsupportedFileType("Unsupported file type: an XML document that is not XHTML")
    if kind := chat_export_kind(text):
        return kind
    if is_perplexity_builtin(text) or is_perplexity_exporter(text):
        return "perplexity"
    if looks_like_markdown(text):
        return "markdown"
    return "text"
