"""Structure a PDF declares about itself: the outline (bookmarks) as heading paths, and the
printed page numbers (/PageLabels).

Each outline entry points at a page (and often a height on it). Walking the entries in page
order gives the heading path in effect anywhere in the book: "Scale-free networks > Generating
BA graphs". A page's heading path is the one that covers most of it; where an entry starts on
a page, the page remembers the offset in its text where the heading's title is found (so that
chunks before it keep the previous section). The outline is read defensively: entries that
point at missing pages are dropped, a cyclic or absurdly long outline is cut, and any damage
leaves the document with physical page numbers only and a notice, never a failed ingest.

    outline, notice = read_outline(doc, pages)
    pages = apply_outline(pages, outline)  # on the cleaned pages (extract_file does)
    labels, notice = read_page_labels(doc, len(pages))  # ["i", "ii", "1", ...] or None

Page labels are read by hand rather than through pdfminer's ``get_page_labels``, which
recurses into cyclic trees, asserts on a roman or letter numbering from 0, and numbers letter
pages "aa, ab" where the PDF reference says "aa, bb". Damage of any kind (a tree that loops,
keys out of order or not numbers, a numbering below 1, a style that does not exist) drops all
labels with a notice: a wrong printed number is worse than the physical one.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from dataclasses import replace
from typing import Any

from pdfminer.pdfdocument import PDFDocument
from pdfminer.pdfpage import PDFPage
from pdfminer.pdftypes import PDFObjRef, resolve1
from pdfminer.psparser import PSLiteral
from pdfminer.utils import decode_text, format_int_roman

from quire.formats.types import OutlineEntry
from quire.storage.records import Page

log = logging.getLogger(__name__)

MAX_ENTRIES = 5000
MAX_DEPTH = 12
MAX_LABEL_NODES = 10_000  # nodes of the /PageLabels number tree read at most
MAX_LABEL = 64  # characters of a label kept (a prefix may be anything)
PATH_SEPARATOR = " > "
#: A heading found this early in a page's text starts the page (the running head before it),
#: unless the outline says it stands below the top of the page.
TOP_CHARS = 200
#: What may stand before a heading's title on its line: a section number, "Chapter 4".
_LINE_START = r"(?:(?:chapter|section|appendix|part)[ \t]+)?(?:(?:\d+|[a-z])(?:\.\d+)*\.?[ \t]+)?"


def read_outline(doc: PDFDocument, pages: list[PDFPage]) -> tuple[list[OutlineEntry], str | None]:
    """The outline's entries that point at a page of ``pages``, in outline order, and a notice
    when part of it could not be used."""
    numbers: dict[Any, int] = {page.pageid: n for n, page in enumerate(pages, start=1)}
    try:
        root = resolve1(doc.catalog.get("Outlines"))
    except Exception:  # noqa: BLE001 - a broken catalog is no outline
        return [], "the PDF's outline cannot be read; pages are cited by number"
    if not isinstance(root, dict) or "First" not in root:
        return [], None
    entries: list[OutlineEntry] = []
    dropped = 0
    seen: set[int] = set()
    truncated = False
    # (node, level) pairs, depth first; ``seen`` breaks cycles through First/Next.
    stack: list[tuple[Any, int]] = [(root.get("First"), 1)]
    while stack:
        ref, level = stack.pop()
        while ref is not None:
            key = ref.objid if isinstance(ref, PDFObjRef) else id(ref)
            if key in seen or len(seen) >= MAX_ENTRIES or level > MAX_DEPTH:
                truncated = truncated or key in seen or len(seen) >= MAX_ENTRIES
                break
            seen.add(key)
            try:
                node = resolve1(ref)
            except Exception:  # noqa: BLE001
                break
            if not isinstance(node, dict):
                break
            title = _title(node.get("Title"))
            page, top = _target(doc, node, numbers)
            if title and page is not None:
                height, foot = _page_height(pages[page - 1])
                top = None if top is None else top - foot
                entries.append(OutlineEntry(level, title, page, top, height))
            elif title:
                dropped += 1
            following = node.get("Next")
            if node.get("First") is not None:
                stack.append((following, level))
                stack.append((node.get("First"), level + 1))
                break
            ref = following
    notice = None
    if truncated or dropped:
        parts = []
        if dropped:
            parts.append(f"{dropped} outline entries point at no page of the file")
        if truncated:
            parts.append("the outline loops back on itself or is too long, so it was cut")
        notice = "; ".join(parts)
        log.info("outline: %s", notice)
    return entries, notice


def _page_height(page: PDFPage) -> tuple[float | None, float]:
    """The page's height and the height of its foot (where its media box starts)."""
    try:
        x0, y0, x1, y1 = (float(v) for v in page.mediabox)
    except (TypeError, ValueError):
        return None, 0.0
    return abs(y1 - y0), min(y0, y1)


def _title(value: object) -> str:
    try:
        value = resolve1(value)
    except Exception:  # noqa: BLE001
        return ""
    if isinstance(value, bytes):
        value = decode_text(value)
    if not isinstance(value, str):
        return ""
    return " ".join("".join(c for c in value if c.isprintable()).split())[:300]


def _target(
    doc: PDFDocument, node: dict[str, Any], numbers: dict[Any, int]
) -> tuple[int | None, float | None]:
    """The page number (and height) an outline node points at, through /Dest or a GoTo."""
    try:
        dest = node.get("Dest")
        if dest is None:
            action = resolve1(node.get("A"))
            if isinstance(action, dict) and _name(action.get("S")) == "GoTo":
                dest = action.get("D")
        dest = resolve1(dest)
        if isinstance(dest, bytes | str | PSLiteral):
            dest = resolve1(doc.get_dest(dest.name if isinstance(dest, PSLiteral) else dest))
        if isinstance(dest, dict):
            dest = resolve1(dest.get("D"))
        if not isinstance(dest, list) or not dest:
            return None, None
        page_ref = dest[0]
        page = numbers.get(page_ref.objid) if isinstance(page_ref, PDFObjRef) else None
        if page is None and isinstance(page_ref, int) and 0 <= page_ref < len(numbers):
            page = page_ref + 1  # a remote-style destination by page index
        top = None
        if len(dest) >= 4 and _name(dest[1]) == "XYZ" and isinstance(dest[3], int | float):
            top = float(dest[3])
        return page, top
    except Exception:  # noqa: BLE001 - a broken destination only loses this entry
        return None, None


def _name(value: object) -> str | None:
    value = resolve1(value)
    if not isinstance(value, PSLiteral):
        return None
    return value.name.decode("latin-1") if isinstance(value.name, bytes) else str(value.name)


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _offset(page_text: str, title: str, below_the_top: bool = False) -> int:
    """Where ``title`` starts in the page's text (0 when it cannot be found: assume the top).

    A title that starts a line (after a section number: "4.6 Generating BA graphs") is taken
    over one inside a sentence. When the heading is known to stand below the top of the page
    (``below_the_top``), a match in the page's first line is its running head, and the next is
    taken. The search runs over the folded text (NFKC, casefold: "…" and "ß" grow), with each
    folded character mapped back to the original character it came from."""
    words = [re.escape(w) for w in _fold(title).split()]
    if not words:
        return 0
    folded: list[str] = []
    origin: list[int] = []
    for i, char in enumerate(page_text):
        piece = unicodedata.normalize("NFKC", char).casefold()
        folded.append(piece)
        origin.extend([i] * len(piece))
    text = "".join(folded)
    body = r"\s+".join(words)
    # Where the line starts (its section number with it), past any indent.
    starts = [m.end(1) for m in re.finditer(r"(?:^|(?<=\n))([ \t]*)" + _LINE_START + body, text)]
    if below_the_top:
        first_line = text.lstrip().find("\n") + len(text) - len(text.lstrip())
        starts = [s for s in starts if s > first_line] or starts
    if starts:
        return origin[starts[0]]
    m = re.search(body, text)
    return origin[m.start()] if m else 0


def apply_outline(pages: list[Page], outline: list[OutlineEntry]) -> list[Page]:
    """The pages with heading paths from the outline (pages keep theirs when it is empty).

    ``meta["headings"]`` of a page lists ``[offset, path]`` where a section starts on it (and
    ``meta["heading_before"]`` the path above the first, when text comes before it); the
    page's own ``heading_path`` is the section covering most of its text. The chunker gives
    each chunk the path in effect where it starts.
    """
    if not outline:
        return pages
    by_page: dict[int, list[OutlineEntry]] = {}
    for entry in outline:
        by_page.setdefault(entry.page, []).append(entry)
    # Paths are built in outline order (the logical order); where each starts on its page is
    # found in the page's text.
    stack: list[str] = []
    out = []
    for page in pages:
        previous = _path(stack)  # the path in effect at the top of this page
        starts: list[list[Any]] = []
        for entry in by_page.get(page.number, []):
            del stack[entry.level - 1 :]
            stack.extend([""] * (entry.level - 1 - len(stack)))
            stack.append(entry.title)
            offset = _offset(page.text, entry.title, entry.below_the_top)
            above = page.text[:offset]
            # Only a running head above it: the section starts the page. Below the top of the
            # page, one line of text above is the running head, more is the section before.
            top = offset <= TOP_CHARS and (
                not entry.below_the_top or len([ln for ln in above.split("\n") if ln.strip()]) <= 1
            )
            starts.append([0 if top else offset, _path(stack)])
        current = _path(stack)
        if not starts:
            path = current if stack else page.heading_path
            out.append(replace(page, heading_path=path) if path != page.heading_path else page)
            continue
        starts.sort(key=lambda s: s[0])
        before = previous
        meta: dict[str, Any] = {**page.meta, "headings": starts}
        if starts[0][0] > 0:
            meta["heading_before"] = before
        out.append(replace(page, heading_path=_covering(page, starts, before), meta=meta))
    return out


def _path(stack: list[str]) -> str:
    return PATH_SEPARATOR.join(t for t in stack if t)


def _covering(page: Page, starts: list[list[Any]], before: str) -> str:
    """The heading path over the largest share of the page's text."""
    spans = []
    if starts[0][0] > 0:
        spans.append((starts[0][0], before))
    for i, (offset, path) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(page.text)
        spans.append((end - offset, path))
    return max(spans, key=lambda s: s[0])[1]


class _BadLabels(Exception):
    """The /PageLabels tree cannot be trusted."""


def read_page_labels(doc: PDFDocument, count: int) -> tuple[list[str | None] | None, str | None]:
    """The printed label of each of the ``count`` pages (None for a page whose range gives
    none), or None when the PDF declares no labels; and a notice when they were unusable."""
    try:
        root = resolve1(doc.catalog.get("PageLabels"))
    except Exception:  # noqa: BLE001
        root = {}
    if root is None:
        return None, None
    try:
        ranges = _label_ranges(root)
        labels: list[str | None] = [None] * count
        for i, (start, spec) in enumerate(ranges):
            end = ranges[i + 1][0] if i + 1 < len(ranges) else count
            style, prefix, first = spec
            for n, index in enumerate(range(start, min(end, count))):
                label = (prefix + _numeral(first + n, style))[:MAX_LABEL]
                labels[index] = label or None
    except _BadLabels as exc:
        notice = f"the PDF's page labels are damaged ({exc}); pages are cited by number"
        log.info("page labels: %s", notice)
        return None, notice
    return labels, None


def _label_ranges(root: object) -> list[tuple[int, tuple[str | None, str, int]]]:
    """The (first page index, (style, prefix, first number)) of each range, in page order."""
    if not isinstance(root, dict):
        raise _BadLabels("not a number tree")
    nums: list[Any] = []
    seen: set[int] = set()
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, PDFObjRef):
            if node.objid in seen:
                raise _BadLabels("the tree loops back on itself")
            seen.add(node.objid)
        if len(seen) > MAX_LABEL_NODES:
            raise _BadLabels("the tree is too large")
        try:
            node = resolve1(node)
        except Exception as exc:  # noqa: BLE001
            raise _BadLabels("a node cannot be read") from exc
        if not isinstance(node, dict):
            raise _BadLabels("a node is not a dictionary")
        leaf = resolve1(node.get("Nums"))
        if leaf is not None:
            if not isinstance(leaf, list) or len(leaf) % 2:
                raise _BadLabels("/Nums is not a list of pairs")
            nums.extend(leaf)
        kids = resolve1(node.get("Kids"))
        if kids is not None:
            if not isinstance(kids, list):
                raise _BadLabels("/Kids is not a list")
            stack.extend(reversed(kids))
    ranges = []
    for key, value in zip(nums[::2], nums[1::2], strict=True):
        key = resolve1(key)
        if not isinstance(key, int) or isinstance(key, bool) or key < 0:
            raise _BadLabels(f"a page index is {key!r}")
        ranges.append((key, _label_spec(value)))
    if not ranges:
        raise _BadLabels("no ranges")
    if any(a[0] >= b[0] for a, b in zip(ranges, ranges[1:], strict=False)):
        raise _BadLabels("the ranges are out of order")
    if ranges[0][0] != 0:
        ranges.insert(0, (0, (None, "", 1)))  # pages before the first range have no label
    return ranges


def _label_spec(value: object) -> tuple[str | None, str, int]:
    try:
        spec = resolve1(value)
    except Exception as exc:  # noqa: BLE001
        raise _BadLabels("a range cannot be read") from exc
    if not isinstance(spec, dict):
        raise _BadLabels("a range is not a dictionary")
    style = spec.get("S")
    name = _name(style) if style is not None else None
    if style is not None and name not in ("D", "R", "r", "A", "a"):
        raise _BadLabels(f"unknown numbering style {style!r}")
    prefix = resolve1(spec.get("P", b""))
    if isinstance(prefix, bytes):
        prefix = decode_text(prefix)
    if not isinstance(prefix, str):
        raise _BadLabels("a prefix is not text")
    first = resolve1(spec.get("St", 1))
    if not isinstance(first, int) or isinstance(first, bool) or first < 1:
        raise _BadLabels(f"a range starts at {first!r}")
    return name, "".join(c for c in prefix if c.isprintable()), first


def _numeral(value: int, style: str | None) -> str:
    """``value`` in a /PageLabels numbering style: 4 → "4", "IV", "iv", "D", "d"; 27 → "AA"."""
    if style is None:
        return ""
    if style == "D":
        return str(value)
    if style in ("R", "r"):
        if value >= 4000:
            raise _BadLabels(f"{value} has no roman numeral")
        roman = format_int_roman(value)
        return roman.upper() if style == "R" else roman
    letter = chr(ord("a") + (value - 1) % 26) * ((value - 1) // 26 + 1)
    if len(letter) > MAX_LABEL:
        raise _BadLabels(f"{value} is too large for a letter numbering")
    return letter.upper() if style == "A" else letter
