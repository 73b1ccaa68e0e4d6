"""A note's marker in HTML (an EPUB chapter, a saved web page): the "¹" or "[1]" that points
from a heading or a sentence to its footnote. A heading is cited by its text, so its marker is
left out: "Chapter 1<sup><a href="#fn2">2</a></sup>" is "Chapter 1", not "Chapter 12". A
superscript that links nowhere is the heading's own ("E = mc<sup>2</sup>" stays "E = mc2").

    is_note_marker("sup", {}, "2", links=True, superscript=True)                 # True
    is_note_marker("a", {"epub:type": "noteref", "href": "#n1"}, "1", links=True,
                   superscript=False)                                           # True
    is_note_marker("sup", {}, "2", links=False, superscript=True)                # False
"""

from __future__ import annotations

from collections.abc import Mapping

#: A marker's text is short ("1", "12", "*", "[3]"); a longer link in a superscript is text.
MAX_MARKER = 4


def is_note_marker(
    name: str,
    attrs: Mapping[str, str | list[str]],
    text: str,
    *,
    links: bool,
    superscript: bool,
) -> bool:
    """Whether an element is a note's marker: marked as one (``epub:type="noteref"``,
    ``role="doc-noteref"``), a superscript holding a link, or a link whose short text is set
    as a superscript. ``links``: the element is or holds a link; ``superscript``: it is or
    holds a ``<sup>``."""
    kinds = " ".join(
        " ".join(v) if isinstance(v, list) else v
        for k, v in attrs.items()
        if k in ("epub:type", "role")
    )
    if "noteref" in kinds.lower():
        return True
    if name == "sup":
        return links
    return name == "a" and "href" in attrs and superscript and len(text.strip()) <= MAX_MARKER
