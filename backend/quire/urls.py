"""The API's addresses of a document's original and of a page's text: one scheme, used by the
API's responses, the MCP server's links and the web app (through the API)."""

from __future__ import annotations


def original(document_id: int, kind: str, page: int) -> str | None:
    """The stored original; PDF viewers honour ``#page=N``. None for the reader's note, which
    has no file of its own (its page is where it leads)."""
    if kind == "note":
        return None
    url = f"/api/documents/{document_id}/file"
    return f"{url}#page={page}" if kind == "pdf" else url


def page_view(document_id: int, page: int) -> str:
    """The page's text with its chunks (the source viewer)."""
    return f"/api/documents/{document_id}/pages/{page}"


#: A quoted passage up to this many words is the whole text directive; a longer one is named
#: by its first and last ``FRAGMENT_EDGE_WORDS`` words (``textStart,textEnd``).
FRAGMENT_WHOLE_WORDS = 10
FRAGMENT_EDGE_WORDS = 5
#: The same for text written without spaces (Chinese, Japanese), in characters.
FRAGMENT_WHOLE_CHARS = 40
FRAGMENT_EDGE_CHARS = 12


def text_fragment(url: str, passage: str) -> str:
    """``url`` with a text fragment that scrolls to and highlights ``passage`` on the live page
    (WICG Text Fragments: ``#:~:text=textStart[,textEnd]``). Each term is percent-encoded, and
    so are the ``-``, ``,`` and ``&`` the directive's syntax uses; a long passage is named by
    its first and last words, as browsers' "Copy link to highlight" does. A fragment the URL
    already has is replaced (the page's own anchor would not scroll to the passage anyway)."""
    from urllib.parse import quote

    words = passage.split()
    if not words:
        return url
    if len(words) == 1 and len(words[0]) > FRAGMENT_WHOLE_CHARS:  # no spaces: by characters
        text = words[0]
        terms = [text[:FRAGMENT_EDGE_CHARS], text[-FRAGMENT_EDGE_CHARS:]]
    elif len(words) > FRAGMENT_WHOLE_WORDS:
        terms = [" ".join(words[:FRAGMENT_EDGE_WORDS]), " ".join(words[-FRAGMENT_EDGE_WORDS:])]
    else:
        terms = [" ".join(words)]
    encoded = [quote(term, safe="").replace("-", "%2D") for term in terms]
    return f"{url.split('#', 1)[0]}#:~:text={','.join(encoded)}"
