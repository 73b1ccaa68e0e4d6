"""Normalise extracted text so that search, chunking and citations see clean words.

Rules (each one tested in tests/ingest/test_text_clean.py):

* Hyphenated line breaks: ``exam-\\nple`` becomes ``example``. The hyphen is kept, and only the
  line break dropped, when the second part starts with a capital or a digit (``Anglo-\\nSaxon``,
  ``COVID-\\n19``), when the first part is itself the tail of a compound
  (``state-of-the-\\nart``), or when the page spells the same compound with a hyphen elsewhere
  and never without (``self-\\nevident`` next to ``self-evident``). No dictionary is needed and
  the common case, a syllable break, is joined; the price is that a compound broken exactly at
  its hyphen and written nowhere else on the page loses the hyphen (``wellknown``). A break
  across one blank line (a word split between two columns or text boxes, ``arti-\\n\\ncles``)
  is joined too when the second part starts in lower case.
* Ligatures (ﬁ ﬂ ﬀ ﬃ ﬄ ﬅ ﬆ) are spelled out.
* Unicode: NFC everywhere; compatibility (NFKC) mappings only for presentation forms that exist
  for layout (Latin/Armenian/Hebrew/Arabic presentation forms, full-width Latin letters and
  digits, half-width kana, odd spaces and hyphens). A blanket NFKC would turn ``x²`` into
  ``x2``, ``，`` into ``,`` in Chinese text and ``㍿`` into four characters.
* Control characters are removed (``\\n`` and ``\\t`` kept); soft hyphens, zero-width spaces and
  BOMs too. ZWJ/ZWNJ and bidi marks are kept: Persian, Indic scripts and emoji need them.
* Whitespace: runs inside a line collapse to one space, trailing spaces go, a paragraph break
  is exactly one blank line.
* Bare page-number lines (``12``, ``- 12 -``, ``Page 12``, ``12 of 18``) are dropped.
* Running headers/footers (:func:`strip_running_headers`): with at least 4 pages, a line that
  sits among the first or last 3 lines with letters of at least half of the pages is removed
  from those positions. Lines are compared by their letters only, so page numbers and
  spacing do not matter ("THE SIEGE OF VICKSBURG. 53" and "54 THE SIEGE OF VICKSBURG.").
  Once a header is known, a zone line whose letters (8 or more) are 85% similar to it also goes:
  OCR'd running heads differ by a letter ("THE SIEGE OF VICKSBUEG."). Case is kept, so a
  title page in capitals survives its mixed-case running header.
"""

from __future__ import annotations

import difflib
import math
import re
import unicodedata
from collections import Counter

_LIGATURES = {
    "\ufb00": "ff",
    "\ufb01": "fi",
    "\ufb02": "fl",
    "\ufb03": "ffi",
    "\ufb04": "ffl",
    "\ufb05": "st",  # long s + t
    "\ufb06": "st",
}

# Ranges whose NFKC mapping only undoes a presentation choice and never loses meaning.
_NFKC_SAFE_RANGES = (
    (0xFB00, 0xFB4F),  # alphabetic presentation forms (Latin, Armenian, Hebrew)
    (0xFB50, 0xFDFF),  # Arabic presentation forms A
    (0xFE30, 0xFE4F),  # CJK compatibility forms (vertical punctuation)
    (0xFE70, 0xFEFE),  # Arabic presentation forms B
    # Full-width Latin letters and digits; full-width punctuation is native to CJK text and stays.
    (0xFF10, 0xFF19),
    (0xFF21, 0xFF3A),
    (0xFF41, 0xFF5A),
    (0xFF61, 0xFFEE),  # half-width katakana and hangul become their usual full-width forms
)
_SPACES = "\u00a0" + "".join(map(chr, range(0x2000, 0x200B))) + "\u202f\u205f\u3000"
_DROP = "\u00ad\u200b\u2060\ufeff"  # soft hyphen, zero-width space, word joiner, BOM


def _build_table() -> dict[int, str]:
    table: dict[int, str] = {}
    for lo, hi in _NFKC_SAFE_RANGES:
        for cp in range(lo, hi + 1):
            mapped = unicodedata.normalize("NFKC", chr(cp))
            if mapped != chr(cp):
                table[cp] = mapped
    table.update({ord(k): v for k, v in _LIGATURES.items()})
    table.update({ord(c): " " for c in _SPACES})
    table.update({ord(c): "" for c in _DROP})
    table.update({0x2010: "-", 0x2011: "-"})
    for cp in list(range(0x00, 0x20)) + list(range(0x7F, 0xA0)):
        if chr(cp) not in "\n\t":
            table[cp] = ""
    # Line-like controls become line breaks rather than vanishing (pdfminer ends pages with \f).
    table.update({ord("\r"): "\n", ord("\f"): "\n", ord("\v"): "\n", 0x2028: "\n", 0x2029: "\n\n"})
    return table


_TABLE = _build_table()
FUZZY_RATIO = 0.85

# A word may also break across a column or text-box boundary, which leaves a blank line.
_HYPHEN_BREAK = re.compile(r"(?<![\w-])([^\W\d_]+)-[ \t]*\n(?:[ \t]*\n)?[ \t]*([^\W_]\w*)")
_HYPHEN_COMPOUND = re.compile(r"\b([^\W\d_]+)-([^\W\d_]+)\b")
_WORD = re.compile(r"[^\W\d_]+")
_INNER_SPACE = re.compile(r"(?<=\S)[ \t]+")
_MANY_BLANK = re.compile(r"\n{3,}")
_PAGE_NUMBER = re.compile(
    r"^[-–—\s]*(?:page\s+)?\d{1,4}(?:\s*(?:/|of)\s*\d{1,4})?[-–—\s]*$", re.IGNORECASE
)
_COMPOUND_TAIL_BREAK = re.compile(r"(?<=-)([^\W\d_]+)-[ \t]*\n(?:[ \t]*\n)?[ \t]*(?=[^\W\d_])")


def normalise_unicode(text: str) -> str:
    """Spell out ligatures, map presentation forms and odd spaces, drop control characters, NFC."""
    return unicodedata.normalize("NFC", text.replace("\r\n", "\n").translate(_TABLE))


def _join_hyphenated(text: str) -> str:
    if "-" not in text:
        return text
    compounds = {m.group(0).lower() for m in _HYPHEN_COMPOUND.finditer(text)}
    words = {m.group(0).lower() for m in _WORD.finditer(text)}

    def repl(m: re.Match[str]) -> str:
        left, right = m.group(1), m.group(2)
        if m.group(0).count("\n") > 1 and not right[0].islower():
            return m.group(0)  # across a blank line, a capital starts a new paragraph
        keep = (
            right[0].isupper()
            or right[0].isdigit()
            or (f"{left}-{right}".lower() in compounds and (left + right).lower() not in words)
        )
        return f"{left}-{right}" if keep else left + right

    # A break after the tail of a compound ("state-of-the-\nart") keeps its hyphen.
    text = _COMPOUND_TAIL_BREAK.sub(r"\1-", text)
    return _HYPHEN_BREAK.sub(repl, text)


def clean_page_text(text: str, *, drop_page_numbers: bool = True) -> str:
    """Clean one page of extracted text (see the module docstring for the rules)."""
    text = normalise_unicode(text)
    text = _join_hyphenated(text)
    lines = []
    for line in text.split("\n"):
        line = _INNER_SPACE.sub(" ", line).rstrip()
        if drop_page_numbers and _PAGE_NUMBER.match(line):
            continue
        lines.append(line)
    return _MANY_BLANK.sub("\n\n", "\n".join(lines)).strip("\n")


def _header_key(line: str) -> str:
    return "".join(ch for ch in line if ch.isalpha())


def _zone(lines: list[str], size: int) -> list[int]:
    # Lines without letters ("4.", "12") do not take a place: pdfminer may put stray list
    # numbers before the running header.
    filled = [i for i, line in enumerate(lines) if any(ch.isalpha() for ch in line)]
    return sorted(set(filled[:size] + filled[-size:]))


def strip_running_headers(
    pages: list[str], *, zone: int = 3, min_pages: int = 4, share: float = 0.5
) -> list[str]:
    """Remove lines repeated at the top or bottom of at least half of the pages."""
    if len(pages) < min_pages:
        return list(pages)
    split = [page.split("\n") for page in pages]
    counts: Counter[str] = Counter()
    for lines in split:
        keys = {_header_key(lines[i]) for i in _zone(lines, zone) if len(lines[i]) <= 200}
        counts.update(k for k in keys if len(k) >= 3)
    needed = max(2, math.ceil(len(pages) * share))
    frequent = {k for k, n in counts.items() if n >= needed}
    if not frequent:
        return list(pages)

    def is_header(line: str) -> bool:
        key = _header_key(line)
        if key in frequent:
            return True
        # OCR'd running heads vary by a letter or two ("VICKSBUEG"); long keys may differ a bit.
        return len(key) >= 8 and any(
            difflib.SequenceMatcher(None, key, f).ratio() >= FUZZY_RATIO
            for f in frequent
            if len(f) >= 8
        )

    out = []
    for lines in split:
        drop = {i for i in _zone(lines, zone) if is_header(lines[i])}
        kept = "\n".join(line for i, line in enumerate(lines) if i not in drop)
        out.append(_MANY_BLANK.sub("\n\n", kept).strip("\n"))
    return out
