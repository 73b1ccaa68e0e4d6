"""Small Office packages built in the tests: a Word document from its body XML, and the
hostile ones (a zip bomb, entity declarations, macros, a password)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

W_NS = (
    'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
    'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
    'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
)
DOCX_MAIN = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
DOCM_MAIN = "application/vnd.ms-word.document.macroEnabled.main+xml"
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PARTS = {  # relationship type -> part name
    "footnotes": "word/footnotes.xml",
    "comments": "word/comments.xml",
    "header": "word/header1.xml",
    "numbering": "word/numbering.xml",
    "styles": "word/styles.xml",
}


def docx_bytes(
    body: str,
    *,
    parts: dict[str, str] | None = None,
    main_type: str = DOCX_MAIN,
    prolog: str = "",
    extra: dict[str, bytes] | None = None,
) -> bytes:
    """A Word package: ``body`` inside ``w:body``; ``parts`` (footnotes, comments, header,
    numbering, styles) as their XML; ``prolog`` before the document's root (a DTD);
    ``extra`` entries as they are."""
    parts = parts or {}
    rels = "".join(
        f'<Relationship Id="r{i}" Type="{REL}/{kind}" Target="{PARTS[kind][5:]}"/>'
        for i, kind in enumerate(parts)
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(
            "[Content_Types].xml",
            '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
            'content-types"><Default Extension="xml" ContentType="application/xml"/>'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
            f'relationships+xml"/><Override PartName="/word/document.xml" ContentType="{main_type}"'
            "/></Types>",
        )
        zf.writestr(
            "_rels/.rels",
            '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
            f'2006/relationships"><Relationship Id="rId1" Type="{REL}/officeDocument" '
            'Target="word/document.xml"/></Relationships>',
        )
        zf.writestr(
            "word/_rels/document.xml.rels",
            '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
            f'2006/relationships">{rels}</Relationships>',
        )
        zf.writestr(
            "word/document.xml",
            f'<?xml version="1.0"?>{prolog}<w:document {W_NS}><w:body>{body}</w:body></w:document>',
        )
        for kind, xml in parts.items():
            zf.writestr(PARTS[kind], f'<?xml version="1.0"?>{xml.replace("W_NS", W_NS)}')
        for name, data in (extra or {}).items():
            zf.writestr(name, data)
    return out.getvalue()


def p(text: str, *, style: str = "", bold: bool = False, extra: str = "") -> str:
    """A paragraph of one run."""
    ppr = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else ""
    rpr = "<w:rPr><w:b/></w:rPr>" if bold else ""
    return f'<w:p>{ppr}<w:r>{rpr}<w:t xml:space="preserve">{text}</w:t></w:r>{extra}</w:p>'


def write(tmp: Path, name: str, data: bytes) -> Path:
    path = tmp / name
    path.write_bytes(data)
    return path
